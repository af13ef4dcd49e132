"""A damaged adaptive artifact (schema ``essence.adaptive``) is refused when it is loaded, with one clear error, in
Python (``essence.load``, ``AdaptiveCompressed.load``) and on the command line (exit 2, one line), as the damaged
single artifacts of tests/test_bad_input.py are.

Each case changes one field of the committed adaptive fixture (tests/artifacts/current/, see
tests/test_fixture_artifacts.py) in a copy, the calibration's fields included (unchecked, the estimate would later
crash or give an interval whose lower end lies above its upper end, or NaN).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

import essence
from essence.artifact.adaptive import AdaptiveCompressed
from essence.cli import main
from essence.data.errors import InputError

HERE = Path(__file__).resolve().parent / "artifacts" / "current"
NAME = "arc_challenge-adaptive-k12"
ANSWERS = HERE / f"{NAME}.answers.csv"
DAMAGED = "damaged adaptive artifact"


@pytest.fixture(scope="module")
def good() -> dict:
    d = json.loads((HERE / f"{NAME}.json").read_text())
    assert d["schema"] == "essence.adaptive" and d["k"] == 12 and len(d["calibration"]["s_in"]) == 13
    return d


def _set(*path, value):
    def change(d):
        obj = d
        for key in path[:-1]:
            obj = obj[key]
        obj[path[-1]] = value(d) if callable(value) else value
    return change


def _drop(*path):
    def change(d):
        obj = d
        for key in path[:-1]:
            obj = obj[key]
        del obj[path[-1]]
    return change


def _pop(*path):
    def change(d):
        obj = d
        for key in path:
            obj = obj[key]
        obj.pop()
    return change


REFUSED = [  # (label, change, what the one error line names)
    ("NaN discrimination", _set("bank", "a", 0, value=float("nan")), DAMAGED),
    ("negative discrimination", _set("bank", "a", 5, value=-1.0), DAMAGED),
    ("a and d of other lengths", _pop("bank", "a"), DAMAGED),
    ("a not numbers", _set("bank", "a", value="x"), DAMAGED),
    ("score map of 2 numbers", _set("bank", "score_map", value=[0.0, 100.0]), DAMAGED),
    ("one item fewer in the bank", lambda d: (d["bank"]["a"].pop(), d["bank"]["d"].pop()), "bank of 1171 items"),
    ("no bank", _drop("bank"), "missing field(s) bank"),
    ("no calibration", _drop("calibration"), "missing field(s) calibration"),
    ("an item twice", lambda d: d["items"].__setitem__(1, d["items"][0]), "repeated ids"),
    ("k as text", _set("k", value="12"), DAMAGED),
    ("k zero", _set("k", value=0), DAMAGED),
    ("k beyond the calibration", _set("k", value=13), "cover k = 13"),
    ("top_m zero", _set("params", "top_m", value=0), "top_m"),
    ("unknown rule", _set("params", "rule", value="magic"), "rule"),
    ("negative prior sd", _set("params", "prior_sd", value=-1.0), "prior_sd"),
    ("schema version 2", _set("schema_version", value=2), "schema version 2"),
    ("another schema", _set("schema", value="essence.nothing"), "not an essence artifact"),
    ("no z", _drop("calibration", "z"), DAMAGED),
    ("negative z", _set("calibration", "z", value=-1.645), DAMAGED),
    ("NaN z", _set("calibration", "z", value=float("nan")), DAMAGED),
    ("no s_out", _drop("calibration", "s_out"), DAMAGED),
    ("s_out one short", _pop("calibration", "s_out"), DAMAGED),
    ("NaN in s_in at k", _set("calibration", "s_in", 12, value=float("nan")), DAMAGED),
    ("ref_range of one number", _set("calibration", "ref_range", value=[0.0]), DAMAGED),
    ("level 1.5", _set("calibration", "level", value=1.5), DAMAGED),
    ("calibration a list", _set("calibration", value=[1, 2]), DAMAGED),
]


def _write(good: dict, change, folder: Path) -> Path:
    d = copy.deepcopy(good)
    change(d)
    path = folder / "bad.json"
    path.write_text(json.dumps(d))  # NaN written as NaN, as a hand edit could
    return path


@pytest.mark.parametrize("label,change,needle", REFUSED, ids=[c.values[0] if hasattr(c, "values") else c[0]
                                                              for c in REFUSED])
def test_a_damaged_adaptive_artifact_is_refused_on_load(good, tmp_path, label, change, needle):
    path = _write(good, change, tmp_path)
    with pytest.raises(InputError) as exc:
        essence.load(path)
    assert needle in str(exc.value), (needle, str(exc.value))
    assert str(path) in str(exc.value)  # names the file
    assert "Traceback" not in str(exc.value) and "np." not in str(exc.value)


def test_the_command_line_refuses_it_in_one_line_and_writes_nothing(good, tmp_path, capsys):
    bad = _write(good, _set("bank", "a", 0, value=-1.0), tmp_path)
    out = tmp_path / "est.csv"
    for args in (["estimate", bad, ANSWERS, "--out", out], ["evaluate", bad, ANSWERS]):
        rc = main([str(a) for a in args])
        err = capsys.readouterr().err.strip().splitlines()
        assert rc == 2 and len(err) == 1 and err[0].startswith("essence: error: "), (args, err)
        assert DAMAGED in err[0] and str(bad) in err[0]
    assert not out.exists()
    with pytest.raises(InputError, match=DAMAGED):
        AdaptiveCompressed.load(bad)


def test_the_undamaged_copy_loads(good, tmp_path):
    """The cases' base: the same copy, unchanged, loads and estimates (so every refusal above is the change's)."""
    art = essence.load(_write(good, lambda d: None, tmp_path))
    assert isinstance(art, AdaptiveCompressed) and art.k == 12
