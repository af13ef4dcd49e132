"""benchmarks/ceiling.py: the GA scored on training, validation and (oracle) test models."""

from __future__ import annotations

import pytest

from script_loader import load_script


def _module():
    return load_script("benchmarks/ceiling.py")


def test_each_selection_is_best_on_the_models_it_was_chosen_on(small):
    mod = _module()
    rows = {r["fitness"]: r for r in mod.ceiling_rows(small, 8, seed=0, alpha=1.0, population=40, generations=40)}
    assert list(rows) == ["random", "train", "val", "oracle"]
    # a subset chosen on a model set beats the random subsets' mean on that set
    assert rows["train"]["train"] < rows["random"]["train"]
    assert rows["val"]["val"] < rows["random"]["val"]
    assert rows["oracle"]["test"] < rows["random"]["test"]
    # and the oracle, tuned to the test models, is the best of the three there
    assert rows["oracle"]["test"] <= min(rows["train"]["test"], rows["val"]["test"])


def test_k_not_below_the_items_is_refused(small):
    with pytest.raises(ValueError, match="must be smaller"):
        _module().ceiling_rows(small, small.n_items, seed=0, alpha=1.0)


def test_learning_curve_rows_use_nested_growing_training_sets(small):
    mod = _module()
    rows = mod.learning_curve_rows(small, 6, seed=0, alpha=1.0, fractions=[0.5, 1.0], population=30, generations=20)
    assert [r["fraction"] for r in rows] == [0.5, 1.0]
    n_train = small.n_models - sum(len(ix) for ix in mod.split_models(small, seed=0)[1:])
    assert rows[1]["n_train"] == n_train
    assert rows[0]["n_train"] == max(8, round(0.5 * n_train))
    for r in rows:
        # in sample the chosen subset fits its own models better than it predicts new ones, and beats random
        assert r["train"] < r["test"]
        assert r["test"] < r["random"]


def test_learning_curve_rows_refuse_bad_fractions(small):
    with pytest.raises(ValueError, match=r"must each be in \(0, 1\]"):
        _module().learning_curve_rows(small, 6, seed=0, alpha=1.0, fractions=[0.0, 1.0])


def test_extrapolate_recovers_the_limit_of_a_plus_b_over_sqrt_n():
    mod = _module()
    n = [100, 400, 1600]
    assert mod.extrapolate(n, [3.0 + 20 / n_ ** 0.5 for n_ in n]) == pytest.approx(3.0)
    with pytest.raises(ValueError, match="two distinct"):
        mod.extrapolate([100, 100], [1.0, 2.0])


def test_bad_train_fractions_exit_2(capsys):
    with pytest.raises(SystemExit) as e:
        _module().main(["--train-fractions", "0.5,2"])
    assert e.value.code == 2
    assert "--train-fractions" in capsys.readouterr().err
