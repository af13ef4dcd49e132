"""The real MiniLM path of essence.features.text: offline model, normalised embeddings, disk cache."""

from __future__ import annotations

import numpy as np
import pytest

import essence.features.text as text

TEXTS = [
    "Natalia sold clips to 48 of her friends in April, and then she sold half as many clips in May.",
    "Natalia sold 48 clips to her friends in April and half as many in May.",
    "Which gas do plants absorb from the air during photosynthesis?",
    "",
]


@pytest.mark.slow
def test_minilm_embeddings_cache_and_no_model_on_hit(tmp_path, monkeypatch):
    monkeypatch.setenv("ESSENCE_CACHE", str(tmp_path))
    E = text.embed_texts(TEXTS, progress=False)
    assert E.shape == (4, 384) and E.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(E, axis=1), 1.0, atol=1e-5)
    S = E @ E.T
    assert S[0, 1] > 0.8 > S[0, 2]  # a paraphrase is closer than an unrelated question
    assert any((tmp_path / "features").rglob("*.npz"))

    # a cache hit must not load the model
    def boom():
        raise AssertionError("the model was loaded on a cache hit")

    monkeypatch.setattr(text, "_load_model", boom)
    again = text.embed_texts(list(reversed(TEXTS)), progress=False)
    np.testing.assert_array_equal(again, E[::-1])
    with pytest.raises(AssertionError, match="cache hit"):
        text.embed_texts(["a text that is not in the cache"], progress=False)
    monkeypatch.undo()

    # cache=False computes afresh and writes nothing new
    monkeypatch.setenv("ESSENCE_CACHE", str(tmp_path / "other"))
    fresh = text.embed_texts(TEXTS[:2], progress=False, cache=False)
    np.testing.assert_allclose(fresh, E[:2], atol=1e-5)
    assert not (tmp_path / "other").exists()


def test_embed_texts_rejects_bad_input_and_handles_empty(tmp_path, monkeypatch):
    monkeypatch.setenv("ESSENCE_CACHE", str(tmp_path))
    with pytest.raises(ValueError, match="single string"):
        text.embed_texts("one text")
    with pytest.raises(ValueError, match="batch_size"):
        text.embed_texts(["a"], batch_size=0)
    assert text.embed_texts([]).shape == (0, 384)
