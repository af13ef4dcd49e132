"""Reconstructors: from a model's results on the chosen items to its full-benchmark score (pp). Importing the
package registers every kind (:mod:`essence.reconstructors.base`)."""

from . import audit, boost, combine, frontier, irt, kernel, mlp, signature, simple  # noqa: F401  (registers every kind)
from .base import (KINDS, Reconstructor, fit_reconstructor, model_folds, reconstructor_class, reconstructor_from_dict,
                   subset_score)
from .choose import choose_by_cv, cv_rmse, oof_predictions

__all__ = ["KINDS", "Reconstructor", "reconstructor_class", "reconstructor_from_dict", "subset_score",
           "choose_by_cv", "cv_rmse", "fit_reconstructor", "model_folds", "oof_predictions"]
