"""essence.data: loading, validation (every bad input named), subsetting, splits."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from essence import data as D


# ---------------------------------------------------------------------------------------------- loading
def test_gsm8k_shape_and_target(gsm8k):
    assert gsm8k.responses.shape == (4076, 486)
    assert gsm8k.target_source == "full_score"
    assert gsm8k.is_binary
    # full_score is the whole-benchmark accuracy, not the pool mean
    assert not np.allclose(gsm8k.target, 100 * gsm8k.responses.mean(axis=1))
    assert "prompts" in gsm8k.item_extras and gsm8k.texts is not None


@pytest.mark.parametrize("name,shape", [
    ("arc", (3469, 245)), ("mmlu", (3851, 102)), ("truthfulqa", (3854, 136)), ("winogrande", (4936, 106)),
    ("alpaca_eval2", (55, 805)), ("lcb_codegen", (45, 400)),
])
def test_every_shipped_dataset_loads(name, shape):
    r = D.load(name)
    assert r.shape == shape
    assert np.isfinite(r.target).all()
    assert r.responses.dtype == np.float64


def test_row_mean_target_for_continuous(alpaca):
    assert alpaca.target_source == "row_mean"
    np.testing.assert_allclose(alpaca.target, 100 * np.nanmean(alpaca.responses, axis=1))
    assert np.isnan(alpaca.responses).sum() == 10
    assert not alpaca.is_binary


def test_flagged_rows_dropped_unless_kept():
    kept = D.load("alpaca_eval2", keep_flagged=True)
    assert kept.n_models == 58
    r = D.load("alpaca_eval2")
    assert r.n_models == 55
    assert {"NullModel", "gpt4_1106_preview", "gpt4_gamed"} == set(kept.models) - set(r.models)
    assert (r.model_extras["model_notes"] == "").all()


def test_unknown_name_lists_known():
    with pytest.raises(ValueError, match="known datasets: arc, gsm8k"):
        D.load("hellaswag")


def test_env_var_root_takes_precedence(tmp_path, monkeypatch):
    src = D.resolve_dataset("lcb_codegen")
    (tmp_path / "livecodebench").mkdir()
    z = dict(np.load(src))
    z["responses"] = z["responses"][:10]
    z["models"] = z["models"][:10]
    z["model_full_names"] = z["model_full_names"][:10]
    np.savez(tmp_path / "livecodebench" / "lcb_codegen.npz", **z)
    monkeypatch.setenv("ESSENCE_DATA", str(tmp_path))
    r = D.load("lcb_codegen", verify=False)
    assert r.n_models == 10
    # with verification, the modified copy is refused and the message says what to do
    with pytest.raises(ValueError, match="checksum mismatch.*make data"):
        D.load("lcb_codegen")


def test_npz_round_trip(tmp_path, small):
    p = tmp_path / "mine.npz"
    np.savez(p, responses=small.responses, models=small.models, items=small.items, texts=small.texts,
             full_score=small.target)
    r = D.load(p)
    assert r.name == "mine"
    np.testing.assert_array_equal(r.responses, small.responses)
    np.testing.assert_array_equal(r.target, small.target)
    assert r.target_source == "full_score"


def test_wide_and_long_tables_agree(tmp_path, alpaca):
    sl = alpaca.subset(models=np.arange(8), items=np.arange(12))
    wide = pd.DataFrame(sl.responses, columns=sl.items)
    wide.insert(0, "model", sl.models)
    wide.to_csv(tmp_path / "w.csv", index=False)
    wide.to_parquet(tmp_path / "w.parquet", index=False)
    long = wide.melt(id_vars="model", var_name="item", value_name="score").dropna()
    long.to_csv(tmp_path / "l.csv", index=False)
    a, b, c = (D.load(tmp_path / f) for f in ("w.csv", "w.parquet", "l.csv"))
    for r in (a, b):
        np.testing.assert_array_equal(r.models, sl.models)
        np.testing.assert_array_equal(r.items, sl.items)
        np.testing.assert_allclose(r.responses, sl.responses)
    # long tables come back sorted by id; compare by id
    np.testing.assert_allclose(c.subset(models=sl.models, items=sl.items).responses, sl.responses)
    np.testing.assert_allclose(a.target, 100 * np.nanmean(sl.responses, axis=1))


def test_wide_table_full_score_column(tmp_path):
    pd.DataFrame({"model": ["a", "b"], "q1": [1, 0], "q2": [0, 0], "full_score": [70.0, 20.0]}).to_csv(
        tmp_path / "t.csv", index=False)
    r = D.load(tmp_path / "t.csv")
    assert r.target.tolist() == [70.0, 20.0] and r.target_source == "full_score"
    assert r.items.tolist() == ["q1", "q2"]


# ---------------------------------------------------------------------------------------------- bad input
R = np.array([[1, 0, 1], [0, 1, 1.0]])


@pytest.mark.parametrize("kwargs,match", [
    (dict(responses=[[1, 0], [1]]), "responses: cannot be read"),
    (dict(responses=[1, 0, 1]), "expected a 2-D array"),
    (dict(responses=np.zeros((0, 3))), "no models"),
    (dict(responses=np.zeros((3, 0))), "no items"),
    (dict(responses=[[1, 2.0], [0, 1]]), r"outside \[0, 1\].*divide percentages by 100"),
    (dict(responses=[[1, -0.5], [0, 1]]), r"outside \[0, 1\]"),
    (dict(responses=[[1, np.inf], [0, 1]]), "infinite"),
    (dict(responses=R, models=["a", "a"]), "models: 1 duplicate id.*'a'"),
    (dict(responses=R, items=["x", "y", "x"]), "items: 1 duplicate id.*'x'"),
    (dict(responses=R, models=["a"]), "models: 1 ids for 2 rows"),
    (dict(responses=R, items=["x", "y"]), "items: 2 ids for 3 columns"),
    (dict(responses=[[1, np.nan], [0, np.nan]]), "item.*no result from any model.*'i1'"),
    (dict(responses=[[1, 0], [np.nan, np.nan]]), "model.*no result on any item.*'m1'"),
    (dict(responses=R, target=[50.0, np.nan]), "target: 1 missing or non-finite.*'m1'"),
    (dict(responses=R, target=[50.0, np.inf]), "target: 1 missing or non-finite"),
    (dict(responses=R, target=[50.0]), "target: shape"),
    (dict(responses=R, target=["a", "b"]), "target: cannot be read"),
    (dict(responses=R, texts=["a"]), "texts: shape"),
])
def test_bad_arrays_are_named(kwargs, match):
    with pytest.raises(ValueError, match=match):
        D.from_arrays(**kwargs)


def test_unreadable_files(tmp_path):
    bad = tmp_path / "broken.npz"
    bad.write_bytes(b"not a zip file")
    with pytest.raises(ValueError, match="broken.npz: unreadable .npz"):
        D.load(bad)
    with pytest.raises(ValueError, match="no such file"):
        D.load(tmp_path / "nope.csv")
    (tmp_path / "x.txt").write_text("hi")
    with pytest.raises(ValueError, match="unsupported file type"):
        D.load(tmp_path / "x.txt")
    (tmp_path / "nomodel.csv").write_text("a,b\n1,0\n")
    with pytest.raises(ValueError, match="no 'model' column"):
        D.load(tmp_path / "nomodel.csv")
    (tmp_path / "text.csv").write_text("model,q1\nm,yes\n")
    with pytest.raises(ValueError, match="non-numeric value 'yes'"):
        D.load(tmp_path / "text.csv")
    (tmp_path / "dup.csv").write_text("model,item,score\nm,q,1\nm,q,0\n")
    with pytest.raises(ValueError, match=r"duplicate \(model, item\)"):
        D.load(tmp_path / "dup.csv")
    np.savez(tmp_path / "noresp.npz", models=np.array(["a"]))
    with pytest.raises(ValueError, match="no 'responses' array"):
        D.load(tmp_path / "noresp.npz")
    # a pickled object array is refused, never unpickled
    np.save(tmp_path / "obj.npy", np.array([{"a": 1}], dtype=object))
    with open(tmp_path / "obj.npy", "rb") as f:
        payload = f.read()
    import zipfile

    with zipfile.ZipFile(tmp_path / "pickled.npz", "w") as z:
        z.writestr("responses.npy", payload)
    with pytest.raises(ValueError, match="unreadable .npz"):
        D.load(tmp_path / "pickled.npz")


# ---------------------------------------------------------------------------------------------- subsetting
def test_subset_keeps_target_and_extras(gsm8k):
    s = gsm8k.subset(models=[3, 1], items=["gsm8k.1076", "gsm8k.1226"])
    assert s.models.tolist() == [gsm8k.models[3], gsm8k.models[1]]
    assert s.items.tolist() == ["gsm8k.1076", "gsm8k.1226"]
    np.testing.assert_array_equal(s.target, gsm8k.target[[3, 1]])  # full score unchanged
    assert s.item_extras["prompts"][1] == gsm8k.item_extras["prompts"][0]
    assert s.texts[0] == gsm8k.texts[1]
    assert isinstance(s, D.Responses) and s is not gsm8k
    mask = np.zeros(gsm8k.n_items, bool)
    mask[:5] = True
    assert gsm8k.subset(items=mask).n_items == 5
    with pytest.raises(ValueError, match="items: 1 id.*not found"):
        gsm8k.subset(items=["nope"])
    with pytest.raises(ValueError, match="out of range"):
        gsm8k.subset(models=[10**6])


def test_fingerprint_changes_with_data(small):
    assert small.fingerprint() == small.subset().fingerprint()
    assert small.fingerprint() != small.subset(models=np.arange(1, small.n_models)).fingerprint()


def test_arrays_are_read_only(small):
    with pytest.raises(ValueError):
        small.responses[0, 0] = 0.5


# ---------------------------------------------------------------------------------------------- splits
def test_split_disjoint_sizes_and_deterministic(gsm8k):
    s = D.split_models(gsm8k, test=0.1, val=0.1, seed=3)
    n = gsm8k.n_models
    assert len(s.test) == round(0.1 * n) and len(s.val) == round(0.1 * n)
    allidx = np.concatenate(s)
    assert np.unique(allidx).size == n == allidx.size
    s2 = D.split_models(gsm8k, seed=3)
    for a, b in zip(s, s2):
        np.testing.assert_array_equal(a, b)
    s3 = D.split_models(gsm8k, seed=4)
    assert not np.array_equal(s.test, s3.test)


def test_split_is_stratified_by_target(gsm8k):
    y = gsm8k.target
    s = D.split_models(gsm8k, seed=0)
    edges = np.quantile(y, np.linspace(0, 1, 11))
    for part in (s.test, s.val):
        counts = np.histogram(y[part], bins=edges)[0]
        # one draw per stratum: every decile holds ~10% of the part (+-2 models of slack for edges/ties)
        assert np.all(np.abs(counts - len(part) / 10) <= 2), counts
    # a plain random split would not be this even; check the quantiles match closely
    np.testing.assert_allclose(np.quantile(y[s.test], [0.1, 0.5, 0.9]), np.quantile(y, [0.1, 0.5, 0.9]), atol=2.0)


def test_split_errors():
    with pytest.raises(ValueError, match="too few to split"):
        D.split_models(np.arange(4.0))
    with pytest.raises(ValueError, match="leaves no training models"):
        D.split_models(np.arange(100.0), test=0.5, val=0.5)
    with pytest.raises(ValueError, match="must be in"):
        D.split_models(np.arange(100.0), test=-0.1)


def test_link_shared_data(tmp_path):
    lines = D.link_shared_data(dest=tmp_path)
    assert len(lines) == len(D.DATASETS)
    assert (tmp_path / "metabench" / "gsm8k.npz").is_file()
    # a second run is a no-op and still verifies
    assert D.link_shared_data(dest=tmp_path) == lines
    # a corrupted user copy is refused, not overwritten
    p = tmp_path / "livecodebench" / "lcb_codegen.npz"
    p.unlink()
    p.write_bytes(b"garbage")
    with pytest.raises(ValueError, match="checksum mismatch for livecodebench/lcb_codegen.npz"):
        D.link_shared_data(dest=tmp_path)
    assert p.read_bytes() == b"garbage"


def test_names_must_be_present_and_non_empty(small):
    r = small.subset(models=np.arange(3), items=np.arange(4))
    for models, match in ((["a", "", "c"], "models: 1 empty or missing"), (["a", None, "c"], "empty or missing"),
                          (["a", "  ", "c"], "empty or missing")):
        with pytest.raises(ValueError, match=match):
            D.from_arrays(r.responses, np.array(models, dtype=object), r.items)
    with pytest.raises(ValueError, match="items: 1 empty or missing"):
        D.from_arrays(r.responses, r.models, ["i0", "i1", "", "i3"])


def test_csv_names_read_as_written(tmp_path, small):
    r = small.subset(models=np.arange(3), items=np.arange(4))
    df = pd.DataFrame(r.responses.copy(), columns=r.items)
    df.insert(0, "model", ["NA", "None", "null"])
    df.iloc[0, 1] = np.nan
    df.to_csv(tmp_path / "t.csv", index=False, na_rep="NA")  # a missing score written as NA stays missing
    got = D.load(tmp_path / "t.csv")
    assert got.models.tolist() == ["NA", "None", "null"] and np.isnan(got.responses[0, 0])


def test_full_scores_are_percentage_points(small):
    r = small.subset(models=np.arange(20), items=np.arange(10))
    for bad, match in ((np.r_[250.0, r.target[1:]], "outside 0-100"), (np.r_[-10.0, r.target[1:]], "outside 0-100"),
                       (r.target / 100, "multiply them by 100")):
        with pytest.raises(ValueError, match=match):
            D.from_arrays(r.responses, r.models, r.items, target=bad)
    assert D.from_arrays(r.responses, r.models, r.items, target=r.target).target_source == "full_score"


def test_allow_empty_items_keeps_unanswered_items(small):
    r = small.subset(models=[0], items=np.arange(5))
    R = r.responses.copy()
    R[0, 2] = np.nan
    with pytest.raises(ValueError, match="no result from any model"):
        D.from_arrays(R, r.models, r.items)
    kept = D.from_arrays(R, r.models, r.items, allow_empty_items=True)
    assert kept.n_items == 5 and np.isnan(kept.responses[0, 2])
