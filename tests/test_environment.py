"""Project set-up: pins agree across pyproject.toml, environment.yml and the constraints; CI runs `make test`."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def _pyproject():
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def _pins(reqs):
    out = {}
    for r in reqs:
        m = re.fullmatch(r"([A-Za-z0-9_.\-\[\]]+)==([^\s;]+)", r.strip())
        assert m, f"unpinned requirement {r!r}: every dependency must be pinned with =="
        out[m.group(1).lower().replace("_", "-")] = m.group(2)
    return out


def test_every_dependency_pinned_and_torch_exact():
    p = _pyproject()
    pins = _pins(p["dependencies"] + p["optional-dependencies"]["test"])
    assert pins["torch"] == "2.13.0"
    assert p["requires-python"] == "==3.11.*"
    assert p["scripts"]["essence"] == "essence.cli:main"


def test_environment_yml_agrees_with_pyproject():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    deps = env["dependencies"]
    assert "python=3.11" in deps
    pip = next(d["pip"] for d in deps if isinstance(d, dict) and "pip" in d)
    p = _pyproject()
    assert _pins(pip) == _pins(p["dependencies"] + p["optional-dependencies"]["test"])
    # the --no-deps package is named with its pin in the file's instructions
    nodeps = [ln for ln in (ROOT / "requirements/nodeps.txt").read_text().splitlines()
              if ln and not ln.startswith("#")]
    for ln in nodeps:
        assert ln in (ROOT / "environment.yml").read_text()


def test_constraints_agree_with_direct_pins():
    cons = {}
    for ln in (ROOT / "requirements/constraints.txt").read_text().splitlines():
        if "==" in ln:
            k, v = ln.split("==")
            cons[k.lower().replace("_", "-")] = v.strip()
    p = _pyproject()
    for name, ver in _pins(p["dependencies"] + p["optional-dependencies"]["test"]).items():
        if name != "torch":  # torch is installed alone, first, from its own pin
            assert cons.get(name) == ver, f"{name}: pyproject {ver} vs constraints {cons.get(name)}"


def test_ci_runs_make_test_and_readme_names_both_commands():
    ci = (ROOT / ".ci/run").read_text()
    assert "make test" in ci
    readme = (ROOT / "README.md").read_text()
    assert "make test" in readme and "make reproduce" in readme


# The notebooks are committed executed now: tests/test_committed_notebooks.py checks their outputs.
