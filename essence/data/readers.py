"""Reading big result tables (.csv / .parquet) in bounded memory; ids, order and values as a pandas pivot gives."""

from __future__ import annotations

import csv
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
from tqdm.auto import tqdm

from .errors import InputError
from .validation import NA_TEXTS, from_arrays

__all__ = ["read_table"]

_RESERVED = ("model", "full_score")


def read_table(path, progress: bool = False, column_chunk: int = 4096, rows_per_chunk: int = 2000,
               batch_rows: int = 2_000_000, allow_empty_items: bool = False):
    """A `Responses` (named after the file stem) from a *wide* (``model``, one column per item) or *long* (``model,
    item, score``) ``.csv`` / ``.parquet``, optional ``full_score``; InputError for anything unreadable or invalid."""
    path = Path(path)
    parquet = path.suffix.lower() in (".parquet", ".pq")
    cols = _columns(path, parquet)
    if "model" not in cols:
        raise InputError(f"{path}: no 'model' column; a wide table needs a 'model' column plus one column per item, "
                         "a long table needs columns model, item, score")
    if {"item", "score"} <= set(cols):
        extra = set(cols) - {"model", "item", "score", "full_score"}
        if extra:
            raise InputError(f"{path}: long table has unexpected column(s) {sorted(extra)}; expected model, item, "
                             "score and optionally full_score")
        return _read_long(path, parquet, "full_score" in cols, progress, batch_rows, allow_empty_items)
    if parquet:
        return _read_wide_parquet(path, cols, progress, column_chunk, allow_empty_items)
    return _read_wide_csv(path, cols, progress, rows_per_chunk, allow_empty_items)


@contextmanager
def _readable(path: Path):
    """Any failure but an InputError inside the block becomes InputError "unreadable table"."""
    try:
        yield
    except InputError:
        raise
    except Exception as exc:
        raise InputError(f"{path}: unreadable table ({type(exc).__name__}: {exc})") from None


def _columns(path: Path, parquet: bool) -> list[str]:
    with _readable(path):
        if parquet:
            return [str(c) for c in pq.read_schema(path).names if c != "__index_level_0__"]
        with open(path, newline="", encoding="utf-8", errors="replace") as f:  # pandas would rename a repeat 'a.1'
            header = next(csv.reader(f), [])
    repeated = sorted((c, n) for c, n in Counter(header).items() if n > 1)
    if repeated:
        raise InputError(f"{path}: column {repeated[0][0]!r} appears {repeated[0][1]} times in the header; "
                         "give each item (and model, full_score) one column")
    if not header:
        raise InputError(f"{path}: unreadable table (the file is empty); write a header row with model and item columns")
    return [str(c) for c in header]


def _numeric_block(block, path: Path, row0: int) -> np.ndarray:
    """A pandas DataFrame chunk -> float64 array; InputError naming the first non-numeric cell."""
    obj = [c for c in block.columns if block[c].dtype == object or str(block[c].dtype).startswith("str")]
    if obj:
        conv = block[obj].apply(pd.to_numeric, errors="coerce")
        bad = conv.isna() & block[obj].notna()
        if bad.to_numpy().any():
            r, c = np.argwhere(bad.to_numpy())[0]
            raise InputError(
                f"responses: non-numeric value {block[obj].iat[r, c]!r} in {path} (row {row0 + r}, column "
                f"{obj[c]!r}); scores must be numbers in [0, 1] or empty")
        block = block.copy()
        block[obj] = conv
    try:
        return block.to_numpy(dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"responses: non-numeric values in {path} ({exc}); scores must be numbers in [0, 1] "
                         "or empty") from None


def _narrow(a: np.ndarray) -> np.ndarray:
    """``a`` as float32 where that is exact (half the memory until the final matrix)."""
    a32 = a.astype(np.float32)
    return a32 if np.array_equal(a32, a, equal_nan=True) else a


def _target(values, path: Path):
    if values is None:
        return None
    try:
        return np.asarray(values, dtype=np.float64)
    except (ValueError, TypeError):
        raise InputError(f"target: non-numeric full_score values in {path}") from None


def _names(values, what: str, path: Path) -> np.ndarray:
    """Model (or item) names as strings, refusing a missing (None / NaN) or blank one with its data row."""
    vals = list(values)
    blank = [i for i, v in enumerate(vals) if v is None or (isinstance(v, float) and v != v) or not str(v).strip()]
    if blank:
        raise InputError(f"{path}: {len(blank)} row(s) with an empty or missing {what} name, first at data row "
                         f"{blank[0] + 1}; give every {what} a name")
    return np.asarray([str(v) for v in vals], dtype=str)


def _check_models(models: np.ndarray, path: Path) -> None:
    u, c = np.unique(models, return_counts=True)
    if (c > 1).any():
        raise InputError(f"models: duplicate id {str(u[c > 1][0])!r} in {path}; one row per model")


def _read_wide_parquet(path: Path, cols: list[str], progress: bool, column_chunk: int, allow_empty_items: bool):
    with _readable(path):
        pf = pq.ParquetFile(path)
        n = pf.metadata.num_rows
        models = _names(pf.read(columns=["model"]).column(0).to_pylist(), "model", path)
        target = (_target(pf.read(columns=["full_score"]).column(0).to_numpy(zero_copy_only=False), path)
                  if "full_score" in cols else None)
    _check_models(models, path)
    items = [c for c in cols if c not in _RESERVED]
    mat = np.full((n, len(items)), np.nan)  # the Responses' own matrix (copy=False)
    starts = range(0, len(items), column_chunk)
    for s in tqdm(starts, desc=f"reading {path.name}", unit="chunk", disable=not progress):
        names = items[s:s + column_chunk]
        with _readable(path):
            tab = pf.read(columns=names, use_threads=False)
        if all(_is_numeric(t) for t in tab.schema.types):  # column by column into the matrix, no frame
            for j, col in enumerate(tab.columns):
                mat[:, s + j] = col.cast(pa.float64()).to_numpy(zero_copy_only=False)  # nulls as NaN
        else:
            mat[:, s:s + len(names)] = _numeric_block(tab.to_pandas(), path, 0)
        del tab
    return from_arrays(mat, models, np.asarray(items, dtype=str), target, name=path.stem,
                       allow_empty_items=allow_empty_items, copy=False)


def _is_numeric(t) -> bool:
    return pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t) or pa.types.is_null(t)


def _read_wide_csv(path: Path, cols: list[str], progress: bool, rows_per_chunk: int, allow_empty_items: bool):
    items = [c for c in cols if c not in _RESERVED]
    blocks, models, target, row0 = [], [], [], 0
    with _readable(path):
        # names as written (a model called "NA" stays "NA"); NA-like score cells are missing
        reader = pd.read_csv(path, chunksize=rows_per_chunk, dtype={"model": str}, keep_default_na=False,
                             na_values={c: NA_TEXTS for c in cols if c != "model"})
        for chunk in tqdm(reader, desc=f"reading {path.name}", unit="chunk", disable=not progress):
            chunk.columns = [str(c) for c in chunk.columns]
            models.append(chunk["model"].to_numpy(dtype=object))
            if "full_score" in chunk.columns:
                target.append(chunk["full_score"].to_numpy())
            blocks.append(_narrow(_numeric_block(chunk[items], path, row0)))
            row0 += len(chunk)
    models = _names(np.concatenate(models), "model", path) if models else np.array([], dtype=str)
    _check_models(models, path)
    R = np.concatenate(blocks) if blocks else np.empty((0, len(items)))
    return from_arrays(R, models, np.asarray(items, dtype=str),
                       _target(np.concatenate(target), path) if target else None, name=path.stem,
                       allow_empty_items=allow_empty_items)


def _long_batches(path: Path, parquet: bool, with_fs: bool, batch_rows: int):
    """Yield ``(model strings, item strings, scores, full_score or None)`` pyarrow arrays per batch."""
    names = ["model", "item", "score"] + (["full_score"] if with_fs else [])
    if parquet:
        pf = pq.ParquetFile(path)
        total = pf.metadata.num_rows
        it = pf.iter_batches(batch_size=batch_rows, columns=names)
    else:
        total = None
        types = {"model": pa.string(), "item": pa.string()}
        it = pacsv.open_csv(path, read_options=pacsv.ReadOptions(block_size=64 << 20),
                            convert_options=pacsv.ConvertOptions(column_types=types, include_columns=names))
    return total, it


def _codes(arr, table: dict) -> np.ndarray:
    """int32 codes of a pyarrow string array, new ids appended to ``table`` (id -> code)."""
    enc = arr.dictionary_encode()
    if isinstance(enc, pa.ChunkedArray):
        enc = enc.combine_chunks()
    local = [table.setdefault(v, len(table)) for v in enc.dictionary.to_pylist()]
    return np.asarray(local, dtype=np.int32)[enc.indices.to_numpy(zero_copy_only=False)]


def _scores(col, path: Path) -> np.ndarray:
    if not _is_numeric(col.type):
        for v in col.to_pylist():
            if v is None or v == "":
                continue
            try:
                float(v)
            except (TypeError, ValueError):
                raise InputError(f"responses: non-numeric value {v!r} in {path} (column 'score'); scores must be "
                                 "numbers in [0, 1] or empty") from None
        col = pc.cast(pc.if_else(pc.equal(col, ""), None, col), pa.float64())
    return col.cast(pa.float64()).to_numpy(zero_copy_only=False)


def _read_long(path: Path, parquet: bool, with_fs: bool, progress: bool, batch_rows: int, allow_empty_items: bool):
    mt, it_ = {}, {}
    mc, ic, sc, fs_vals = [], [], [], []
    with _readable(path):
        total, batches = _long_batches(path, parquet, with_fs, batch_rows)
        bar = tqdm(total=total, desc=f"reading {path.name}", unit="row", unit_scale=True, disable=not progress)
        for b in batches:
            mc.append(_codes(b.column(0), mt))
            ic.append(_codes(b.column(1), it_))
            sc.append(_narrow(_scores(b.column(2), path)))
            if with_fs:
                fs_vals.append(_scores(b.column(3), path))
            bar.update(b.num_rows)
        bar.close()
    if not mc:
        raise InputError(f"{path}: no rows; give one row per model and item")
    # sort ids (the order pandas' pivot gives) and remap codes
    models = _names(list(mt), "model", path)
    items = _names(list(it_), "item", path)
    mo, io = np.argsort(models, kind="stable"), np.argsort(items, kind="stable")
    m_rank, i_rank = np.argsort(mo).astype(np.int32), np.argsort(io).astype(np.int32)  # code -> sorted position
    mat = np.full((models.size, items.size), np.nan)
    seen = np.zeros((models.size, items.size), dtype=bool)
    n_rows = 0
    for m, i, s in zip(mc, ic, sc):
        r, c = m_rank[m], i_rank[i]
        seen[r, c] = True
        mat[r, c] = s
        n_rows += m.size
    if int(seen.sum()) != n_rows:
        _raise_duplicate(mc, ic, models, items, path, n_rows - int(seen.sum()))
    del seen
    target = None
    if with_fs:
        target = np.full(models.size, np.nan)
        setv = np.zeros(models.size, dtype=bool)
        for m, v in zip(mc, fs_vals):
            r = m_rank[m]
            prev = target[r]
            clash = setv[r] & ~((prev == v) | (np.isnan(prev) & np.isnan(v)))
            target[r] = v
            back = target[r]
            clash |= ~((back == v) | (np.isnan(back) & np.isnan(v)))  # two values within this batch
            if clash.any():
                raise InputError(f"{path}: full_score differs between rows of the same model "
                                 f"(e.g. {str(models[mo][r[np.argmax(clash)]])!r}); give one value per model")
            setv[r] = True
    return from_arrays(mat, models[mo], items[io], target, name=path.stem, allow_empty_items=allow_empty_items,
                       copy=False)


def _raise_duplicate(mc, ic, models, items, path: Path, n_dup: int) -> None:
    m = np.concatenate(mc).astype(np.int64)
    i = np.concatenate(ic).astype(np.int64)
    _, first, counts = np.unique(m * items.size + i, return_index=True, return_counts=True)
    j = first[np.argmax(counts > 1)]
    raise InputError(f"{path}: {n_dup} duplicate (model, item) row(s), e.g. ({str(models[m[j]])!r}, {str(items[i[j]])!r}); "
                     "keep one score per model and item")
