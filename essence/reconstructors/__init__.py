"""Reconstructors: from a model's results on the chosen items to its full-benchmark score (pp).

Every kind follows :mod:`essence.reconstructors.base`'s contract and registers itself there when its module
is imported; this package imports every kind's module, so :func:`reconstructor_from_dict` knows them all.
The choice among candidates by cross-validation lives in :mod:`.choose`, intervals in :mod:`.intervals`.
"""

from . import audit, boost, combine, frontier, irt, kernel, mlp, signature, simple  # noqa: F401  (registers every kind)
from .base import (
           KINDS,
           Reconstructor,
           reconstructor_class,
           reconstructor_from_dict,
           subset_score,
)
from .choose import choose_by_cv, cv_rmse, oof_predictions
from .base import fit_reconstructor
from .base import model_folds

__all__ = ["KINDS", "Reconstructor", "reconstructor_class", "reconstructor_from_dict", "subset_score",
           "choose_by_cv", "cv_rmse", "fit_reconstructor", "model_folds", "oof_predictions"]
