"""A suite whose files name models differently: the suite code matches models by id, never by row.

Compressing (:func:`essence.suite.make_suite`): members with rows in another order give the same suite; models one
member names otherwise are dropped and counted (``Suite.dropped``); with fewer than 10 shared ids, one error that says
to check the names. Estimating (``SuiteCompressed.estimate``, one file per member): rows in another order give each
model its own estimate; files sharing no model are refused; a model missing from one file gets no estimate, and a
warning names it.

Data: the real MuSR and IFEval tables (429 models each, the same ids), and the committed suite fixture
(tests/artifacts/current/, with its 8 models' answers).
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import essence
from essence.data import from_arrays, load
from essence.data.errors import EssenceWarning, InputError
from essence.suite import make_suite

HERE = Path(__file__).resolve().parent / "artifacts" / "current"
NAME = "musr+ifeval-essence-k20"


def _renamed(r, rows, prefix="hf:"):
    """``r`` with the models at ``rows`` renamed ``prefix + id`` (another file's naming)."""
    models = r.models.astype(object).copy()
    models[rows] = [prefix + m for m in models[rows]]
    return from_arrays(r.responses, models.astype(str), r.items, r.target, r.texts, name=r.name)


@pytest.fixture(scope="module")
def pair():
    """The first 120 models of MuSR and IFEval (the same ids, in the same order)."""
    musr, ifeval = load("musr"), load("ifeval")
    assert (musr.models == ifeval.models).all()
    return musr.subset(models=np.arange(120)), ifeval.subset(models=np.arange(120))


# ----------------------------------------------------------------------------------------------
# compress: make_suite
# ----------------------------------------------------------------------------------------------
def test_rows_in_another_order_give_the_same_suite(pair):
    musr, ifeval = pair
    perm = np.random.default_rng(0).permutation(ifeval.n_models)
    a, b = make_suite([musr, ifeval]), make_suite([musr, ifeval.subset(models=perm)])
    assert (a.models == b.models).all()
    for x, y in zip(a.members, b.members):
        np.testing.assert_array_equal(x.responses, y.responses)
        np.testing.assert_array_equal(x.target, y.target)


def test_models_named_otherwise_are_dropped_and_counted_never_paired_by_row(pair):
    musr, ifeval = pair
    rows = np.arange(0, 120, 4)  # 30 of IFEval's models under other names
    suite = make_suite([musr, _renamed(ifeval, rows)])
    assert suite.n_models == 90 and suite.dropped == {"musr": 30, "ifeval": 30}
    kept = np.setdiff1d(np.arange(120), rows)
    assert suite.models.tolist() == musr.models[kept].tolist()
    for member, full in zip(suite.members, (musr, ifeval)):  # each kept model's own rows, from both files
        np.testing.assert_array_equal(member.responses, full.responses[kept])
    assert suite.outside[1].models.tolist() == ["hf:" + m for m in ifeval.models[rows]]


def test_a_member_naming_every_model_otherwise_is_one_clear_error(pair):
    musr, ifeval = pair
    with pytest.raises(InputError, match=r"only 0 model\(s\) have results on all of musr, ifeval.*name models the "
                                         r"same way"):
        make_suite([musr, _renamed(ifeval, np.arange(120))])
    with pytest.raises(InputError, match="only 9 model"):  # 9 shared ids are too few as well
        make_suite([musr, _renamed(ifeval, np.arange(9, 120))])


# ----------------------------------------------------------------------------------------------
# estimate: SuiteCompressed, one results file per member
# ----------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def fixture_suite():
    art = essence.load(HERE / f"{NAME}.json")
    answers = {n: pd.read_csv(HERE / f"{NAME}.{n}.answers.csv", dtype={"model": str}) for n in art.names}
    return art, answers


def _estimate(art, answers: dict, folder: Path):
    paths = []
    for n in art.names:
        answers[n].to_csv(folder / f"{n}.csv", index=False)
        paths.append(str(folder / f"{n}.csv"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = art.estimate(paths)
    return est, [w for w in caught if issubclass(w.category, EssenceWarning)]


def test_estimate_matches_each_model_by_id_whatever_the_row_order(fixture_suite, tmp_path):
    art, answers = fixture_suite
    base, _ = _estimate(art, dict(answers), tmp_path)
    shuffled = dict(answers, ifeval=answers["ifeval"].iloc[::-1].reset_index(drop=True))
    est, _ = _estimate(art, shuffled, tmp_path)
    assert est["model"].tolist() == base["model"].tolist()  # the first file's order
    pd.testing.assert_frame_equal(est, base)
    # the check can fail: the same rows paired by position give other IFEval estimates
    by_row = dict(answers, ifeval=shuffled["ifeval"].assign(model=answers["ifeval"]["model"]))
    wrong, _ = _estimate(art, by_row, tmp_path)
    assert not np.allclose(wrong["ifeval"], base["ifeval"])


def test_estimate_refuses_files_that_share_no_model(fixture_suite, tmp_path):
    art, answers = fixture_suite
    other = answers["ifeval"].assign(model="hf:" + answers["ifeval"]["model"])
    with pytest.raises(InputError, match="no model is in all 2 results files"):
        _estimate(art, dict(answers, ifeval=other), tmp_path)


def test_estimate_says_which_models_get_no_estimate(fixture_suite, tmp_path):
    art, answers = fixture_suite
    other = answers["ifeval"].copy()
    other.loc[[1, 5], "model"] = "hf:" + other.loc[[1, 5], "model"]
    est, caught = _estimate(art, dict(answers, ifeval=other), tmp_path)
    assert len(est) == 6 and answers["musr"]["model"][1] not in est["model"].tolist()
    said = " ".join(str(w.message) for w in caught)
    assert answers["musr"]["model"][1] in said or "hf:" + answers["musr"]["model"][1] in said, said
