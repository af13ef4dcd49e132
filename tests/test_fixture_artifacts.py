"""Committed artifacts of the current schema load and estimate as recorded.

``tests/artifacts/current/`` holds one artifact of each kind (one benchmark with the default method, a suite, an
adaptive item bank), the answers of a handful of models on what each reads and the estimates the code gave them when
``scripts/make_fixture_artifacts.py`` wrote them (``MANIFEST.json``: how, the schema, the files' SHA-256). Today's code
must load each with ``essence.load`` and give the same estimates, intervals and flags (to 1e-6 pp) from those answers.

The answers are stored, so the check reads no shared data. A failure means an artifact or an estimate changed
meaning: fix the code, or, for a deliberate schema change, refresh the fixtures with the script (its docstring says
how) and review the estimates' diff; never refresh them to make this test pass. The older files of
``tests/test_saved_artifacts.py`` guard the other direction (artifacts of an earlier release keep loading).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from script_loader import load_script

import essence
from essence.artifact.adaptive import AdaptiveCompressed
from essence.artifact.compressed import Compressed
from essence.suite import SuiteCompressed

HERE = Path(__file__).resolve().parent / "artifacts" / "current"
MAKER = load_script("scripts/make_fixture_artifacts.py")
MANIFEST = json.loads((HERE / "MANIFEST.json").read_text())
KINDS = {"single": Compressed, "suite": SuiteCompressed, "adaptive": AdaptiveCompressed}
TOL = 1e-6  # pp
MAX_BYTES = 200_000


def assert_same_estimates(got: pd.DataFrame, want: pd.DataFrame, what: str = "") -> None:
    """Same columns, models and flags; every number within :data:`TOL`."""
    assert list(got.columns) == list(want.columns), what
    assert got["model"].astype(str).tolist() == want["model"].astype(str).tolist(), what
    for c in want.columns[1:]:
        if want[c].dtype == object or want[c].dtype == bool:
            assert got[c].astype(str).tolist() == want[c].astype(str).tolist(), f"{what}: column {c}"
        else:
            np.testing.assert_allclose(got[c].to_numpy(float), want[c].to_numpy(float), rtol=0, atol=TOL,
                                       err_msg=f"{what}: column {c}")


def _recorded(name: str) -> pd.DataFrame:
    return pd.read_csv(HERE / f"{name}.estimates.csv", dtype={"model": str})


@pytest.mark.parametrize("name", list(MAKER.FIXTURES))
def test_a_fixture_of_the_current_schema_loads_and_estimates_as_recorded(name):
    entry = MANIFEST[name]
    for file, digest in entry["sha256"].items():
        assert hashlib.sha256((HERE / file).read_bytes()).hexdigest() == digest, (
            f"{file} is not the file scripts/make_fixture_artifacts.py wrote; fixtures change only by rerunning it, "
            "deliberately (see its docstring)")
    art = essence.load(HERE / f"{name}.json")
    cls = KINDS[entry["kind"]]
    assert isinstance(art, cls) and (cls.SCHEMA, cls.SCHEMA_VERSION) == (entry["schema"], entry["schema_version"]), (
        f"{name}: the {entry['kind']} schema is now {cls.SCHEMA!r} v{cls.SCHEMA_VERSION}; a deliberate schema change "
        "refreshes the fixtures with scripts/make_fixture_artifacts.py --force")
    got = MAKER.estimate_from_files(art, [HERE / f for f in entry["answers"]])
    want = _recorded(name)
    assert want["model"].tolist() == entry["models"] and len(want) >= 5
    assert_same_estimates(got, want, name)


def test_the_fixtures_are_the_scripts_one_of_each_kind_and_small():
    assert list(MANIFEST) == list(MAKER.FIXTURES)
    assert sorted(e["kind"] for e in MANIFEST.values()) == sorted(KINDS)
    for name, (kind, call) in MAKER.FIXTURES.items():
        assert MANIFEST[name]["kind"] == kind and MANIFEST[name]["made_by"] == call, name
        for file in MANIFEST[name]["sha256"]:
            assert (HERE / file).stat().st_size < MAX_BYTES, file
    assert sorted(p.name for p in HERE.iterdir()) == sorted(["MANIFEST.json", *(
        f for e in MANIFEST.values() for f in e["sha256"])]), "a file under tests/artifacts/current/ the manifest lacks"


@pytest.mark.parametrize("name", list(MAKER.FIXTURES))
def test_the_check_fails_on_a_change_of_a_few_millionths(name):
    """The comparison can fail: the recorded table with one number moved by 2e-6 pp, or one flag or model changed,
    is not today's estimates."""
    want = _recorded(name)
    numeric = [c for c in want.columns[1:] if want[c].dtype.kind == "f"]
    for c in numeric[:3]:
        moved = want.copy()
        moved.loc[len(want) // 2, c] += 2e-6
        with pytest.raises(AssertionError):
            assert_same_estimates(want, moved)
    renamed = want.copy()
    renamed.loc[0, "model"] = "someone/else"
    with pytest.raises(AssertionError):
        assert_same_estimates(want, renamed)
    if "outside" in want:
        flipped = want.copy()
        flipped["outside"] = ~flipped["outside"]
        with pytest.raises(AssertionError):
            assert_same_estimates(want, flipped)


def test_an_artifact_changed_by_hand_estimates_otherwise(tmp_path):
    """Loading and estimating read the artifact's numbers: the adaptive fixture with its interval's z widened by 1 %
    gives other intervals than recorded (the estimates themselves unchanged)."""
    name = "arc_challenge-adaptive-k12"
    d = json.loads((HERE / f"{name}.json").read_text())
    d["calibration"]["z"] *= 1.01
    (tmp_path / "z.json").write_text(json.dumps(d))
    entry = MANIFEST[name]
    got = MAKER.estimate_from_files(essence.load(tmp_path / "z.json"), [HERE / f for f in entry["answers"]])
    want = _recorded(name)
    np.testing.assert_allclose(got["estimate"], want["estimate"], rtol=0, atol=TOL)
    with pytest.raises(AssertionError, match="column lower"):
        assert_same_estimates(got, want)
