"""essence.lessons.cards: every registered method has a complete card; the table sets them side by side."""

from __future__ import annotations

import pytest

from essence.methods import METHODS, get_method
from essence.lessons.cards import CARD_FIELDS, CARDS, TIMINGS, card, cards_table


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


def test_cards_table_rows_and_columns():
    t = cards_table(["aipw", "kmeans"], fields=("label", "signal", "timing"))
    assert list(t.index) == ["aipw", "kmeans"]
    assert list(t.columns) == ["method", "selection signal", "chooses before / after full evaluation"]
    assert t.loc["kmeans", "method"] == card("kmeans")["label"]
    assert t.loc["aipw", "selection signal"] == card("aipw")["signal"]


def test_cards_table_defaults_and_bad_input():
    t = cards_table()
    assert list(t.index) == list(CARDS) and t.shape[1] == len(CARD_FIELDS)
    with pytest.raises(ValueError, match="not card fields"):
        cards_table(fields=("label", "colour"))
    with pytest.raises(ValueError, match="no card"):
        cards_table(["random", "nope"])
