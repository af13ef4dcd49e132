"""The SmolLM2 item features committed under data/features/: complete, verified, refused when damaged, and
equal (to float16 precision) to what the model computes now."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from essence.data import DATASETS, load
from essence.data.errors import InputError
from essence.features import committed
from essence.features.cache import FeatureCache, text_key
from essence.features.lm import MODEL_ID

KINDS = ("hidden_last_ml1024", "ppl_ml1024")
TEXT_SETS = [n for n in DATASETS if load(n).texts is not None]


@pytest.fixture(scope="module")
def root():
    r = committed.committed_root()
    assert r is not None and (r / committed.SUMS).is_file(), "data/features/SHA256SUMS is missing"
    return r


def test_every_item_text_of_the_shipped_datasets_is_committed_and_verified(root):
    assert set(TEXT_SETS) >= {"arc", "gsm8k", "mmlu", "truthfulqa", "winogrande", "alpaca_eval2"}
    for kind in KINDS:
        files = committed.verify_folder(MODEL_ID, kind, root)
        assert sorted(f.stem for f in files) == sorted(TEXT_SETS)
        rows = committed.committed_rows(MODEL_ID, kind, root)
        for name in TEXT_SETS:
            keys = {text_key(str(t)) for t in load(name).texts}
            assert keys <= rows.keys(), (name, kind)
    hidden = committed.committed_rows(MODEL_ID, KINDS[0], root)
    ppl = committed.committed_rows(MODEL_ID, KINDS[1], root)
    h = np.stack(list(hidden.values()))
    p = np.array(list(ppl.values()))
    assert h.shape[1] == 576 and h.dtype == np.float32 and np.isfinite(h).all() and h.std() > 0.1
    assert p.min() >= 1.0 and np.isfinite(p).all()


def test_the_cache_reads_committed_rows_without_computing(root, tmp_path):
    texts = [str(t) for t in load("arc").texts[:5]]
    values, missing = FeatureCache(MODEL_ID, KINDS[0], root=tmp_path).get(texts)
    assert not missing.any() and values.shape == (5, 576)
    _, missing_off = FeatureCache(MODEL_ID, KINDS[0], root=tmp_path, committed=False).get(texts)
    assert missing_off.all()


def _copy(root, tmp_path):
    dst = tmp_path / "features"
    shutil.copytree(root, dst)
    return dst, dst / committed.folder(MODEL_ID, KINDS[0], dst).relative_to(dst) / "arc.npz"


def test_a_damaged_or_unlisted_file_is_refused(root, tmp_path, monkeypatch):
    dst, arc = _copy(root, tmp_path)
    monkeypatch.setenv(committed.ENV, str(dst))
    texts = [str(t) for t in load("arc").texts[:3]]
    assert not FeatureCache(MODEL_ID, KINDS[0], root=tmp_path / "c0").get(texts)[1].any()  # intact: read
    raw = bytearray(arc.read_bytes())
    raw[-100] ^= 0xFF  # one byte of the values
    arc.write_bytes(bytes(raw))
    with pytest.raises(InputError, match="checksum of .*arc.npz differs"):
        FeatureCache(MODEL_ID, KINDS[0], root=tmp_path / "c1").get(texts)
    committed.write_sums(dst)  # re-listed: read again, with the damaged row
    assert committed.verify_folder(MODEL_ID, KINDS[0], dst)
    shutil.copy(arc, arc.with_name("extra.npz"))
    with pytest.raises(InputError, match="extra.npz is not listed"):
        committed.verify_folder(MODEL_ID, KINDS[0], dst)


def test_writing_the_same_rows_gives_the_same_bytes(tmp_path):
    keys = ["b", "a", "b"]
    vals = np.arange(3 * 4, dtype=np.float32).reshape(3, 4) / 7
    p = committed.write_committed("m/x", "hidden_last_ml8", "toy", keys, vals, root=tmp_path)
    first, sums = p.read_bytes(), (tmp_path / committed.SUMS).read_text()
    committed.write_committed("m/x", "hidden_last_ml8", "toy", keys, vals, root=tmp_path)
    assert p.read_bytes() == first and (tmp_path / committed.SUMS).read_text() == sums
    rows = committed.committed_rows("m/x", "hidden_last_ml8", tmp_path)
    assert list(rows) == ["a", "b"]  # one row per key, sorted; the first "b" row kept
    assert np.allclose(rows["b"], vals[0], rtol=1e-3) and rows["b"].dtype == np.float32


@pytest.mark.slow
def test_a_few_committed_rows_match_the_model_recomputed(root):
    from essence.features.lm import lm_features

    texts = []
    for name in ("arc", "mmlu", "alpaca_eval2"):
        texts += [str(t) for t in load(name).texts[:2]]
    hidden, ppl = lm_features(texts, progress=False, cache=False)
    rows_h = committed.committed_rows(MODEL_ID, KINDS[0], root)
    rows_p = committed.committed_rows(MODEL_ID, KINDS[1], root)
    for t, h, p in zip(texts, hidden, ppl):
        c = rows_h[text_key(t)]
        assert np.abs(c - h).max() <= 2e-3 * np.abs(h).max() + 1e-2  # float16 rounding and thread-order noise
        assert np.corrcoef(c, h)[0, 1] > 0.9999
        assert rows_p[text_key(t)] == pytest.approx(p, rel=1e-3)
