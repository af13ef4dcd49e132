"""The claims ledger: each published number (:mod:`essence.lessons.claims`) beside our measurement at the closest
setting the shipped data allow, with a verdict.

A claim is matched to a :class:`Measure` (which dataset, method, k and metric of the comparison sweep's
tidy table stand for it). Our value is the mean over seeds of that metric on **test models** (nothing in
the selection saw them); its spread is the sample sd over seeds. The verdict:

- ``not testable here`` when the setting cannot be run on our data: the benchmark is not shipped, the
  method is not implemented, or k is larger than our pool (the reason is given);
- for errors (``rmse``, ``mae``, pp; lower is better): ``reproduced`` when our mean is at most the
  published value plus a tolerance of ``max(10% of it, 2 sd)``, ``not reproduced`` otherwise;
- for agreement figures (``kendall``, ``share_within_5pct_rank``; higher is better): ``reproduced`` when
  our mean is at least the published value minus ``max(0.01, 2 sd)``;
- for a lower bound (the claim says "more than"): ``reproduced`` when our mean exceeds it;
- for a ratio (after / before an ablation): ``reproduced`` when our ratio is at most the published ratio
  plus ``max(0.05, 2 sd)`` and below 1 (the stage helps);
- ``not run`` when the claim is testable but the runs it needs are not in the table given.

The metabench pools are pre-selected informative items, so our errors there are optimistic relative to
compressing a whole benchmark: a "reproduced" on them is weaker than on the paper's whole benchmark, and
the ledger says so in every such row (``caveat``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .claims import CLAIMS, Claim
from ..data.errors import InputError

__all__ = ["Measure", "PLAN", "runs_needed", "ledger_table", "verdict"]

#: published metric kind -> column of the sweep's tidy table
_COLUMN = {"rmse": "rmse", "mae": "mae", "kendall": "kendall", "share_within_5pct_rank": "rank_err_5"}


@dataclass(frozen=True)
class Measure:
    """How we measure one claim: ``dataset`` x ``method`` x ``k`` of the sweep, or why we cannot.

    ``ablation`` names the EssenceBench parameter sets whose RMSE ratio (second / first) stands for a
    before/after claim (see :data:`ABLATION`); ``reason`` is set when the claim is not testable whatever
    the data say.
    """

    dataset: str | None = None
    method: str | None = None
    k: int | None = None
    reason: str = ""
    setting: str = ""
    ablation: bool = False


#: the refinement ablation: EssenceBench with refinement rounds off (before) and on (after)
ABLATION = {"before": {"rounds": 0}, "after": {}}
ABLATION_K = 50

_NO_HELLASWAG = "HellaSwag is not in the shipped data"
PLAN: dict[str, Measure] = {
    "eb_gsm8k_200": Measure("gsm8k", "essence", 200),
    "eb_gsm8k_500": Measure("gsm8k", "essence", 500),
    "eb_arc_200": Measure("arc", "essence", 200),
    "eb_winogrande_200": Measure("winogrande", "essence", 200),
    "eb_mmlu_300": Measure("mmlu", "essence", 300),
    "eb_gsm8k_200_kendall": Measure("gsm8k", "essence", 200),
    "eb_arc_100": Measure("arc", "essence", 100, setting="our ARC pool is ARC-Challenge's metabench items"),
    "eb_refinement_gsm8k_before": Measure("gsm8k", "essence", ABLATION_K, ablation=True,
                                          setting=f"ratio with / without refinement at k = {ABLATION_K}"),
    "eb_refinement_gsm8k_after": Measure("gsm8k", "essence", ABLATION_K, ablation=True,
                                         setting=f"ratio with / without refinement at k = {ABLATION_K}"),
    "eb_hellaswag_50_rank": Measure("mmlu", "essence", 50, setting=f"{_NO_HELLASWAG}; MMLU's pool instead"),
    "eb_ppl_mmlu": Measure("mmlu", "ppl", 50, setting="the paper's k is not stated; k = 50"),
    "mb_gsm8k_200": Measure("gsm8k", "irt", 200),
    "mb_arc_200": Measure("arc", "irt", 200),
    "mb_winogrande_200": Measure("winogrande", "irt", 200),
    "mb_mmlu_300": Measure("mmlu", "irt", 300),
    "mb_mean_rmse": Measure(reason="a six-benchmark mean with HellaSwag, which is not in the shipped data"),
    "mb_grand_rmse": Measure(reason="the grand mean of six benchmarks needs HellaSwag and joint (suite) "
                                    "estimation"),
    "tb_mae_low": Measure("mmlu", "tinybench", 100, setting="best of our five pools"),
    "tb_mae_high": Measure("gsm8k", "tinybench", 100, setting="worst of our five pools"),
    "disco_mae_low": Measure("mmlu", "disco", 100, setting="best of our five pools"),
    "disco_mae_high": Measure("gsm8k", "disco", 100, setting="worst of our five pools"),
    "se_arc_100": Measure(reason="SparseEval is not implemented here"),
    "se_gsm8k_100": Measure(reason="SparseEval is not implemented here"),
    "se_mmlu_100": Measure(reason="SparseEval is not implemented here"),
    "se_truthfulqa_100": Measure(reason="SparseEval is not implemented here"),
    "se_winogrande_100": Measure(reason="SparseEval is not implemented here"),
}

#: claims of the form "more than X"
_LOWER_BOUNDS = {"eb_ppl_mmlu"}
#: pools whose numbers carry the pre-selection caveat
_PRESELECTED = {"arc", "gsm8k", "mmlu", "truthfulqa", "winogrande"}


def _not_testable(m: Measure, pools: dict[str, int]) -> str:
    if m.reason:
        return m.reason
    if m.dataset not in pools:
        return f"{m.dataset} is not in the shipped data"
    if m.k is not None and m.k >= pools[m.dataset]:
        return f"k = {m.k} is not below our {m.dataset} pool of {pools[m.dataset]} items"
    return ""


def runs_needed(pools: dict[str, int], claims=CLAIMS, plan=PLAN) -> list[tuple[str, str, int]]:
    """The ``(dataset, method, k)`` runs the testable claims need (sorted, unique; ablations excluded).

    ``pools`` maps each shipped dataset to its number of items."""
    need = set()
    for c in claims:
        m = _plan_of(c, plan)
        if not _not_testable(m, pools) and not m.ablation:
            need.add((m.dataset, m.method, m.k))
    return sorted(need)


def _plan_of(c: Claim, plan) -> Measure:
    if c.key not in plan:
        raise InputError(f"claim {c.key!r} has no Measure in the ledger's plan; add one to essence.lessons.ledger.PLAN")
    return plan[c.key]


def verdict(claim: Claim, ours: float, sd: float, published: float | None = None) -> str:
    """``"reproduced"`` or ``"not reproduced"`` for one testable claim (rules in the module docstring).

    ``published`` overrides the claim's value (used for ratios); ``sd`` may be NaN (one seed: tolerance
    from the fixed part only)."""
    p = claim.value if published is None else float(published)
    sd = 0.0 if not np.isfinite(sd) else float(sd)
    if not np.isfinite(ours):
        return "not reproduced"
    if claim.key in _LOWER_BOUNDS:
        ok = ours > p
    elif claim.kind == "ratio":
        ok = ours < 1 and ours <= p + max(0.05, 2 * sd)
    elif claim.kind in ("rmse", "mae"):
        ok = ours <= p + max(0.1 * p, 2 * sd)
    else:
        ok = ours >= p - max(0.01, 2 * sd)
    return "reproduced" if ok else "not reproduced"


def ledger_table(runs, pools: dict[str, int], ablation_runs=None, claims=CLAIMS, plan=PLAN):
    """One row per claim: the published number, ours (mean ± sd over seeds, test models), the verdict.

    Parameters
    ----------
    runs : DataFrame
        The comparison sweep's tidy table (columns ``dataset, method, k, seed, rmse, mae, kendall,
        rank_err_5, error``); failed runs (non-empty ``error``) are left out.
    pools : dict
        Dataset name -> number of items in its pool.
    ablation_runs : DataFrame, optional
        The ablation's tidy table with a ``variant`` column ``"before"`` / ``"after"`` (see
        :data:`ABLATION`), for the refinement claims; without it they read "not run".

    Returns a DataFrame with columns ``claim, method, benchmark, k, metric, published, ours, sd, n_seeds,
    our setting, verdict, caveat``; errors in pp.
    """
    import pandas as pd

    ok = runs[runs["error"].fillna("") == ""] if "error" in runs else runs
    rows = []
    for c in claims:
        m = _plan_of(c, plan)
        if m.ablation and c.key.endswith("_before"):
            continue  # the before/after pair is one row: the ratio, under the "after" claim
        why = _not_testable(m, pools)
        ours = sd = np.nan
        n = 0
        published = c.value
        if not why and m.ablation:
            published, ours, sd, n, why = _ablation_ratio(c, ablation_runs, claims)
        elif not why:
            sel = ok[(ok["dataset"] == m.dataset) & (ok["method"] == m.method) & (ok["k"] == m.k)]
            vals = sel[_COLUMN[c.kind]].astype(float).to_numpy()
            n = int(np.isfinite(vals).sum())
            if n == 0:
                why = "not run"
            else:
                ours = float(np.nanmean(vals))
                sd = float(np.nanstd(vals, ddof=1)) if n > 1 else np.nan
        kind = "ratio" if m.ablation else c.kind
        if why == "not run":
            v = "not run"
        else:
            v = f"not testable here: {why}" if why else verdict(c._replace(kind=kind), ours, sd, published)
        rows.append({
            "claim": c.key, "method": c.method, "benchmark": c.benchmark, "k": c.k, "metric": kind,
            "published": published, "ours": ours, "sd": sd, "n_seeds": n,
            "our setting": ", ".join(x for x in (m.dataset and f"{m.dataset} k = {m.k}", m.setting) if x),
            "verdict": v,
            "caveat": "pre-selected pool" if (m.dataset in _PRESELECTED and not why) else "",
        })
    return pd.DataFrame(rows)


def _ablation_ratio(c: Claim, ablation_runs, claims):
    """(published ratio, our mean ratio after/before over paired seeds, sd, n, reason)."""
    by_key = {x.key: x for x in claims}
    before, after = by_key.get("eb_refinement_gsm8k_before"), by_key.get("eb_refinement_gsm8k_after")
    if before is None or after is None:
        return np.nan, np.nan, np.nan, 0, "the ablation needs both its before and after claims"
    published = after.value / before.value
    if ablation_runs is None or len(ablation_runs) == 0:
        return published, np.nan, np.nan, 0, "not run"
    ok = ablation_runs[ablation_runs["error"].fillna("") == ""]
    piv = ok.pivot_table(index="seed", columns="variant", values="rmse")
    if not {"before", "after"} <= set(piv.columns):
        return published, np.nan, np.nan, 0, "not run"
    ratios = (piv["after"] / piv["before"]).dropna().to_numpy()
    if ratios.size == 0:
        return published, np.nan, np.nan, 0, "not run"
    sd = float(np.std(ratios, ddof=1)) if ratios.size > 1 else np.nan
    return published, float(ratios.mean()), sd, int(ratios.size), ""
