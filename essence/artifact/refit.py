"""``refit``: the same chosen items, the reconstructor and both intervals fitted again on more reference models.

A team that froze a subset keeps asking new models the same items; as newer models are evaluated in full they
become references, and refitting on them keeps the estimates current. The items, their order and their hash
(:func:`essence.artifact.base.items_hash`) stay. No calibration comes out narrower than the parent's: the items were
chosen to fit the parent's references, so cross-validation on the fixed items over them is optimistic (the
parent's came from folds that chose the items inside them). ``lineage`` gains one entry per refit.
"""

from __future__ import annotations

import datetime as _dt

import numpy as np
from sklearn.base import clone

from ..data import Responses, split_models
from ..data._runtime import single_thread
from ..data.checks import whole_number
from ..data.errors import InputError
from ..reconstructors.base import fit_reconstructor
from ..reconstructors.frontier import Z90
from ..reconstructors.tables import Table1D
from .compressed import Compressed, _figures, _item_means, calibrate, dataset_record, estimates

__all__ = ["refit"]

#: parameters of a kind with its own calibration that the refit computes again (None: by cross-validation)
_RECALIBRATED = ("d", "s_inner", "c_d", "d_quantiles")


def _positions(params: dict, old_k: int, pos: np.ndarray) -> dict:
    """``params`` with an ``items`` list of the ``old_k`` chosen items' pool positions set to ``pos`` (nested
    ``inner`` specs too)."""
    out = dict(params)
    if isinstance(out.get("items"), (list, tuple)) and len(out["items"]) == old_k:
        out["items"] = pos.tolist()
    inner = out.get("inner")
    if isinstance(inner, dict) and isinstance(inner.get("params"), dict):
        out["inner"] = {**inner, "params": _positions(inner["params"], old_k, pos)}
    return out


def _never_narrower(new, parent) -> None:
    """Widen ``new`` (an IntervalModel or PairInterval: ``q_`` times the ``scale_`` table) in place to ``parent``'s
    half-widths wherever the parent's are wider."""
    x = new.scale_.x
    half = np.maximum(new.q_ * new.scale_.y, parent.q_ * parent.scale_(x))
    if new.q_ > 0:
        new.scale_ = Table1D(x, half / new.q_)


def refit(art, data: Responses, seed: int | None = None, val: float = 0.1):
    """A new :class:`~essence.artifact.compressed.Compressed` with ``art``'s items, its reconstructor kind and
    parameters fitted on every model of ``data`` (which must hold every chosen item; the pool, for a kind that
    reads it), its interval and pair interval calibrated on cross-fits (validation: a stratified ``val``
    fraction), and ``lineage`` extended. ``figures["validation"]`` are those cross-fitted figures; there is no
    test part (every model is a reference): :meth:`~essence.artifact.compressed.Compressed.evaluate` it on models
    it has not seen."""
    if not isinstance(data, Responses):
        raise InputError("data: expected a Responses (see essence.data.load)")
    if not isinstance(art, Compressed):
        raise InputError(f"refit: a {type(art).__name__} cannot be refitted; refit each benchmark's compressed "
                         "artifact")
    seed = art.seed if seed is None else whole_number("seed", seed, 0)
    pos_of = {s: i for i, s in enumerate(data.items)}
    missing = [s for s in art.items if s not in pos_of]
    if missing:
        raise InputError(f"refit: {len(missing)} of the artifact's {art.k} items are missing from {data.name} "
                         f"(e.g. {missing[0]!r}); refit on results of the same benchmark that hold every chosen item")
    idx = np.array([pos_of[s] for s in art.items], dtype=np.intp)
    sp = split_models(data, test=0.0, val=val, seed=seed)
    order = np.r_[sp.train, sp.val]
    R, y = data.responses[order], data.target[order]
    rec = clone(art.reconstructor)
    params = _positions(rec.get_params(deep=False), art.k, idx)
    fallback_items = [s for s in art.fallback_items if s in pos_of]  # the sample's items these data still hold
    if "fallback" in params:
        params["fallback"] = [pos_of[s] for s in fallback_items]
    if getattr(rec, "has_interval", False):
        params.update({p: None for p in _RECALIBRATED if p in params})
    rec.set_params(**params)
    with single_thread():
        rec = fit_reconstructor(rec, R[:, idx], y, R)
        interval, pairs, pred_cf = calibrate(rec, R, y, idx, sp.train.size, seed, art.interval.level)
    for name in ("s_inner_", "c_d_"):
        if hasattr(rec, name) and hasattr(art.reconstructor, name):
            setattr(rec, name, max(getattr(rec, name), getattr(art.reconstructor, name)))
            rec.__dict__.pop("_state", None)
    _never_narrower(interval, art.interval)
    if getattr(rec, "has_interval", False) and hasattr(rec, "s_inner_table_"):
        # inside the references the frontier estimate's interval is G +- Z90 s_G: as a table over G from the
        # refit's scale curve (newer, stronger references often err more than the old ones), never below the
        # calibrated constant
        x = interval.scale_.x
        rec.s_inner_table_ = Table1D(x, np.maximum(rec.s_inner_, interval.q_ * interval.scale_(x) / Z90))
        rec.__dict__.pop("_state", None)
    for kind, parent in (art.pairs or {}).items():  # the frontier's pair calibrations need the parent's folds
        if kind in pairs:
            _never_narrower(pairs[kind], parent)
            pairs[kind].residuals = f"refit ({parent.residuals} parent)"
        else:
            pairs[kind] = parent
    lo, hi = interval.interval(pred_cf)
    figures = {"validation": _figures(y, pred_cf, lo, hi, "refit figures", warn_few=False)}
    dataset = {**art.dataset, **dataset_record(data, data, R[:, idx],
                                               reference_item_means=_item_means(data, R, idx, seed))}
    dataset.pop("items_left_out", None)
    subset_q = dataset["subset_quantiles"]
    figures["validation"]["outside"] = float(np.mean(estimates(rec, interval, subset_q, R[:, idx])["outside"]))
    parent = {"created": art.created, "fingerprint": art.dataset.get("fingerprint"),
              "n_models": art.dataset.get("n_models"), "essence_version": art.essence_version}
    now = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    return Compressed(
        method=art.method, k=art.k, seed=seed, params=art.params, items=list(art.items), reconstructor=rec,
        interval=interval, pairs=pairs, lineage=[*art.lineage, {"refit_of": parent, "refitted": now}],
        fallback_items=fallback_items if "fallback" in params else [],
        dataset=dataset, figures=figures,
        split={"seed": int(seed), "kind": "refit", "test": 0.0, "val": val, "n_train": int(sp.train.size),
               "n_val": int(sp.val.size), "n_test": 0},
        selection={**art.selection, "refit": {"n_models": data.n_models}}, created=now)
