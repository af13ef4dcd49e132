"""Suite helpers for notebook 11 and ``benchmarks/``: the shared split, why pooling helps, a new model's check."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..data import split_models
from ..data._runtime import single_thread
from ..data.errors import InputError
from ..reconstructors.simple import RidgeReconstructor
from .data import Suite, make_suite

__all__ = ["suite_split", "cross_prediction", "target_correlations", "restrict_to_logged", "new_model_check"]


def suite_split(suite: Suite, seed: int, test: float = 0.2, val: float = 0.1, kind: str = "random"):
    """:func:`essence.data.split_models` on the suite mean (``kind``: random or top)."""
    return split_models(suite.mean_target, test=test, val=val, seed=seed, kind=kind)


def target_correlations(suite: Suite) -> pd.DataFrame:
    """``(members, members)`` Pearson correlations of the members' full scores over the suite's models."""
    return pd.DataFrame(np.corrcoef(suite.targets.T), index=suite.names, columns=suite.names)


def cross_prediction(suite: Suite, seeds=(0,), k_each: int = 50, test: float = 0.2, val: float = 0.1) -> pd.DataFrame:
    """Test RMSE (pp) of a ridge per member from random items of its own, of every member and all its own items."""
    rows = []
    R, Y = suite.pooled().responses, suite.targets
    for seed in seeds:
        sp = suite_split(suite, seed, test, val)
        fit, te = np.r_[sp.train, sp.val], sp.test
        rng = np.random.default_rng([int(seed), 11])
        own = [rng.choice(b, size=min(k_each, b.size), replace=False) for b in suite.blocks]
        with single_thread():
            for b, name in enumerate(suite.names):
                err = {}
                for label, cols in (("own", own[b]), ("all", np.concatenate(own)), ("own_pool", suite.blocks[b])):
                    pred = RidgeReconstructor().fit(R[fit][:, cols], Y[fit, b]).predict(R[te][:, cols])
                    err[label] = float(np.sqrt(np.mean((pred - Y[te, b]) ** 2)))
                rows.append({"seed": seed, "benchmark": name, **err, "gain": 1 - err["all"] / err["own"]})
    return pd.DataFrame(rows)


def restrict_to_logged(suite: Suite, new) -> Suite:
    """The suite with each member kept to the items a new model answered (``new``: one Responses per member)."""
    new = list(new)
    if len(new) != len(suite.members):
        raise InputError(f"restrict_to_logged: {len(new)} results for a suite of {len(suite.members)} members; "
                         "give one per member, in the suite's order")
    kept = []
    for member, r in zip(suite.members, new):
        have = set(r.items.tolist())
        cols = np.array([i for i, c in enumerate(member.items.tolist()) if c in have], dtype=np.intp)
        if not cols.size:
            raise InputError(f"restrict_to_logged: the new model has no answer on any of {member.name}'s items; "
                             "check that its results belong to that benchmark")
        kept.append(member.subset(items=cols))
    out = make_suite(kept, suite.names)
    outside = tuple(None if o is None else o.subset(items=m.items.astype(str)) for o, m in zip(suite.outside, kept))
    return Suite(out.members, dict(suite.dropped), outside)


def new_model_check(art, new, reference: dict, chance: dict | None = None) -> pd.DataFrame:
    """One new model's suite estimate against ``reference`` (member -> pp): one row per member and ``mean`` with
    ``estimate``, ``lower``, ``upper``, ``reference``, ``difference``, ``inside`` (and ``chance`` when given)."""
    est = art.estimate(new)
    if len(est) != 1:
        raise InputError(f"new_model_check: expected the results of one model, got {len(est)}")
    missing = [n for n in art.names if n not in reference]
    if missing:
        raise InputError(f"new_model_check: no reference for {', '.join(missing)}")
    ref = {n: float(reference[n]) for n in art.names}
    ref["mean"] = float(np.mean([ref[n] for n in art.names]))
    rows = []
    for name in [*art.names, "mean"]:
        e, lo, hi = (float(est[c].iloc[0]) for c in (name, f"{name}_lower", f"{name}_upper"))
        row = {"benchmark": name, "estimate": e, "lower": lo, "upper": hi, "reference": ref[name],
               "difference": e - ref[name], "inside": bool(lo <= ref[name] <= hi)}
        if chance is not None:
            row["chance"] = float(np.mean([chance[n] for n in art.names]) if name == "mean" else chance[name])
        rows.append(row)
    return pd.DataFrame(rows).set_index("benchmark")
