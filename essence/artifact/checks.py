"""Checks of an artifact's content on load: one changed after it was written is refused as *damaged*."""

from __future__ import annotations

import math
import numbers
from collections import Counter

import numpy as np

from ..data.errors import InputError
from ..reconstructors.base import reconstructor_from_dict
from ..reconstructors.intervals import IntervalModel
from .base import items_hash

__all__ = ["check_artifact", "NULLABLE_LISTS"]

#: list fields whose entries may be null in a valid artifact (gpirt: items without a fixed probability)
NULLABLE_LISTS = {"pool_p_fixed"}


def _damaged(source: str, field: str, problem: str) -> InputError:
    return InputError(f"{source}: damaged artifact: {field} {problem}; the file was changed or broken after "
                      "`essence compress` wrote it; recreate it with `essence compress`")


def _is_number(v) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def _bad_number(obj, path: str, key: str = "") -> tuple[str, object] | None:
    """First ``(path, value)`` of a non-finite number, or of a null inside a list of numbers; None if none."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            hit = _bad_number(v, f"{path}.{k}", str(k))
            if hit:
                return hit
    elif isinstance(obj, list):
        numeric = any(_is_number(v) for v in obj)
        for i, v in enumerate(obj):
            if v is None and numeric and key not in NULLABLE_LISTS:
                return f"{path}[{i}]", None
            hit = _bad_number(v, f"{path}[{i}]", key)
            if hit:
                return hit
    elif _is_number(obj) and not math.isfinite(float(obj)):
        return path, obj
    return None


def _weights(obj, path: str = "reconstructor"):
    """Every ``(path, list)`` stored under a key ``weights`` in ``obj``."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k == "weights" and isinstance(v, list):
                yield f"{path}.{k}", v
            else:
                yield from _weights(v, f"{path}.{k}")
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _weights(v, f"{path}[{i}]")


def check_artifact(d: dict, source: str):
    """``(reconstructor, interval)`` rebuilt from ``d``; InputError naming the damaged field."""
    k = d["k"]
    if not _is_number(k) or not float(k).is_integer() or k < 1:
        raise _damaged(source, "k", f"is {k!r}, not a whole number >= 1")
    k = int(k)
    if not _is_number(d["seed"]) or not float(d["seed"]).is_integer():
        raise _damaged(source, "seed", f"is {d['seed']!r}, not a whole number")
    items = d["items"]
    if not isinstance(items, list) or not all(isinstance(i, str) and i.strip() for i in items):
        raise _damaged(source, "items", "is not a list of non-empty item ids")
    if len(items) != k:
        raise _damaged(source, "items", f"holds {len(items)} ids but k is {k}")
    counts = Counter(items)
    dups = [i for i, n in counts.items() if n > 1]
    if dups:
        raise _damaged(source, "items", f"names {dups[0]!r} {counts[dups[0]]} times (item ids must be distinct)")
    if "items_hash" in d and d["items_hash"] != (h := items_hash(items)):
        raise _damaged(source, "items_hash", f"is {d['items_hash']!r} but the items hash to {h!r}")
    if not isinstance(d["params"], dict):
        raise _damaged(source, "params", "is not an object")
    for field in ("reconstructor", "interval", *(("pairs",) if "pairs" in d else ())):
        if not isinstance(d[field], dict):
            raise _damaged(source, field, "is not an object")
        hit = _bad_number(d[field], field)
        if hit:
            raise _damaged(source, hit[0], f"is {'null' if hit[1] is None else repr(hit[1])}, not a finite number")
    for path, w in _weights(d["reconstructor"]):
        if len(w) != k:
            raise _damaged(source, path, f"holds {len(w)} weights for {k} chosen items")
        if not all(_is_number(v) for v in w):
            raise _damaged(source, path, "holds a value that is not a number")
        if min(w) < 0:
            raise _damaged(source, path, f"holds a negative weight ({min(w):g}); weights are >= 0")
        if sum(w) <= 0:
            raise _damaged(source, path, "are all zero; at least one chosen item needs a positive weight")
    rec_d = d["reconstructor"]
    if "k" in rec_d and rec_d["k"] != k:
        raise _damaged(source, "reconstructor.k", f"is {rec_d['k']!r} but the artifact chose {k} items")
    iv = d["interval"]
    checks = (("level", lambda v: 0 < v < 1, "in (0, 1)"), ("q", lambda v: v >= 0, ">= 0"),
              ("bandwidth", lambda v: v > 0, "> 0"))
    for name, ok, allowed in checks:
        v = iv.get(name)
        if not _is_number(v) or not ok(v):
            raise _damaged(source, f"interval.{name}", f"is {v!r}; it must be a number {allowed}")
    scale_y = iv.get("scale", {}).get("y") if isinstance(iv.get("scale"), dict) else None
    if not isinstance(scale_y, list) or not all(_is_number(v) and v >= 0 for v in scale_y):
        raise _damaged(source, "interval.scale.y", "is not a list of numbers >= 0 (interval half-widths)")
    try:
        rec = reconstructor_from_dict(rec_d)
    except (InputError, KeyError, TypeError, ValueError, IndexError) as exc:
        raise _damaged(source, "reconstructor", f"cannot be rebuilt ({type(exc).__name__}: {exc})") from None
    try:
        interval = IntervalModel.from_dict(iv)
    except (InputError, KeyError, TypeError, ValueError, IndexError) as exc:
        raise _damaged(source, "interval", f"cannot be rebuilt ({type(exc).__name__}: {exc})") from None
    probe = np.array([np.zeros(k), np.ones(k), np.full(k, 0.5)])
    try:
        est = np.asarray(rec.predict(probe), dtype=np.float64)
    except (InputError, KeyError, TypeError, ValueError, IndexError, np.linalg.LinAlgError) as exc:
        raise _damaged(source, "reconstructor", f"cannot estimate ({type(exc).__name__}: {exc})") from None
    if est.shape != (3,) or not np.isfinite(est).all():
        raise _damaged(source, "reconstructor", "gives non-finite estimates")
    return rec, interval
