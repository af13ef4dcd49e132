"""benchmarks/suite_floor.py: the fixed reconstruction recipe that scores each joint-search choice alike."""

from __future__ import annotations

import numpy as np
import pytest

from script_loader import load_script


def _module():
    return load_script("benchmarks/suite_floor.py")


@pytest.mark.slow  # about 3 minutes: 600 trees and a tuned kernel ridge per member on ~600 models
def test_fixed_recipe_averages_kernel_and_the_pool_learners_per_member():
    from essence.data import load
    from essence.data.metrics import rmse
    from essence.suite import make_suite

    # every third model name, so that the shared models and each member's outside ones shrink alike
    arc, mmlu, wino = (load(n) for n in ("arc", "mmlu", "winogrande"))
    keep = set(sorted(set(arc.models) | set(mmlu.models) | set(wino.models))[::3])
    s = make_suite([m.subset(models=[x for x in m.models if x in keep], items=np.arange(n))
                    for m, n in ((arc, 40), (mmlu, 30), (wino, 30))])
    fit, held = s.subset(np.arange(320)), s.subset(np.arange(320, min(s.n_models, 420)))
    assert fit.outside  # the pool learners need each member's models outside the suite
    idx = np.r_[np.arange(0, 40, 4), np.arange(40, 70, 5), np.arange(70, 100, 6)]
    est = _module().fixed_recipe(fit, idx, held.pooled().responses[:, idx])
    assert est.shape == (held.n_models, 3) and np.isfinite(est).all()
    for b in range(3):  # far better than every model's estimate at the training mean
        y = held.targets[:, b]
        assert rmse(y, est[:, b]) < 0.6 * rmse(y, np.full_like(y, fit.targets[:, b].mean()))
