"""What an estimate means: the lines ``essence estimate --context`` and ``essence run`` print under the numbers."""

from __future__ import annotations

import math

import numpy as np

__all__ = ["CHANCE", "percentile_among", "answered_counts", "context_lines"]

#: chance level (pp) of the shipped benchmarks whose items all have the same number of options (truthfulqa's
#: depends on the items: ``essence run`` computes it from the harness requests)
CHANCE = {"arc": 25.0, "mmlu": 25.0, "winogrande": 50.0, "gsm8k": 0.0}


def percentile_among(value: float, quantiles) -> float:
    """Percent of reference models scoring below ``value``, interpolated in their percentiles ``quantiles``."""
    q = np.asarray(quantiles, dtype=np.float64)
    if value <= q[0]:
        return 0.0
    if value >= q[-1]:
        return 100.0
    lo = np.searchsorted(q, value, side="left")
    hi = np.searchsorted(q, value, side="right")
    if hi > lo:  # equal quantiles: the middle of their span
        return float(np.linspace(0, 100, q.size)[lo:hi].mean())
    return float(np.interp(value, q, np.linspace(0, 100, q.size)))


def _missing(v) -> bool:
    try:
        return bool(np.isnan(v))
    except TypeError:
        return v is None


def _reference_range(art, q) -> tuple[float, float]:
    """``(lowest, highest)`` pp: the scores of the models the reconstructor was fitted on where it records them (the
    frontier estimate), else the dataset's recorded range ``q``."""
    yq = getattr(getattr(art, "reconstructor", None), "y_quantiles_", None)
    if yq is not None and len(yq) >= 2:
        return float(yq[0]), float(yq[-1])
    return float(q[0]), float(q[-1])


def answered_counts(art, responses) -> dict:
    """``{model: how many of the artifact's chosen items it has a result on}`` in ``responses`` (a Responses)."""
    pos = {s: i for i, s in enumerate(responses.items.tolist())}
    have = (~np.isnan(responses.responses[:, [pos[i] for i in art.items if i in pos]])).sum(axis=1)
    return dict(zip(responses.models.tolist(), have.tolist()))


def context_lines(art, estimates, n_answered=None, chance: dict | float | None = None) -> list[str]:
    """Lines for the rows of ``estimates`` (:meth:`~essence.artifact.compressed.Compressed.estimate`'s DataFrame).
    ``n_answered``: ``{model: items with a result}`` (None: not shown); ``chance``: pp, one value or
    ``{model: pp}`` (None: :data:`CHANCE` of the artifact's dataset). Where ``estimates`` has the ``outside`` column,
    the note that the estimate extrapolates follows it (a row flagged outside gets it, one not flagged does not), so
    the flag and the note agree; the reference range it names is the reconstructor's own (the models it was fitted
    on) where it records one, else the dataset's."""
    ds = art.dataset
    q = ds.get("target_quantiles")
    name = ds.get("name", "the dataset")
    level = f"{art.interval.level:.0%}"
    lines = []
    for row in estimates.itertuples(index=False):
        est, lo, hi = float(row.estimate), float(row.lower), float(row.upper)
        used = "" if n_answered is None else f", scored on {n_answered.get(row.model, '?')} of the {art.k} chosen items"
        lines.append(f"{row.model}: estimated full score {est:.2f} pp, {level} interval [{lo:.2f}, {hi:.2f}] "
                     f"({art.method}, k={art.k}{used})")
        n_ref = ds.get("n_models", "?")
        if q is None:
            lines.append(f"  among the {n_ref} reference models: unknown (the artifact records no score distribution; "
                         "re-run `essence compress` to record it)")
        else:
            pct = percentile_among(est, q)
            lines.append(f"  among the {n_ref} reference models of {name} (full scores {q[0]:.1f}-{q[-1]:.1f} pp, "
                         f"median {q[50]:.1f}): percentile {pct:.1f}")
            lo_ref, hi_ref = _reference_range(art, q)
            beyond = est < lo_ref or est > hi_ref
            flag = getattr(row, "outside", None)
            outside = beyond if flag is None or _missing(flag) else bool(flag)
            if outside:
                side = ("below the weakest" if est < lo_ref or (est <= hi_ref and est < q[50])
                        else "above the strongest")
                what = "the estimate is" if beyond else "the model's answers place it"
                by = getattr(row, "answered_by", None)
                fb = getattr(art, "fallback_items", None) or []
                if by == "fallback sample":
                    lines.append(f"  note: outside the references ({what} {side} reference model, fitted on "
                                 f"{lo_ref:.1f}-{hi_ref:.1f} pp): estimated from the fallback sample, items drawn at "
                                 "random, whose validity does not rest on the references")
                elif fb:
                    lines.append(f"  note: outside the references: {what} {side} reference model ({lo_ref:.1f}-"
                                 f"{hi_ref:.1f} pp), where they say little about it; answer the {len(fb)} items of the "
                                 "fallback sample too (`essence items ARTIFACT --fallback`) and estimate again for an "
                                 "estimate whose validity comes from item sampling")
                else:
                    lines.append(f"  note: outside the references: {what} {side} reference model: the reconstructor "
                                 f"was fitted on models scoring {lo_ref:.1f}-{hi_ref:.1f} pp and extrapolates here; "
                                 "treat it with care")
            elif beyond:  # a regression flag that reads the answers (inside) while the estimate is beyond them
                side = "below the weakest" if est < lo_ref else "above the strongest"
                lines.append("  note: not flagged outside (its answers on the chosen items lie within the "
                             f"references'), but the estimate is {side} reference model ({lo_ref:.1f}-{hi_ref:.1f} pp): the "
                             "regression extrapolates here; treat it with care")
            elif pct < 2 or pct > 98:
                side = "weakest" if pct < 2 else "strongest"
                lines.append(f"  note: among the {side} 2% of the reference models, where estimates are least accurate "
                             "(the reconstructor has few models to learn from there)")
        c = chance.get(row.model) if isinstance(chance, dict) else CHANCE.get(name) if chance is None else chance
        if c is not None and not math.isnan(c):
            rel = "below" if hi < c else ("above" if lo > c else "within the interval of")
            lines.append(f"  chance level: {c:.1f} pp; the estimate is {rel} chance"
                         + (" (guessing scores about this much)" if rel != "above" else ""))
    return lines
