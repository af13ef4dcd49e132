"""Method cards: what each registered method (:data:`essence.methods.METHODS`) reads, optimises and needs, one dict
of :data:`CARD_FIELDS` strings per method; ``timing`` is ``"before"`` when the method chooses without any model's
results, else ``"after"``."""

from __future__ import annotations

import pandas as pd

from ..data.errors import InputError
from ..methods import METHOD_INFO

__all__ = ["CARDS", "CARD_FIELDS", "TIMINGS", "card", "cards_table"]

#: The card fields in display order -> their column header in :func:`cards_table` (``in_survey``: "yes" for the
#: survey's five methods; ``timing``: one of :data:`TIMINGS`).
_HEADERS = {"label": "method", "source": "source", "in_survey": "one of the survey's five",
            "signal": "selection signal", "objective": "objective", "timing": "chooses before / after full evaluation",
            "prior_cost": "prior cost", "gpu": "GPU", "reconstructor": "reconstructor", "guarantee": "guarantee"}
#: The fields of every card, in display order.
CARD_FIELDS = tuple(_HEADERS)

#: Allowed values of ``timing``.
TIMINGS = ("before", "after")

#: what the audit's baselines share
_AUDIT = {"source": "Zhang, Dorner & Hardt 2025 (baseline)", "in_survey": "no", "signal": "none (uniform draw)",
          "objective": "none", "gpu": "no"}
_FULL = "full evaluation of reference models"

CARDS: dict[str, dict[str, str]] = {
    "random": {"source": "baseline", "in_survey": "no", "signal": "none", "objective": "none (uniform draw)",
               "timing": "before", "prior_cost": "none", "gpu": "no",
               "reconstructor": "chosen by CV (GAM, line, ridge, ...)",
               "guarantee": "sampling error O(1/sqrt(k))"},
    "kmeans": {"source": "survey (internal practice); anchors as in tinyBenchmarks", "in_survey": "yes",
               "signal": "items' score vectors over training models",
               "objective": "match the score distribution (one anchor per cluster of items)", "timing": "after",
               "prior_cost": "full evaluation of reference models", "gpu": "no",
               "reconstructor": "a line or GAM on the cluster-weighted anchor mean, or ridge on the anchors",
               "guarantee": "none"},
    "herding": {"source": "survey (internal practice)", "in_survey": "yes",
                "signal": "item text: last-layer hidden state of a small LM (SmolLM2-135M)",
                "objective": "minimise MMD (RBF kernel) between subset and pool", "timing": "before",
                "prior_cost": "one LM forward pass per item",
                "gpu": "no here (135M model on CPU, cached); a GPU for large feature models",
                "reconstructor": "GAM on the subset score", "guarantee": "MMD falls as O(1/T) (random: O(1/sqrt(T)))"},
    "ppl": {"source": "survey (industry practice)", "in_survey": "yes",
            "signal": "item text: perplexity under a small LM (SmolLM2-135M)",
            "objective": "keep the perplexity (difficulty) distribution: proportional draws per decile",
            "timing": "before", "prior_cost": "one small-LM forward pass per item", "gpu": "no",
            "reconstructor": "GAM on the subset score", "guarantee": "none"},
    "irt": {"source": "MetaBench (arXiv 2407.12844)", "in_survey": "yes",
            "signal": "2PL IRT item parameters fitted on training models' responses",
            "objective": "Fisher information across the ability range (one item per ability bin)", "timing": "after",
            "prior_cost": "responses of many reference models (MetaBench: ~5000)", "gpu": "no",
            "reconstructor": "GAM on ability + subset score (MetaBench), ability only, GAM or ridge",
            "guarantee": "IRT measurement theory (if its assumptions hold)"},
    "essence": {"source": "EssenceBench (arXiv 2510.10457)", "in_survey": "yes",
                "signal": "scores of training models + item texts (redundancy filter) + EBM attributions",
                "objective": "reconstruction error of the full score (GA fitness), hence ranking", "timing": "after",
                "prior_cost": "full evaluation of reference models", "gpu": "no (CPU only)",
                "reconstructor": "GAM on the subset score or ridge on the items",
                "guarantee": "none (empirical search)"},
    "tinybench": {"source": "tinyBenchmarks (arXiv 2402.14992)", "in_survey": "no",
                  "signal": "items' correctness vectors (K-Means anchors) + 2PL IRT",
                  "objective": "match the score distribution (anchors); estimator mixes anchor mean and IRT",
                  "timing": "after", "prior_cost": "full evaluation of reference models", "gpu": "no",
                  "reconstructor": "gp-IRT (anchor mean mixed with p-IRT), GAM-calibrated or not, or a line on the "
                                   "anchor mean",
                  "guarantee": "none (gp-IRT weight minimises MSE of the mix)"},
    "disco": {"source": "DISCO (ICLR 2026)", "in_survey": "no",
              "signal": "disagreement (score variance) of items across training models",
              "objective": "keep the items that separate models most", "timing": "after",
              "prior_cost": "full evaluation of reference models", "gpu": "no",
              "reconstructor": "model signature -> PCA -> kNN over training models, GAM or ridge", "guarantee": "none"},
    "auto": {"source": "this project", "in_survey": "no",
             "signal": "training models' results; regression and factor rank chosen by nested CV",
             "objective": "lowest cross-validated error of the line through the subset mean on the references "
                          "and synthetic models from a factor model of them",
             "timing": "after", "prior_cost": "full evaluation of reference models", "gpu": "no",
             "reconstructor": "the CV-chosen regression (line, ridge, their average, AIPW), handed to a logistic "
                              "factor model when the new model lies above the references",
             "guarantee": "none; interval from the references' residuals, or the factor model's outside them"},
    "random_mean": {**_AUDIT, "timing": "before", "prior_cost": "none", "guarantee": "unbiased; sampling error shrinks "
                    "as 1/sqrt(k)", "reconstructor": "the mean over the chosen items"},
    "random_line": {**_AUDIT, "timing": "before", "prior_cost": _FULL, "guarantee": "none",
                    "reconstructor": "a line from the subset mean to the full score, fitted on the references"},
    "random_ridge": {**_AUDIT, "timing": "before", "prior_cost": _FULL, "guarantee": "none",
                     "reconstructor": "ridge on the item answers (penalty by CV), fitted on the references"},
    "aipw": {"label": "Random + AIPW", **_AUDIT, "timing": "after", "prior_cost": _FULL,
             "reconstructor": "the references' ridge prediction plus the model's mean residual on the chosen items",
             "guarantee": "unbiased for any model (inverse-probability-weighted correction)"},
}

for _name, _card in CARDS.items():  # the label comes from the one method table
    CARDS[_name] = {"label": METHOD_INFO[_name].label, **_card}


def card(name: str) -> dict[str, str]:
    """The card of a registered method (a copy); InputError naming the methods that have one."""
    if name not in CARDS:
        raise InputError(f"no card for method {name!r}; cards exist for: {', '.join(CARDS)}")
    return dict(CARDS[name])


def cards_table(methods=None, fields=CARD_FIELDS):
    """The cards of ``methods`` (registry names, row order; default every card) as a DataFrame: index the
    registry name, one column per field of ``fields`` (headed by its display name)."""
    methods = list(CARDS) if methods is None else list(methods)
    unknown = [f for f in fields if f not in CARD_FIELDS]
    if unknown:
        raise InputError(f"fields: {unknown} are not card fields; choose from {', '.join(CARD_FIELDS)}")
    table = pd.DataFrame.from_dict({m: {_HEADERS[f]: card(m)[f] for f in fields} for m in methods}, orient="index")
    table.index.name = "name"
    return table
