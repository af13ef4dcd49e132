"""essence.lessons.cards: every registered method has a complete card; the table adds measured columns."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from essence.methods import METHODS, get_method
from essence.lessons.cards import CARD_FIELDS, CARDS, TIMINGS, card, cards_table
from essence.sweep import COLUMNS


@pytest.mark.parametrize("name", list(METHODS))
def test_every_registered_method_has_a_complete_card(name):
    c = card(name)
    assert set(c) == set(CARD_FIELDS), f"{name}: fields {sorted(set(CARD_FIELDS) ^ set(c))}"
    for f in CARD_FIELDS:
        assert isinstance(c[f], str) and c[f].strip(), f"{name}: field {f!r} is empty"
    assert c["timing"] in TIMINGS
    assert c["in_survey"] in ("yes", "no")


def test_no_card_without_a_method():
    assert set(CARDS) == set(METHODS)


@pytest.mark.parametrize("name", list(METHODS))
def test_timing_agrees_with_the_selector(name):
    """'before' the full evaluation exactly when the selector chooses without any model's results."""
    cls = get_method(name)
    assert (card(name)["timing"] == "before") == bool(cls.needs_no_models), name


def test_the_survey_five_are_marked():
    assert {m for m, c in CARDS.items() if c["in_survey"] == "yes"} == {"kmeans", "herding", "ppl", "irt", "essence"}


def test_card_is_a_copy_and_unknown_names_are_refused():
    c = card("random")
    c["label"] = "changed"
    assert CARDS["random"]["label"] == "Random"
    with pytest.raises(ValueError, match="no card"):
        card("nope")


def _results():
    """A results table in the sweep's schema: two datasets, two seeds, random / kmeans / herding."""
    rows = []

    def add(ds, m, k, s, rmse, sec, err=""):
        row = dict.fromkeys(COLUMNS, np.nan)
        row.update(dataset=ds, method=m, k=k, seed=s, rmse=np.nan if err else rmse, seconds=sec, error=err)
        rows.append(row)

    for s in (0, 1):
        add("a", "random", 50, s, 4.0, 1.0)
        add("b", "random", 50, s, 2.0, 1.0)
        add("a", "kmeans", 50, s, 2.0 + s, 3.0)  # mean 2.5
        add("b", "kmeans", 50, s, 1.0, 5.0)
        add("a", "random", 25, s, 9.0, 1.0)
        add("a", "herding", 50, s, 3.0, 2.0)
        add("b", "herding", 50, s, 0.0, 0.0, err="ValueError: dataset 'b' has no item texts")
    return pd.DataFrame(rows, columns=COLUMNS)


def test_cards_table_measured_columns():
    t = cards_table(["random", "kmeans", "herding"], results=_results(), k=50)
    assert list(t.index) == ["random", "kmeans", "herding"]
    assert t.loc["kmeans", "runs ok / all"] == "4/4"
    assert t.loc["herding", "runs ok / all"] == "2/4"  # failures are counted
    assert t.loc["kmeans", "mean seconds per run"] == pytest.approx(4.0)
    assert t.loc["herding", "mean seconds per run"] == pytest.approx(2.0)  # failed runs' seconds left out
    assert t.loc["random", "mean test RMSE at k=50 (pp)"] == pytest.approx(3.0)
    assert t.loc["kmeans", "mean test RMSE at k=50 (pp)"] == pytest.approx(1.75)
    # geometric mean over (dataset, seed) pairs of the per-run ratio (essence.data.metrics.ratio_to_random)
    assert t.loc["kmeans", "RMSE / random at k=50"] == pytest.approx((2 / 4 * 3 / 4 * 1 / 2 * 1 / 2) ** 0.25)
    assert t.loc["herding", "RMSE / random at k=50"] == pytest.approx(0.75)  # only dataset a finished
    assert t.loc["herding", "datasets at k=50"] == 1
    assert t.loc["random", "RMSE / random at k=50"] == pytest.approx(1.0)
    for f in ("method", "selection signal", "objective", "prior cost", "GPU", "reconstructor"):
        assert f in t.columns


def test_cards_table_without_results_and_bad_input():
    t = cards_table()
    assert list(t.index) == list(CARDS) and t.shape[1] == len(CARD_FIELDS)
    with pytest.raises(ValueError, match="not card fields"):
        cards_table(fields=("label", "colour"))
    with pytest.raises(ValueError, match="missing column"):
        cards_table(results=pd.DataFrame({"method": ["random"]}))
    with pytest.raises(ValueError, match="no card"):
        cards_table(["random", "nope"])
