"""The Compressed artifact: compress(), save/load (atomic, schema checks), estimate by item id."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from essence.artifact.compressed import SCHEMA_VERSION, Compressed, compress
from essence.data import from_arrays, split_models


@pytest.fixture(scope="module")
def art(small):
    return compress(small, k=10, method="random", seed=0, progress=False)


def test_compress_records_provenance(art, small):
    assert art.k == 10 and len(set(art.items)) == 10 and set(art.items) <= set(small.items)
    assert art.dataset["fingerprint"] == small.fingerprint()
    assert "pre-selected" in art.dataset["caveat"]
    assert art.split["n_test"] == 60 and art.split["n_val"] == 60
    for part in ("validation", "test"):
        assert {"rmse", "kendall", "coverage", "rank_err_5"} <= set(art.figures[part])
    scores = {k: v for k, v in art.selection["reconstructor_val_rmse"].items() if isinstance(v, float)}
    assert art.selection["reconstructor_choice"] == min(scores, key=scores.get)  # the lowest CV RMSE
    assert art.params == {"k": 10, "seed": 0}


def test_same_seed_same_items(small, art):
    # the items come from the seed alone: the reconstructors weighed after choosing (predictors) change nothing
    again = compress(small, k=10, method="random", seed=0, progress=False, predictors="basic")
    assert again.items == art.items
    other = compress(small, k=10, method="random", seed=1, progress=False, predictors="basic")
    assert other.items != art.items


def test_test_figures_are_on_test_models(small, art):
    split = split_models(small, seed=0)
    te = small.subset(models=split.test)
    est = art.estimate(te)
    rmse = float(np.sqrt(np.mean((est["estimate"] - te.target) ** 2)))
    assert rmse == pytest.approx(art.figures["test"]["rmse"])


def test_evaluate_figures_by_hand(small, art):
    """evaluate() on the test models: each figure recomputed with numpy / scipy from estimate() and the true scores,
    and the artifact's own test figures are the same numbers."""
    from scipy.stats import kendalltau, spearmanr

    te = small.subset(models=split_models(small, seed=0).test)
    res = art.evaluate(te)
    est = art.estimate(te)
    e, lo, hi, y = est["estimate"].to_numpy(), est["lower"].to_numpy(), est["upper"].to_numpy(), te.target
    assert res["n_models"] == te.n_models == 60
    assert res["rmse"] == pytest.approx(np.sqrt(np.mean((e - y) ** 2)), rel=1e-9)
    assert res["mae"] == pytest.approx(np.mean(np.abs(e - y)), rel=1e-9)
    inside = (lo <= y) & (y <= hi)
    assert res["coverage"] == pytest.approx(inside.mean(), rel=1e-9) and 0 < inside.sum() < te.n_models
    assert res["kendall"] == pytest.approx(kendalltau(y, e).statistic, rel=1e-9)
    assert res["spearman"] == pytest.approx(spearmanr(y, e).statistic, rel=1e-9)
    for key in ("rmse", "mae", "coverage", "kendall"):
        assert art.figures["test"][key] == pytest.approx(res[key], rel=1e-12), key


def test_save_load_round_trip(tmp_path, art, small):
    p = art.save(tmp_path / "a.json")
    back = Compressed.load(p)
    pd.testing.assert_frame_equal(back.estimate(small), art.estimate(small))
    assert back.items == art.items and back.figures == json.loads(json.dumps(art.figures))
    d = json.loads(p.read_text())
    assert d["schema_version"] == SCHEMA_VERSION and "pickle" not in p.read_text()


def test_save_refuses_overwrite_and_is_atomic(tmp_path, art, monkeypatch):
    p = tmp_path / "a.json"
    p.write_text("user file")
    with pytest.raises(ValueError, match="already exists"):
        art.save(p)
    assert p.read_text() == "user file"
    art.save(p, overwrite=True)
    assert json.loads(p.read_text())["k"] == 10

    # a crash while writing leaves neither a partial artifact nor a temp file
    import essence.data._io as io

    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(io.os, "replace", boom)
    with pytest.raises(OSError):
        art.save(tmp_path / "b.json")
    assert not (tmp_path / "b.json").exists()
    assert [f.name for f in tmp_path.iterdir()] == ["a.json"]


def test_load_refuses_other_schema_and_missing_fields(tmp_path, art):
    d = art.to_dict()
    p = tmp_path / "x.json"
    p.write_text(json.dumps({**d, "schema_version": 99}))
    with pytest.raises(ValueError, match="schema version 99"):
        Compressed.load(p)
    broken = dict(d)
    del broken["reconstructor"]
    p.write_text(json.dumps(broken))
    with pytest.raises(ValueError, match="missing field.*reconstructor"):
        Compressed.load(p)
    p.write_text("{not json")
    with pytest.raises(ValueError, match="not a readable JSON"):
        Compressed.load(p)
    p.write_text(json.dumps({"hello": 1}))
    with pytest.raises(ValueError, match="not an essence artifact"):
        Compressed.load(p)
    with pytest.raises(ValueError, match="no such artifact"):
        Compressed.load(tmp_path / "none.json")


def test_estimate_matches_by_item_id(art, small):
    sub = small.subset(items=art.items)
    # reorder the columns and add unrelated items: ids decide, not positions
    order = np.random.default_rng(0).permutation(sub.n_items)
    shuffled = small.subset(items=np.concatenate([sub.items[order], small.items[:3]]))
    shuffled = from_arrays(shuffled.responses, shuffled.models, np.concatenate(
        [sub.items[order], ["extra1", "extra2", "extra3"]]), shuffled.target)
    a = art.estimate(sub)
    b = art.estimate(shuffled)
    np.testing.assert_allclose(a["estimate"], b["estimate"])
    assert (a["lower"] <= a["estimate"]).all() and (a["estimate"] <= a["upper"]).all()
    wide = pd.DataFrame(sub.responses, columns=sub.items)
    wide.insert(0, "model", sub.models)
    np.testing.assert_allclose(art.estimate(wide)["estimate"], a["estimate"])


def test_estimate_names_missing_items(art, small):
    keep = [i for i in small.items if i not in art.items[:2]]
    with pytest.raises(ValueError, match=f"2 of the artifact's 10 items are missing.*{art.items[0]}"):
        art.estimate(small.subset(items=keep))


def test_sparse_items_left_out_with_a_count(alpaca):
    r = alpaca.responses.copy()
    r[:, 0] = np.nan
    r[:3, 0] = 0.5
    data = from_arrays(r, alpaca.models, alpaca.items, texts=alpaca.texts, name="a")
    with pytest.warns(UserWarning, match="1 item.s. were answered by fewer than 5 training models and are left out"):
        art = compress(data, k=5, method="random", progress=False)
    assert "alpaca_eval_0" not in art.items and art.dataset["items_left_out"]["items"] == ["alpaca_eval_0"]


def test_unknown_method_and_bad_k(small):
    with pytest.raises(ValueError, match="unknown method 'nope'; known methods: random"):
        compress(small, k=5, method="nope")
    with pytest.raises(ValueError, match="k: 1000 is larger than the 80 items"):
        compress(small, k=1000, method="random")
    with pytest.raises(ValueError, match=r"k: must be .*1, got 0"):
        compress(small, k=0, method="random")
    with pytest.raises(ValueError, match="unknown parameter"):
        compress(small, k=5, method="random", generations=3)
