"""The staleness hash of cached runs (essence/sweep/signatures.py): ``code_version(method)`` is
``<source hash of the method's module and its essence imports>:<hash of the shared core and the CPU code paths>``.

On a copy of the package: editing a method's module, a module it imports or a shared-core file changes the
``code_version`` of the runs it makes; editing a module nothing imports, or changing nothing, does not; the pinned CPU
code paths enter too. Then the caches that keep it: a run cached under another code version is recomputed, by
``essence.lessons.selectors.selector_runs`` (``code``) and by the sweep (``signature.method_source``), on a tiny
generated dataset (essence.data.synthetic) at small k.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from essence.sweep import signatures
from essence.sweep.signatures import code_version, module_version

PACKAGE = Path(signatures.__file__).resolve().parents[1]
HEX16 = r"[0-9a-f]{16}"


@pytest.fixture
def fresh_versions():
    """``code_version`` is computed once per process (an lru_cache): cleared before and after a test that edits."""
    code_version.cache_clear()
    yield code_version
    code_version.cache_clear()


@pytest.fixture
def package_copy(tmp_path, monkeypatch, fresh_versions):
    """A copy of the essence package that signatures reads instead of the real one; ``edit(rel)`` appends a comment."""
    copy = tmp_path / "essence"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    monkeypatch.setattr(signatures, "_PACKAGE", copy)

    def edit(rel: str) -> None:
        f = copy / rel
        f.write_text(f.read_text() + "\n# edited\n")
        fresh_versions.cache_clear()

    return edit


def _all(methods=("random", "kmeans", "auto")) -> dict:
    return {m: code_version(m) for m in methods}


def test_code_version_is_the_methods_module_version_in_two_hashes(fresh_versions):
    from essence.methods import get_method

    for m in ("random", "auto", "irt"):
        v = code_version(m)
        assert re.fullmatch(f"{HEX16}:{HEX16}", v), v
        assert v == module_version(get_method(m).__module__)
    assert code_version("random") != code_version("auto")
    assert code_version("no_such_method").startswith("no_such_method:unavailable:")


def test_an_unchanged_copy_gives_the_same_versions(package_copy):
    real = {}
    signatures._PACKAGE, saved = PACKAGE, signatures._PACKAGE
    try:
        real = _all()
    finally:
        signatures._PACKAGE = saved
        code_version.cache_clear()
    assert _all() == real  # the hash reads files' bytes only: where the package lives does not enter


def test_editing_a_method_changes_its_version_only(package_copy):
    before = _all()
    package_copy("methods/random.py")
    after = _all()
    assert after["random"] != before["random"]
    assert after["random"].split(":")[1] == before["random"].split(":")[1]  # the core part is the same
    assert after["kmeans"] == before["kmeans"]


def test_editing_a_module_a_method_imports_changes_its_version(package_copy):
    before = _all()
    package_copy("search/swap.py")  # auto's swap search: auto imports it, random does not
    after = _all()
    assert after["auto"] != before["auto"] and after["random"] == before["random"]


def test_editing_the_shared_core_changes_every_version(package_copy):
    before = _all()
    package_copy("reconstructors/intervals.py")
    after = _all()
    for m in before:
        assert after[m] != before[m], m
        assert after[m].split(":")[0] == before[m].split(":")[0], m  # the method's own part is the same


def test_editing_a_module_nothing_imports_changes_nothing(package_copy):
    before = _all()
    package_copy("lessons/cards.py")
    assert _all() == before


def test_the_cpu_code_paths_enter_the_version(fresh_versions, monkeypatch):
    from essence.data.pinning import MARK

    monkeypatch.setenv(MARK, "pinned-level-A")
    a = code_version("random")
    fresh_versions.cache_clear()
    monkeypatch.setenv(MARK, "pinned-level-B")
    assert code_version("random") != a


def test_the_version_is_computed_once_per_process(package_copy):
    """A process that edits the code after its first call keeps the first value (what a notebook kernel sees);
    the fixtures above clear the cache to see an edit."""
    before = code_version("random")
    (signatures._PACKAGE / "methods" / "random.py").write_text("# replaced\n")
    assert code_version("random") == before
    code_version.cache_clear()
    assert code_version("random") != before


# ----------------------------------------------------------------------------------------------
# the caches that read it
# ----------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def tiny():
    from essence.data.synthetic import generate_mirt

    return generate_mirt(120, 30, dims=2, seed=0)


def test_selector_runs_recompute_a_run_cached_under_another_code_version(tiny, tmp_path, monkeypatch):
    from essence.lessons import selectors

    fits = []
    make = selectors.make_method

    def counting(name, *a, **kw):
        fits.append(name)
        return make(name, *a, **kw)

    monkeypatch.setattr(selectors, "make_method", counting)
    first = selectors.selector_runs(tiny, ["random_mean"], k=4, seeds=(0,), cache_dir=tmp_path)
    assert fits == ["random", "random_mean"]
    files = sorted(tmp_path.glob("*.json"))
    assert len(files) == 2 and {json.loads(f.read_text())["code"] for f in files} == {
        code_version("random"), code_version("random_mean")}
    fits.clear()
    again = selectors.selector_runs(tiny, ["random_mean"], k=4, seeds=(0,), cache_dir=tmp_path)
    assert fits == []  # same code: read from the cache
    assert again["rmse"].tolist() == first["rmse"].tolist()
    monkeypatch.setattr(selectors, "code_version", lambda name: f"other-code-{name}")
    redo = selectors.selector_runs(tiny, ["random_mean"], k=4, seeds=(0,), cache_dir=tmp_path)
    assert fits == ["random", "random_mean"]  # another code version: both recomputed
    np.testing.assert_allclose(redo["rmse"], first["rmse"])  # the same seed, the same numbers
    assert {json.loads(f.read_text())["code"] for f in files} == {"other-code-random", "other-code-random_mean"}


def test_the_sweep_recomputes_a_run_cached_by_other_code_and_reuses_one_of_another_core(tiny, tmp_path, capsys):
    from essence.sweep import run_path, run_sweep

    data = tmp_path / "tiny.npz"
    np.savez(data, responses=tiny.responses, models=tiny.models, items=tiny.items)
    out = tmp_path / "sw"

    def sweep():
        return run_sweep([str(data)], ["random"], [4], [0], out, jobs=1, progress=False, update=True)

    sweep()
    path = run_path(out, "tiny", "random", 4, 0)
    rec = json.loads(path.read_text())
    assert rec["signature"]["method_source"] == code_version("random").split(":")[0]
    capsys.readouterr()
    rec["signature"]["method_source"] = "0" * 16  # a run made by another version of the method's code
    rec["seconds"] = -1.0
    path.write_text(json.dumps(rec))
    df = sweep()
    assert df.attrs["sweep"]["computed"] == 1 and "stale" in capsys.readouterr().err
    rec = json.loads(path.read_text())
    assert rec["signature"]["method_source"] == code_version("random").split(":")[0] and rec["seconds"] >= 0
    rec["core_source"] = "0" * 16  # another shared core: reused, with a note
    path.write_text(json.dumps(rec))
    df = sweep()
    assert df.attrs["sweep"]["cached"] == 1 and df.attrs["sweep"]["computed"] == 0
    assert "another version of the shared core" in capsys.readouterr().err
