"""The claims ledger: each published number (:mod:`essence.lessons.claims`) beside our measurement at the closest
setting the shipped data allow, with a verdict.

Ours is a mean with an interval (:func:`interval`) over seeds of the sweep's test metric, of paired per-seed RMSE
ratios (ablation, adaptive runs) or over the benchmarks of ``results/frontier.csv``. Verdicts (:func:`verdict`):
``not testable here: <reason>``, ``not run``, ``not measured here`` (table absent), ``reproduced`` (the published
value within our interval or 10 % of it, 0.01 for agreement figures; for a directional claim: the interval on the
claimed side), ``not reproduced, R x`` (R = ours / published) or ``inconclusive`` (an interval across the value)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from .claims import CLAIMS, Claim
from ..data.errors import InputError

__all__ = ["Measure", "PLAN", "runs_needed", "ledger_table", "verdict", "interval", "read_results"]

#: published metric kind -> column of the sweep's tidy table
_COLUMN = {"rmse": "rmse", "mae": "mae", "kendall": "kendall", "share_within_5pct_rank": "rank_err_5"}


@dataclass(frozen=True)
class Measure:
    """How we measure one claim, or why we cannot (``reason``). ``source``: ``sweep`` (``dataset`` x ``method`` x
    ``k``), ``ablation`` (:data:`ABLATION`'s after / before), ``adaptive`` (``method`` / ``ratio_to`` on ``split``;
    ``dataset`` may join pools with ``+``) or ``frontier`` (``method`` on ``split`` / ``ratio_to`` (default
    ``method``) on ``base_split``)."""

    dataset: str | None = None
    method: str | None = None
    k: int | None = None
    reason: str = ""
    setting: str = ""
    source: str = "sweep"
    ratio_to: str = ""
    split: str = "random"
    base_split: str = ""


#: the refinement ablation: EssenceBench with refinement rounds off (before) and on (after)
ABLATION = {"before": {"rounds": 0}, "after": {}}
ABLATION_K = 50
#: the items of the adaptive claims' comparison (benchmarks/adaptive.py)
ADAPTIVE_K = 50
_NO_HELLASWAG = "HellaSwag is not in the shipped data"
_NO_SPARSEEVAL = "SparseEval is not implemented here"
_V2 = "openllm_v2 (four whole benchmarks, frontier.csv: five seeds each)"
_ABL = dict(source="ablation", setting=f"ratio with / without refinement at k = {ABLATION_K}")
PLAN: dict[str, Measure] = {
    "eb_gsm8k_200": Measure("gsm8k", "essence", 200),
    "eb_gsm8k_500": Measure("gsm8k", "essence", 500),
    "eb_arc_200": Measure("arc", "essence", 200),
    "eb_winogrande_200": Measure("winogrande", "essence", 200),
    "eb_mmlu_300": Measure("mmlu", "essence", 300),
    "eb_gsm8k_200_kendall": Measure("gsm8k", "essence", 200),
    "eb_arc_100": Measure("arc", "essence", 100, setting="our ARC pool is ARC-Challenge's metabench items"),
    "eb_refinement_gsm8k_before": Measure("gsm8k", "essence", ABLATION_K, **_ABL),
    "eb_refinement_gsm8k_after": Measure("gsm8k", "essence", ABLATION_K, **_ABL),
    "eb_hellaswag_50_rank": Measure("mmlu", "essence", 50, setting=f"{_NO_HELLASWAG}; MMLU's pool instead"),
    "eb_ppl_mmlu": Measure("mmlu", "ppl", 50, setting="the paper's k is not stated; k = 50"),
    "mb_gsm8k_200": Measure("gsm8k", "irt", 200),
    "mb_arc_200": Measure("arc", "irt", 200),
    "mb_winogrande_200": Measure("winogrande", "irt", 200),
    "mb_mmlu_300": Measure("mmlu", "irt", 300),
    "mb_mean_rmse": Measure(reason="a six-benchmark mean with HellaSwag, which is not in the shipped data"),
    "mb_grand_rmse": Measure(reason="the grand mean of six benchmarks needs HellaSwag and joint (suite) estimation"),
    "tb_mae_low": Measure("mmlu", "tinybench", 100, setting="best of our five pools"),
    "tb_mae_high": Measure("gsm8k", "tinybench", 100, setting="worst of our five pools"),
    "disco_mae_low": Measure("mmlu", "disco", 100, setting="best of our five pools"),
    "disco_mae_high": Measure("gsm8k", "disco", 100, setting="worst of our five pools"),
    **{f"se_{b}_100": Measure(reason=_NO_SPARSEEVAL) for b in ("arc", "gsm8k", "mmlu", "truthfulqa", "winogrande")},
    "fluid_mmlu_vs_random": Measure("mmlu", "adaptive", ADAPTIVE_K, source="adaptive", ratio_to="random_line",
                                    setting="our MMLU pool has 102 pre-selected items, so not fifty times fewer; "
                                            "random sampling = random items + a line"),
    "fluid_mmlu_vs_static": Measure("mmlu", "adaptive", ADAPTIVE_K, source="adaptive", ratio_to="irt",
                                    setting="the static IRT subset is MetaBench's (irt)"),
    "fluid_less_variance": Measure(reason="the variance is across a model's pretraining checkpoints; the shipped "
                                          "data hold one result per model, no checkpoint series"),
    "mb_adaptive_no_gain": Measure("arc+gsm8k+mmlu+truthfulqa+winogrande", "adaptive", ADAPTIVE_K,
                                   source="adaptive", ratio_to="irt",
                                   setting="geometric mean over our five pools (no HellaSwag), against MetaBench's "
                                           "static IRT subset (irt)"),
    "audit_random_regression": Measure("openllm_v2", "random_ridge", 50, source="frontier", ratio_to="auto",
                                       setting=f"{_V2}, random splits, k = 50; the method beaten or not: our default "
                                               "(auto)"),
    **{f"audit_top_{key}": Measure("openllm_v2", m, 50, source="frontier", split="top", base_split="random",
                                   setting=f"{_V2}, k = 50: top split / random split{note}")
       for key, m, note in (("random", "random_mean", ""), ("aipw", "aipw", ""), ("regression", "random_ridge", ""),
                            ("default", "auto", "; our default (auto)"))},
}

#: directional claims: +1 "more than the value", -1 "less than the value"
_DIRECTION = {"eb_ppl_mmlu": 1, "mb_adaptive_no_gain": 1, "audit_top_regression": 1, "audit_top_default": 1,
              "fluid_mmlu_vs_random": -1, "fluid_mmlu_vs_static": -1, "audit_random_regression": -1}
#: pools whose numbers carry the pre-selection caveat
_PRESELECTED = {"arc", "gsm8k", "mmlu", "truthfulqa", "winogrande"}


def _not_testable(m: Measure, pools: dict[str, int]) -> str:
    if m.reason or m.source == "frontier":
        return m.reason
    for ds in m.dataset.split("+"):
        if ds not in pools:
            return f"{ds} is not in the shipped data"
        if m.k is not None and m.k >= pools[ds]:
            return f"k = {m.k} is not below our {ds} pool of {pools[ds]} items"
    return ""


def _plan_of(c: Claim, plan) -> Measure:
    if c.key not in plan:
        raise InputError(f"claim {c.key!r} has no Measure in the ledger's plan; add one to essence.lessons.ledger.PLAN")
    return plan[c.key]


def runs_needed(pools: dict[str, int], claims=CLAIMS, plan=PLAN) -> list[tuple[str, str, int]]:
    """The sweep's ``(dataset, method, k)`` runs the testable claims need (sorted, unique); ``pools``: dataset ->
    items."""
    return sorted({(m.dataset, m.method, m.k) for m in (_plan_of(c, plan) for c in claims)
                   if m.source == "sweep" and not _not_testable(m, pools)})


def interval(values, log: bool = False) -> tuple[float, float, float, int]:
    """``(mean, low, high, n)``: the mean of the finite ``values`` +- 2 sd / sqrt(n) (n = 1: the value itself);
    ``log``: on the log scale (geometric mean and its interval)."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    v = np.log(v) if log else v
    if v.size == 0:
        return np.nan, np.nan, np.nan, 0
    half = 2 * np.std(v, ddof=1) / np.sqrt(v.size) if v.size > 1 else 0.0
    out = (v.mean(), v.mean() - half, v.mean() + half)
    return (*(float(np.exp(x)) if log else float(x) for x in out), int(v.size))


def verdict(claim: Claim, ours: float, low: float, high: float, published: float | None = None) -> str:
    """The verdict for one testable claim from our mean and interval (rules in the module docstring);
    ``published`` overrides the claim's value (the ablation's ratio)."""
    p = claim.value if published is None else float(published)
    if not np.isfinite(ours):
        return "not reproduced"
    off = f"not reproduced, {ours / p:.2g} x"
    side = _DIRECTION.get(claim.key, 0)
    if side:
        lo_side, hi_side = (low - p) * side, (high - p) * side
        return "reproduced" if min(lo_side, hi_side) > 0 else off if max(lo_side, hi_side) < 0 else "inconclusive"
    tol = 0.01 if claim.kind in ("kendall", "spearman", "share_within_5pct_rank") else 0.1 * abs(p)
    return "reproduced" if low - tol <= p <= high + tol else off


def read_results(folder) -> dict:
    """``{"frontier": ..., "adaptive_runs": ...}`` from ``folder`` (``results/``): each table when it exists, else
    None (the claims it measures read "not run")."""
    return {name: (pd.read_csv(Path(folder) / f"{name}.csv") if (Path(folder) / f"{name}.csv").exists() else None)
            for name in ("frontier", "adaptive_runs")}


def ledger_table(runs, pools: dict[str, int], ablation_runs=None, claims=CLAIMS, plan=PLAN, adaptive_runs=None,
                 frontier=None):
    """One row per claim: ``claim, method, benchmark, k, metric, published, ours, low, high, n, our setting, verdict,
    caveat`` (pp). ``runs``: the sweep's tidy table (``dataset, method, k, seed, rmse, mae, kendall, rank_err_5,
    error``); ``pools``: dataset -> items; ``ablation_runs``: runs with ``variant`` ``before`` / ``after``;
    ``adaptive_runs``: ``benchmark, split, method, k, seed, rmse``; ``frontier``: ``benchmark, split, method, rmse``."""
    ok = runs[runs["error"].fillna("") == ""] if "error" in runs else runs
    by_key = {x.key: x for x in claims}
    rows = []
    for c in claims:
        m = _plan_of(c, plan)
        if m.source == "ablation" and c.key.endswith("_before"):
            continue  # the before/after pair is one row: the ratio, under the "after" claim
        why = _not_testable(m, pools)
        ours = low = high = np.nan
        n, published = 0, c.value
        if not why:
            if m.source == "ablation":
                published = c.value / by_key["eb_refinement_gsm8k_before"].value
                ratios = _paired(ablation_runs, "variant", "after", "before", ["seed"])
            elif m.source == "adaptive":
                ratios = _adaptive_ratios(m, adaptive_runs)
            elif m.source == "frontier":
                ratios = _frontier_ratios(m, frontier)
            else:
                sel = ok[(ok["dataset"] == m.dataset) & (ok["method"] == m.method) & (ok["k"] == m.k)]
                ratios = None
                ours, low, high, n = interval(sel[_COLUMN[c.kind]].astype(float))
            if ratios is not None:
                ours, low, high, n = interval(ratios, log=True)
            absent = {"adaptive": adaptive_runs, "frontier": frontier}.get(m.source, 0) is None
            why = "" if n else "not measured here" if absent else "not run"
        kind = "ratio" if m.source != "sweep" else c.kind
        v = (why if why in ("not run", "not measured here") else f"not testable here: {why}" if why
             else verdict(c._replace(kind=kind), ours, low, high, published))
        rows.append({
            "claim": c.key, "method": c.method, "benchmark": c.benchmark, "k": c.k, "metric": kind,
            "published": published, "ours": ours, "low": low, "high": high, "n": n,
            "our setting": ", ".join(x for x in (m.dataset and m.source != "frontier" and f"{m.dataset} k = {m.k}",
                                                 m.setting) if x),
            "verdict": v,
            "caveat": "pre-selected pool" if (m.dataset and set(m.dataset.split("+")) <= _PRESELECTED and not why)
            else "",
        })
    out = pd.DataFrame(rows)
    out["k"] = out["k"].astype("Int64")
    return out


def _paired(df, column: str, top: str, bottom: str, by: list[str]):
    """RMSE of the ``top`` rows over the ``bottom`` rows of ``df`` (``column`` names which), paired by ``by``, as a
    Series; None when either is absent."""
    if df is None or len(df) == 0:
        return None
    ok = df[df["error"].fillna("") == ""] if "error" in df else df
    piv = ok.pivot_table(index=by, columns=column, values="rmse")
    return (piv[top] / piv[bottom]).dropna() if {top, bottom} <= set(piv.columns) else None


def _adaptive_ratios(m: Measure, runs):
    """Per seed: the geometric mean over the ``+``-joined pools of ``m.method``'s RMSE over ``m.ratio_to``'s."""
    names = m.dataset.split("+")
    sel = None if runs is None else runs[runs["benchmark"].isin(names) & (runs["split"] == m.split)
                                         & (runs["k"] == m.k)]
    r = _paired(sel, "method", m.method, m.ratio_to, ["seed", "benchmark"])
    logr = None if r is None else np.log(r).unstack("benchmark").dropna()
    return None if logr is None or logr.shape[1] < len(names) else np.exp(logr.mean(axis=1)).to_numpy()


def _frontier_ratios(m: Measure, frontier):
    """Per benchmark of ``frontier``: ``m.method``'s mean RMSE on ``m.split`` over ``m.ratio_to``'s on ``m.base_split``."""
    if frontier is None:
        return None
    f = frontier.set_index(["benchmark", "split", "method"])["rmse"]
    try:
        num = f.xs((m.split, m.method), level=("split", "method"))
        den = f.xs((m.base_split or m.split, m.ratio_to or m.method), level=("split", "method"))
    except KeyError:
        return None
    return (num / den).dropna().to_numpy()
