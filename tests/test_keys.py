"""essence.lessons.keys: key numbers are returned unchanged and recorded only where the build asks."""

from __future__ import annotations

import json

import pytest

from essence.lessons.keys import ENV, key


def test_key_returns_the_value_and_records_it_only_when_asked(tmp_path, monkeypatch):
    monkeypatch.delenv(ENV, raising=False)
    assert key("a", 3) == 3
    path = tmp_path / "keys" / "nb.json"
    monkeypatch.setenv(ENV, str(path))
    assert key("rmse", 1.25) == 1.25 and key("k", 50) == 50
    assert json.loads(path.read_text()) == {"k": 50.0, "rmse": 1.25}


def test_a_name_twice_or_a_non_finite_value_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv(ENV, str(tmp_path / "nb.json"))
    key("x", 1.0)
    with pytest.raises(ValueError, match="twice"):
        key("x", 2.0)
    with pytest.raises(ValueError, match="not finite"):
        key("y", float("nan"))
    assert json.loads((tmp_path / "nb.json").read_text()) == {"x": 1.0}


def test_below_shows_an_agreement_without_its_last_digits():
    from essence.lessons.keys import below

    assert below(7.2e-07, 1e-5) == below(-4.8e-07, 1e-5) == "below 1e-05"
    assert below(3.2e-05, 1e-5) == "3.2e-05: NOT below 1e-05"
