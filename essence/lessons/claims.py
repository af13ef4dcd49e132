"""Published numbers of the field, one table, each with where it was read.

The claims ledger (and any figure that draws a paper's number beside ours) reads the published
values from here and nowhere else, so a number is typed once, next to its source. Units: ``pp`` is
accuracy percentage points (0-100); tinyBenchmarks' fractions (0.016) are stored converted to pp and
say so in ``note``. ``kind`` names the metric: ``rmse`` / ``mae`` in pp, ``kendall`` / ``spearman``,
``share_within_5pct_rank`` (share of models whose rank moves by at most 5% of the leaderboard),
``ratio`` (a before/after ratio), ``share_items`` (the share of a benchmark's items kept).

Sources, as cited in ``source``:

- ``seed:essencebench`` -- the EssenceBench paper summary the project grew from
  (``shared/seeds/000_*.txt``, Chinese), sections named in each row.
- ``seed:five-methods`` -- the five-methods survey post (``shared/seeds/002_*.txt``, Chinese).
- ``refs`` -- ``shared/REFERENCES.md`` (the method cards gathered from the papers), section named.

``docs/references.md`` lists the papers these come from.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["Claim", "CLAIMS", "claims_table"]


class Claim(NamedTuple):
    """One published number."""

    key: str            #: short stable id, used by the ledger
    method: str         #: method name as in essence.methods (or the paper's name)
    benchmark: str      #: benchmark as the paper names it
    k: int | None       #: items kept (None when the claim is not about one k)
    kind: str           #: metric, see the module docstring
    value: float        #: the published value, in the unit of ``kind``
    source: str         #: where it was read (see the module docstring)
    note: str = ""      #: anything needed to read the number right


CLAIMS: tuple[Claim, ...] = (
    # EssenceBench (arXiv 2510.10457)
    Claim("eb_gsm8k_200", "essence", "GSM8K", 200, "rmse", 0.864, "refs: EssenceBench, reported RMSE"),
    Claim("eb_gsm8k_500", "essence", "GSM8K", 500, "rmse", 0.377, "refs: EssenceBench, reported RMSE"),
    Claim("eb_arc_200", "essence", "ARC", 200, "rmse", 0.802, "refs: EssenceBench, reported RMSE"),
    Claim("eb_winogrande_200", "essence", "WinoGrande", 200, "rmse", 0.777, "refs: EssenceBench, reported RMSE"),
    Claim("eb_mmlu_300", "essence", "MMLU", 300, "rmse", 0.846, "refs: EssenceBench, reported RMSE"),
    Claim("eb_gsm8k_200_kendall", "essence", "GSM8K", 200, "kendall", 0.968,
          "seed:essencebench, 'ranking fidelity (GSM8K, k=200)'"),
    Claim("eb_arc_100", "essence", "ARC-Challenge", 100, "rmse", 1.104,
          "seed:essencebench, comparison with SMART", "8% of ARC's items"),
    Claim("eb_refinement_gsm8k_before", "essence", "GSM8K", None, "rmse", 2.77,
          "refs: EssenceBench, ablation", "without refinement rounds"),
    Claim("eb_refinement_gsm8k_after", "essence", "GSM8K", None, "rmse", 2.47,
          "refs: EssenceBench, ablation", "with refinement rounds"),
    Claim("eb_hellaswag_50_rank", "essence", "HellaSwag", 50, "share_within_5pct_rank", 0.95,
          "seed:essencebench, one-line summary", "95% of models within 5% rank error, 200x compression"),
    Claim("eb_ppl_mmlu", "ppl", "MMLU", None, "rmse", 7.0,
          "seed:essencebench, 'PPL/GraNd fail on MMLU (RMSE > 7)'", "a lower bound: the paper says RMSE > 7"),
    # MetaBench (arXiv 2407.12844), as EssenceBench reports it and in its own figure
    Claim("mb_gsm8k_200", "irt", "GSM8K", 200, "rmse", 1.760, "refs: EssenceBench, MetaBench in parentheses"),
    Claim("mb_arc_200", "irt", "ARC", 200, "rmse", 1.447, "refs: EssenceBench, MetaBench in parentheses"),
    Claim("mb_winogrande_200", "irt", "WinoGrande", 200, "rmse", 1.530, "refs: EssenceBench, MetaBench in parentheses"),
    Claim("mb_mmlu_300", "irt", "MMLU", 300, "rmse", 1.287, "refs: EssenceBench, MetaBench in parentheses"),
    Claim("mb_mean_rmse", "irt", "six Open LLM Leaderboard v1 benchmarks", None, "rmse", 1.24,
          "refs: MetaBench, results", "mean per-benchmark RMSE, < 3% of 28,632 items"),
    Claim("mb_grand_rmse", "irt", "grand mean of six benchmarks", None, "rmse", 0.58,
          "refs: MetaBench, results; seed:five-methods section 5.4"),
    # tinyBenchmarks (arXiv 2402.14992): MAE fractions stored in pp
    Claim("tb_mae_low", "tinybench", "Open LLM Leaderboard scenarios", 100, "mae", 1.1,
          "refs: tinyBenchmarks", "the best scenario; published as MAE 0.011"),
    Claim("tb_mae_high", "tinybench", "Open LLM Leaderboard scenarios", 100, "mae", 2.0,
          "refs: tinyBenchmarks", "the worst scenario; published as MAE 0.020"),
    # DISCO and SparseEval (ICLR 2026)
    Claim("disco_mae_low", "disco", "several benchmarks", 100, "mae", 1.0, "refs: Newer anchors, DISCO"),
    Claim("disco_mae_high", "disco", "several benchmarks", 100, "mae", 1.5, "refs: Newer anchors, DISCO"),
    Claim("se_arc_100", "sparseeval", "ARC", 100, "mae", 1.17, "refs: Newer anchors, SparseEval per benchmark"),
    Claim("se_gsm8k_100", "sparseeval", "GSM8K", 100, "mae", 1.62, "refs: Newer anchors, SparseEval per benchmark"),
    Claim("se_mmlu_100", "sparseeval", "MMLU", 100, "mae", 0.84, "refs: Newer anchors, SparseEval per benchmark"),
    Claim("se_truthfulqa_100", "sparseeval", "TruthfulQA", 100, "mae", 1.03,
          "refs: Newer anchors, SparseEval per benchmark"),
    Claim("se_winogrande_100", "sparseeval", "WinoGrande", 100, "mae", 1.03,
          "refs: Newer anchors, SparseEval per benchmark"),
)


def claims_table():
    """All claims as a ``pandas.DataFrame`` (one row per claim, the columns of :class:`Claim`)."""
    import pandas as pd

    return pd.DataFrame(CLAIMS, columns=Claim._fields)
