"""essence.data.readers: big-table reading gives what pivoting the whole table in pandas gives."""

import numpy as np
import pandas as pd
import pytest

from essence.data import from_arrays
from essence.data.errors import InputError
from essence.data.readers import read_table


def _table(rng, n_models=7, n_items=11, binary=True):
    R = (rng.random((n_models, n_items)) < 0.5).astype(float) if binary else rng.random((n_models, n_items)).round(3)
    R[rng.random(R.shape) < 0.15] = np.nan
    R[:, 0] = 1.0  # no all-NaN item
    R[0, :] = 0.0  # no all-NaN model
    models = np.array([f"m{i}" for i in rng.permutation(n_models)])
    items = np.array([f"q{j}" for j in rng.permutation(n_items)])
    fs = rng.random(n_models) * 100
    return R, models, items, fs


def _expected(R, models, items, fs):
    mo, io = np.argsort(models), np.argsort(items)
    return from_arrays(R[np.ix_(mo, io)], models[mo], items[io], fs[mo])


def _same(a, b):
    assert a.models.tolist() == b.models.tolist() and a.items.tolist() == b.items.tolist()
    np.testing.assert_array_equal(a.responses, b.responses)
    np.testing.assert_allclose(a.target, b.target, rtol=1e-14)  # CSV text -> float parsers may differ by an ulp


@pytest.mark.parametrize("binary", [True, False])
def test_wide_and_long_match_pandas_pivot(tmp_path, binary):
    rng = np.random.default_rng(3)
    R, models, items, fs = _table(rng, binary=binary)
    wide = pd.DataFrame(R, columns=items)
    wide.insert(0, "model", models)
    wide["full_score"] = fs
    long = wide.melt(id_vars=["model", "full_score"], var_name="item", value_name="score").sample(frac=1, random_state=0)
    long = long[["model", "item", "score", "full_score"]]
    wide.to_parquet(tmp_path / "w.parquet", index=False)
    wide.to_csv(tmp_path / "w.csv", index=False)
    long.to_parquet(tmp_path / "l.parquet", index=False)
    long.to_csv(tmp_path / "l.csv", index=False)
    # reorder wide columns / rows: ids are kept as the file gives them for wide tables
    want_long = _expected(R, models, items, fs)
    for f in ("l.parquet", "l.csv"):
        _same(read_table(tmp_path / f, batch_rows=13), want_long)  # many batches
    want_wide = from_arrays(R, models, items, fs)
    for f in ("w.parquet", "w.csv"):
        _same(read_table(tmp_path / f, column_chunk=3, rows_per_chunk=2), want_wide)


def test_float32_only_where_exact(tmp_path):
    pd.DataFrame({"model": ["a", "b"], "q1": [1.0, 0.0], "q2": [0.5, 0.1]}).to_parquet(tmp_path / "w.parquet")
    r = read_table(tmp_path / "w.parquet", column_chunk=1)  # 0.1 is met after exact values
    assert r.responses[1, 1] == 0.1  # float64 0.1, not float32's 0.10000000149


def test_long_errors_across_batches(tmp_path):
    rows = [("m1", "q1", 1), ("m1", "q2", 0), ("m2", "q1", 1), ("m1", "q1", 0)]
    pd.DataFrame(rows, columns=["model", "item", "score"]).to_parquet(tmp_path / "d.parquet")
    with pytest.raises(InputError, match=r"1 duplicate \(model, item\) row\(s\), e.g. \('m1', 'q1'\)"):
        read_table(tmp_path / "d.parquet", batch_rows=2)
    rows = [("m1", "q1", 1, 50.0), ("m1", "q2", 0, 50.0), ("m2", "q1", 1, 20.0), ("m1", "q3", 0, 60.0)]
    pd.DataFrame(rows, columns=["model", "item", "score", "full_score"]).to_csv(tmp_path / "f.csv", index=False)
    with pytest.raises(InputError, match="full_score differs between rows of the same model"):
        read_table(tmp_path / "f.csv", batch_rows=2)
    (tmp_path / "t.csv").write_text("model,item,score\nm,q,yes\n")
    with pytest.raises(InputError, match="non-numeric value 'yes'"):
        read_table(tmp_path / "t.csv")
    (tmp_path / "x.parquet").write_bytes(b"not parquet")
    with pytest.raises(InputError, match="unreadable table"):
        read_table(tmp_path / "x.parquet")


def test_wide_duplicate_model_and_text_cell(tmp_path):
    pd.DataFrame({"model": ["a", "a"], "q1": [1, 0]}).to_parquet(tmp_path / "d.parquet")
    with pytest.raises(InputError, match="duplicate id 'a'"):
        read_table(tmp_path / "d.parquet")
    pd.DataFrame({"model": ["a", "b"], "q1": ["1", "no"]}).to_parquet(tmp_path / "s.parquet")
    with pytest.raises(InputError, match="non-numeric value 'no'"):
        read_table(tmp_path / "s.parquet")


def test_reader_fills_the_final_matrix_without_a_copy(tmp_path, monkeypatch):
    """The reader hands its float64 matrix to from_arrays with copy=False (no second copy of every cell at
    4,000 x 100,000); from_arrays still copies a caller's array by default."""
    import essence.data.readers as readers

    seen = {}
    real = readers.from_arrays

    def spy(R, *a, **kw):
        seen["dtype"], seen["copy"] = R.dtype, kw.get("copy", True)
        out = real(R, *a, **kw)
        seen["same"] = out.responses is R or np.shares_memory(out.responses, R)
        return out

    monkeypatch.setattr(readers, "from_arrays", spy)
    pd.DataFrame({"model": ["a", "b"], "q1": [1.0, 0.0], "q2": [0.5, None]}).to_parquet(tmp_path / "w.parquet")
    r = read_table(tmp_path / "w.parquet", column_chunk=1)
    assert seen == {"dtype": np.float64, "copy": False, "same": True}
    assert np.isnan(r.responses[1, 1]) and not r.responses.flags.writeable
    mine = np.array([[1.0, 0.0], [0.0, 1.0]])
    d = from_arrays(mine)
    mine[0, 0] = 0.5
    assert d.responses[0, 0] == 1.0 and mine.flags.writeable
