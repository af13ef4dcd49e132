"""Published numbers of the field, each with where it was read (``docs/references.md`` lists the papers). ``kind``:
``rmse`` / ``mae`` (pp), ``kendall``, ``spearman``, ``share_within_5pct_rank`` (share of models whose rank moves by
at most 5 %), ``ratio`` (of errors; a qualitative claim stores the ratio it implies, 1.0, and says so in ``note``),
``share_items``. ``source``: ``seed:essencebench`` / ``seed:five-methods`` (``shared/seeds/``) or ``refs``
(``shared/REFERENCES.md``, section named)."""

from __future__ import annotations

from typing import NamedTuple

import pandas as pd

__all__ = ["Claim", "CLAIMS", "claims_table"]

_AUDIT = "refs: Newer anchors (2025-2026), Zhang, Dorner & Hardt"


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
    *(Claim(f"se_{b.lower()}_100", "sparseeval", b, 100, "mae", v, "refs: Newer anchors, SparseEval per benchmark")
      for b, v in (("ARC", 1.17), ("GSM8K", 1.62), ("MMLU", 0.84), ("TruthfulQA", 1.03), ("WinoGrande", 1.03))),
    # adaptive testing: Fluid Benchmarking (Hofmann et al., COLM 2025, arXiv 2509.11106) and MetaBench's simulation
    Claim("fluid_mmlu_vs_random", "adaptive", "MMLU", None, "ratio", 1.0,
          "refs: Newer anchors (2025-2026), Fluid Benchmarking",
          "'higher validity ... on MMLU with fifty times fewer items' than random sampling: adaptive choice by Fisher "
          "information under a 2PL; stored as error ratio adaptive / random sampling < 1"),
    Claim("fluid_mmlu_vs_static", "adaptive", "MMLU", None, "ratio", 1.0,
          "refs: Newer anchors (2025-2026), Fluid Benchmarking",
          "better than static IRT subsets at equal items; stored as error ratio adaptive / static IRT subset < 1"),
    Claim("fluid_less_variance", "adaptive", "MMLU", None, "ratio", 1.0,
          "refs: Newer anchors (2025-2026), Fluid Benchmarking",
          "'less variance': step-to-step variance of a model's score across pretraining checkpoints, adaptive / "
          "static; stored as a ratio < 1"),
    Claim("mb_adaptive_no_gain", "adaptive", "ARC, GSM8K, MMLU, TruthfulQA, WinoGrande", None, "ratio", 1.0,
          "refs: Newer anchors, Fluid Benchmarking paragraph",
          "MetaBench's adaptive-testing simulation did not beat its static IRT subsets except on HellaSwag; stored "
          "as error ratio adaptive / static IRT subset >= 1 (no gain)"),
    # the audit: Zhang, Dorner & Hardt, "How Benchmark Prediction from Fewer Data Misses the Mark" (NeurIPS 2025)
    Claim("audit_random_regression", "random_ridge", "19 benchmarks", None, "ratio", 1.0, _AUDIT,
          "random items + a regression beat most methods; stored as error ratio random + ridge / the method < 1"),
    *(Claim(f"audit_top_{key}", m, "19 benchmarks", None, "ratio", 1.0, _AUDIT, note) for key, m, note in (
        ("random", "random_mean", "random sampling does not degrade when the target model is stronger than the "
                                  "sources; stored as error ratio top split / random split = 1"),
        ("aipw", "aipw", "AIPW does not degrade on stronger targets; error ratio top / random split = 1"),
        ("regression", "random_ridge", "every other method degrades on stronger targets; error ratio top / random "
                                       "split > 1"),
        ("default", "auto", "every other method degrades on stronger targets; error ratio top / random split > 1"))),
)


def claims_table():
    """All claims as a ``pandas.DataFrame`` (one row per claim, the columns of :class:`Claim`)."""
    return pd.DataFrame(CLAIMS, columns=Claim._fields)
