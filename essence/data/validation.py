"""Validation of arrays into a `Responses`: every problem an ``InputError`` naming the array, problem and fix."""

from __future__ import annotations

import numpy as np

from .errors import InputError, warn
from .responses import Responses


#: cell texts read as a missing score (pandas' defaults); model and item names are never read as missing
NA_TEXTS = ["", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN", "<NA>", "N/A",
             "NA", "NULL", "NaN", "None", "n/a", "nan", "null"]

__all__ = ["from_arrays"]


def from_arrays(responses, models=None, items=None, target=None, texts=None, name: str = "responses",
                item_extras: dict | None = None, model_extras: dict | None = None, allow_empty_items: bool = False,
                copy: bool = True) -> Responses:
    """A validated `Responses`: ``responses`` ``(n_models, n_items)``; ``models`` / ``items`` distinct names (default
    ``m0..`` / ``i0..``); ``target`` pp (default: row means). ``allow_empty_items``: items without any result allowed;
    ``copy=False`` keeps a float64 ``responses`` as it is (made read-only)."""
    try:
        r = np.array(responses, dtype=np.float64) if copy else np.asarray(responses, dtype=np.float64)
    except (ValueError, TypeError) as exc:
        raise InputError(f"responses: cannot be read as a numeric 2-D array ({exc}); rows must all have the same "
                         "length and hold numbers in [0, 1] or NaN") from None
    if r.ndim != 2:
        raise InputError(f"responses: expected a 2-D array (n_models, n_items), got {r.ndim}-D shape {r.shape}")
    n_models, n_items = r.shape
    if n_models == 0:
        raise InputError("responses: no models (0 rows); give at least one model's results")
    if n_items == 0:
        raise InputError("responses: no items (0 columns); give at least one item")
    if np.isinf(r).any():
        i, j = np.argwhere(np.isinf(r))[0]
        raise InputError(f"responses: {int(np.isinf(r).sum())} infinite value(s), first at row {i}, column {j}; "
                         "use NaN for a missing result")
    lo, hi = np.fmin.reduce(r, axis=None), np.fmax.reduce(r, axis=None)  # NaN-skipping, no copy of the cells
    if lo < 0 or hi > 1:
        bad = int(((r < 0) | (r > 1)).sum())
        raise InputError(f"responses: {bad} value(s) outside [0, 1] (min {lo:g}, max {hi:g}); "
                         "scores must be fractions in [0, 1], e.g. divide percentages by 100")

    models = _ids(models, n_models, "models", "m")
    items = _ids(items, n_items, "items", "i")

    all_nan_items = np.flatnonzero(np.isnan(r).all(axis=0))
    if all_nan_items.size and not allow_empty_items:
        raise InputError(f"responses: {all_nan_items.size} item(s) have no result from any model (all NaN), e.g. "
                         f"{', '.join(map(repr, items[all_nan_items[:3]].tolist()))}; drop those items")
    all_nan_models = np.flatnonzero(np.isnan(r).all(axis=1))
    if all_nan_models.size:
        raise InputError(f"responses: {all_nan_models.size} model(s) have no result on any item (all NaN), e.g. "
                         f"{', '.join(map(repr, models[all_nan_models[:3]].tolist()))}; drop those models")

    if target is None:
        target = _row_pp(r)
        source = "row_mean"
    else:
        source = "full_score"
        try:
            target = np.array(target, dtype=np.float64)
        except (ValueError, TypeError):
            raise InputError("target: cannot be read as numbers; give one full-benchmark score (pp) per model") from None
        if target.shape != (n_models,):
            raise InputError(f"target: shape {target.shape} does not match the {n_models} models of responses")
        if not np.isfinite(target).all():
            bad = np.flatnonzero(~np.isfinite(target))
            raise InputError(
                f"target: {bad.size} missing or non-finite full score(s), e.g. for "
                f"{', '.join(map(repr, models[bad[:3]].tolist()))}; give every model a finite score or drop it")
        _check_target_unit(target, r, models)

    if texts is not None:
        texts = np.asarray(texts, dtype=str)
        if texts.shape != (n_items,):
            raise InputError(f"texts: shape {texts.shape} does not match the {n_items} items of responses")
    extras = {}
    for what, given, n in (("item", item_extras, n_items), ("model", model_extras, n_models)):
        for k, v in (given or {}).items():
            if np.shape(v) != (n,):
                raise InputError(f"{what}_extras[{k!r}]: shape {np.shape(v)} does not match the {n} {what}s")
        extras[what] = {k: np.asarray(v) for k, v in (given or {}).items()}
    return Responses(responses=r, models=models, items=items, target=target, texts=texts, name=name,
                     item_extras=extras["item"], model_extras=extras["model"], target_source=source)


def _row_pp(r: np.ndarray) -> np.ndarray:
    """``100 * nanmean(r, axis=1)``, 256 rows at a time (no full-size temporary)."""
    return 100.0 * np.concatenate([np.nanmean(r[s:s + 256], axis=1) for s in range(0, r.shape[0], 256)])


def _check_target_unit(target: np.ndarray, r: np.ndarray, models: np.ndarray) -> None:
    """Refuse full scores outside [0, 100], or all in [0, 1] while the row means reach > 5 pp; else warn on the latter."""
    bad = np.flatnonzero((target < 0) | (target > 100))
    if bad.size:
        raise InputError(
            f"target: {bad.size} full score(s) outside 0-100 (min {target.min():g}, max {target.max():g}), e.g. "
            f"{target[bad[0]]:g} for {str(models[bad[0]])!r}; full scores are percentage points (accuracy x 100)")
    top = float(target.max())
    if 0 < top <= 1 and target.size > 1:
        row_pp = _row_pp(r)
        if np.nanmax(row_pp) > 5:
            raise InputError(
                f"target: every full score is within [0, 1] (max {top:g}) while the models' mean results reach "
                f"{np.nanmax(row_pp):.1f} pp; full scores are percentage points: multiply them by 100")
        warn(f"target: every full score is within [0, 1] pp (max {top:g}); full scores are percentage points, "
             "so if these are fractions multiply them by 100", stacklevel=3)


def _ids(ids, n: int, what: str, prefix: str) -> np.ndarray:
    if ids is None:
        return np.array([f"{prefix}{i}" for i in range(n)])
    ids = np.asarray(ids)
    if ids.dtype == object:
        gone = [i for i, v in enumerate(ids.ravel().tolist()) if v is None or (isinstance(v, float) and v != v)]
        if gone:
            raise InputError(f"{what}: {len(gone)} empty or missing name(s) (None or NaN), first at position "
                             f"{gone[0]}; give every {what[:-1]} a name")
    if ids.ndim != 1:
        raise InputError(f"{what}: expected a 1-D array of ids, got shape {ids.shape}")
    if len(ids) != n:
        axis = "rows" if what == "models" else "columns"
        raise InputError(f"{what}: {len(ids)} ids for {n} {axis} of responses; give one id per {axis[:-1]}")
    ids = ids.astype(str)
    empty = np.flatnonzero(np.char.str_len(np.char.strip(ids)) == 0) if ids.size else np.array([], int)
    if empty.size:
        raise InputError(f"{what}: {empty.size} empty or missing name(s), first at position {empty[0]}; give every "
                         f"{what[:-1]} a name")
    uniq, counts = np.unique(ids, return_counts=True)
    if (counts > 1).any():
        dups = uniq[counts > 1]
        raise InputError(f"{what}: {dups.size} duplicate id(s), e.g. {', '.join(map(repr, dups[:3].tolist()))}; "
                         f"ids must be unique (merge or rename the duplicates)")
    return ids
