"""The CI switch (tests/ci_switch.py): under ESSENCE_REQUIRE_RESOURCES=1 (.ci/run) a skip for a missing resource fails."""

from __future__ import annotations

from types import SimpleNamespace

from ci_switch import ENV, require_resources


def _report(reason: str, monkeypatch, switch: bool):
    monkeypatch.setenv(ENV, "1") if switch else monkeypatch.delenv(ENV, raising=False)
    rep = SimpleNamespace(skipped=True, outcome="skipped", longrepr=("t.py", 1, reason))
    require_resources(rep)
    return rep


def test_a_missing_resource_fails_only_under_the_switch(monkeypatch):
    missing = "lm_eval/pythia-14m logs not found (run `make data`)"
    assert _report(missing, monkeypatch, switch=False).outcome == "skipped"
    rep = _report(missing, monkeypatch, switch=True)
    assert rep.outcome == "failed" and "pythia-14m logs not found" in rep.longrepr
    assert _report("ESSENCE_NATIVE_CPU is set: on purpose", monkeypatch, switch=True).outcome == "skipped"


def test_ci_sets_the_switch():
    from pathlib import Path

    assert f"{ENV}=1 make test" in (Path(__file__).resolve().parents[1] / ".ci" / "run").read_text()
