"""Is model b better than model a? The difference of their estimated full scores from the compressed items, its
interval, and a verdict.

Both models answer the same chosen items, so the interval is calibrated for the *difference* on pairs of
reference models (:class:`essence.reconstructors.pairs.PairInterval`): where the two answer alike it is narrow.
The calibration follows which estimate answers each model: the regression for both, the frontier estimate for both,
or one of each (``mixed``). Where the regression answers a model outside the references (it extrapolates there,
unlike any reference pair), or the artifact holds no pair calibration (written before it had one: ``essence
refit`` adds one), the two models' own intervals are combined as independent errors instead (wider).

Verdicts, for the interval ``[lower, upper]`` of ``b - a`` (pp) and a margin ``m >= 0`` (pp):

- ``equivalent``: ``-m < lower`` and ``upper < m`` (two one-sided tests at the interval's level: a 90 % interval
  is a TOST at 5 %);
- ``better``: ``lower > 0``; ``worse``: ``upper < 0``;
- ``undecided``: none of these; ``items_needed`` then says about how many chosen items (the interval's half-width
  shrinks as ``1 / sqrt(k)``) would decide it: compress an artifact that large, or run both models in full.
"""

from __future__ import annotations

import math

import numpy as np

from ..data.errors import InputError
from .base import items_hash

__all__ = ["compare", "verdicts", "items_needed", "VERDICTS", "GATES", "gate_failures", "check_same_items"]

VERDICTS = ("better", "worse", "equivalent", "undecided")
#: ``--fail-if`` choices -> the verdicts that fail the gate
GATES = {"worse": ("worse",), "not-better": ("worse", "equivalent", "undecided"),
         "not-equivalent": ("better", "worse", "undecided"), "undecided": ("undecided",)}


def verdicts(lower, upper, margin: float) -> np.ndarray:
    """``(n,)`` verdicts (module docstring) for intervals ``lower``, ``upper`` ``(n,)`` of ``b - a`` in pp."""
    lo, hi = np.asarray(lower, dtype=np.float64), np.asarray(upper, dtype=np.float64)
    out = np.full(lo.shape, "undecided", dtype=object)
    out[lo > 0] = "better"
    out[hi < 0] = "worse"
    out[(lo > -margin) & (hi < margin)] = "equivalent"
    return out


def items_needed(difference, half_width, k: int, margin: float, n_items: int | None = None) -> list:
    """Per pair, about how many chosen items would decide an undecided comparison: the half-width must fall below
    ``|difference|`` (a direction) or ``margin - |difference|`` (equivalence), whichever is larger; half-widths
    shrink as ``1 / sqrt(k)``. None where that target is 0; capped at ``n_items`` (the whole benchmark)."""
    out = []
    for d, h in zip(np.abs(np.asarray(difference, dtype=np.float64)), np.asarray(half_width, dtype=np.float64)):
        target = max(d, margin - d)
        if target <= 1e-9 or not math.isfinite(h):
            out.append(None)
            continue
        need = max(int(k) + 1, math.ceil(k * (h / target) ** 2))
        out.append(min(need, n_items) if n_items else need)
    return out


def check_same_items(art, other, what: str = "--baseline-artifact") -> None:
    """InputError unless ``other`` asks the same items as ``art`` (their :func:`items_hash`)."""
    h1, h2 = items_hash(art.items), items_hash(other.items)
    if h1 != h2:
        raise InputError(f"{what}: its items ({h2}) differ from the artifact's ({h1}); results run on one subset "
                         "cannot be compared through the other; run both models on the same artifact's items "
                         "(`essence refit` keeps an artifact's items while refitting it)")


def _pairs(models: list[str], a: str | None, b: str | None) -> list[tuple[int, int]]:
    pos = {m: i for i, m in enumerate(models)}
    for flag, name in (("--a", a), ("--b", b)):
        if name is not None and name not in pos:
            near = ", ".join(models[:5]) + (" ..." if len(models) > 5 else "")
            raise InputError(f"{flag} {name!r}: no such model in the responses (they hold {near}); name a model of "
                             "RESPONSES")
    if a is not None and b is not None:
        if a == b:
            raise InputError(f"--a and --b both name {a!r}; name two different models")
        return [(pos[a], pos[b])]
    if a is not None:
        return [(pos[a], j) for j in range(len(models)) if j != pos[a]]
    if b is not None:
        return [(i, pos[b]) for i in range(len(models)) if i != pos[b]]
    if len(models) < 2:
        raise InputError(f"the responses hold {len(models)} model(s); a comparison needs two (add the baseline's "
                         "results: several RESPONSES files are read together)")
    return [(i, j) for i in range(len(models)) for j in range(i + 1, len(models))]


def _answers(art, data, fallback: bool = False) -> tuple:
    """``(models, X (n, k))`` of one results source or a list of them (models pooled; a name twice is refused);
    with ``fallback``, also ``Xf`` ``(n, m)``: the answers on the artifact's fallback sample (NaN where absent), or
    None when no source holds any."""
    parts = [art._matrix(d, fallback=True) if fallback else (*art._matrix(d), None)
             for d in (data if isinstance(data, (list, tuple)) else [data])]
    models = [str(m) for ms, *_ in parts for m in ms]
    seen = set()
    for m in models:
        if m in seen:
            raise InputError(f"model {m!r} appears in more than one results row or file; give each model once")
        seen.add(m)
    X = np.vstack([X for _, X, _ in parts])
    if not fallback:
        return models, X
    if all(Xf is None for *_, Xf in parts):
        return models, X, None
    m = len(art.fallback_items)
    return models, X, np.vstack([np.full((len(ms), m), np.nan) if Xf is None else Xf for ms, _, Xf in parts])


def compare(art, data, a: str | None = None, b: str | None = None, margin: float = 1.0, baseline=None,
            fallback: bool = False):
    """A DataFrame, one row per pair ``(a, b)`` of models in ``data`` (every pair in file order, or those with the
    named ``a`` and/or ``b``; ``data`` one results source or a list, pooled; a suite artifact: one per benchmark,
    and rows per benchmark and for the suite mean): ``benchmark``, ``a``, ``b``, ``estimate_a``, ``estimate_b``,
    ``difference`` (b - a, pp),
    ``lower``, ``upper`` (the artifact's level, pp), ``discordance`` (share of chosen items the two answer
    differently), ``calibration`` (the pair calibration used: ``regression``, ``frontier`` or ``mixed``, by
    which estimate answers each model; ``independent``: the two intervals combined), ``verdict``,
    ``items_needed``. ``baseline``: the artifact another model's results were run with; refused (InputError)
    unless it asks the same items. ``fallback``: a model outside the references that answered the artifact's
    fallback sample is estimated from both (as ``essence estimate`` does); its pairs combine the two intervals
    (``independent``), the pair calibrations being those of the chosen items."""
    from ..reconstructors.pairs import discordance

    if not (isinstance(margin, (int, float)) and math.isfinite(margin) and margin >= 0):
        raise InputError(f"margin: {margin!r} is not a margin in pp; give a number >= 0 (e.g. 1 for +-1 pp)")
    if baseline is not None:
        check_same_items(art, baseline)
    if hasattr(art, "names"):  # a suite: each benchmark and the suite mean
        return _compare_suite(art, data, a, b, margin)
    use = fallback and bool(getattr(art, "fallback_items", None))
    models, X, Xf = _answers(art, data, True) if use else (*_answers(art, data), None)
    est = art.estimates(X, Xf)
    ia, ib = (np.array(v, dtype=np.intp) for v in zip(*_pairs(models, a, b)))
    diff = est["estimate"][ib] - est["estimate"][ia]
    delta = discordance(X[ia], X[ib])
    by_a, by_b = est["answered_by"][ia], est["answered_by"][ib]
    kind = np.where(by_a == by_b, by_a, "mixed").astype(object)
    # a model the regression answers outside the references (below them) is extrapolated: no pair calibration
    lost = ((by_a == "regression") & est["outside"][ia]) | ((by_b == "regression") & est["outside"][ib])
    lost |= (by_a == "fallback sample") | (by_b == "fallback sample")
    kind[lost] = "independent"
    half = np.zeros(diff.shape)
    for name, pi in (art.pairs or {}).items():
        half = np.where(kind == name, pi.half_width(delta), half)
    paired = np.isin(kind, list(art.pairs or {}))
    lower, upper = _independent(est["estimate"], est["lower"], est["upper"], ia, ib)
    lower, upper = np.where(paired, diff - half, lower), np.where(paired, diff + half, upper)
    return _rows(art.dataset.get("name", ""), models, ia, ib, est["estimate"], lower, upper, delta,
                 np.where(paired, kind, "independent"), margin, art.k, art.dataset.get("n_items"))


def _independent(e, lo, hi, ia, ib) -> tuple[np.ndarray, np.ndarray]:
    """``(lower, upper)`` of ``e[ib] - e[ia]`` with the two models' own intervals ``[lo, hi]`` combined as
    independent errors: b's lower error with a's upper one, and the other way round."""
    diff = e[ib] - e[ia]
    return (diff - np.hypot(e[ib] - lo[ib], hi[ia] - e[ia]), diff + np.hypot(hi[ib] - e[ib], e[ia] - lo[ia]))


def _rows(benchmark, models, ia, ib, e, lower, upper, delta, calibration, margin: float, k: int, n_items):
    """:func:`compare`'s table for the pairs ``(ia, ib)`` of one benchmark: estimates ``e`` ``(n,)``, the
    intervals of ``e[ib] - e[ia]``, their verdicts and, where undecided, the items that would decide them."""
    import pandas as pd

    diff = e[ib] - e[ia]
    verdict = verdicts(lower, upper, margin)
    need = items_needed(diff, (upper - lower) / 2, k, margin, n_items)
    return pd.DataFrame({
        "benchmark": benchmark, "a": [models[i] for i in ia], "b": [models[j] for j in ib], "estimate_a": e[ia],
        "estimate_b": e[ib], "difference": diff, "lower": lower, "upper": upper, "discordance": delta,
        "calibration": calibration, "verdict": verdict,
        "items_needed": [n if v == "undecided" else None for n, v in zip(need, verdict)]})


def _compare_suite(art, data, a, b, margin: float):
    """:func:`compare` for a suite artifact: rows per pair for every benchmark and for the suite mean, each the
    difference of the estimates with the two models' intervals combined as independent errors (a suite artifact
    holds no pair calibration)."""
    import pandas as pd

    from ..reconstructors.pairs import discordance

    models, X, _ = art._matrix(data)
    models = [str(m) for m in models]
    est = art._predict(X)
    ia, ib = (np.array(v, dtype=np.intp) for v in zip(*_pairs(models, a, b)))
    delta = discordance(X[ia], X[ib])
    sizes = art.dataset.get("n_items", {})
    frames = []
    for name in [*art.names, "mean"]:
        e = est[name]
        lower, upper = _independent(e, *art._interval_of(name).interval(e), ia, ib)
        n_items = sum(sizes.values()) if name == "mean" else sizes.get(name)
        frames.append(_rows(name, models, ia, ib, e, lower, upper, delta, "independent", margin, art.k, n_items))
    return pd.concat(frames, ignore_index=True)


def _on(benchmark) -> str:
    return f" on {benchmark}" if benchmark else ""


def gate_failures(df, fail_if: str, level: float = 0.9) -> list[str]:
    """The lines saying which pairs fail the gate ``fail_if`` (a key of :data:`GATES`); empty when all pass."""
    if fail_if not in GATES:
        raise InputError(f"--fail-if {fail_if!r}: not a gate; use one of {', '.join(GATES)}")
    bad = df[df["verdict"].isin(GATES[fail_if])]
    return [f"gate --fail-if {fail_if}: {r.b} vs {r.a}{_on(getattr(r, 'benchmark', ''))}: {r.verdict} "
            f"({r.difference:+.2f} pp, {level:.0%} interval {r.lower:+.2f} to {r.upper:+.2f})"
            for r in bad.itertuples()]
