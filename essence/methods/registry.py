"""The method table: every selection method but ``auto``, by real import, and the one way to make one.

``auto`` chooses among these (it sits one layer up); :mod:`essence.methods` adds its row.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..data.errors import InputError
from .base import Selector
from .baselines import AIPWSelector, RandomLineSelector, RandomMeanSelector, RandomRidgeSelector
from .disco import DiscoSelector
from .essence import EssenceSelector
from .herding import HerdingSelector
from .irt import IRTSelector
from .kmeans import KMeansSelector
from .ppl import PPLSelector
from .random import RandomSelector
from .tinybench import TinyBenchSelector

__all__ = ["MethodInfo", "BASE_TABLE", "BASELINE_TABLE", "BASE_METHODS", "make_from"]


@dataclass(frozen=True)
class MethodInfo:
    """What the package knows about a method besides its code: one row of the method table."""

    name: str  # registry name (--method NAME)
    cls: type  # the Selector subclass
    label: str  # display name in tables, figures and cards
    color: str  # its colour in every figure
    cost: float  # relative cost of one run (mean seconds per run at k = 1 in the comparison sweep); the
    #              sweep starts the costliest runs first. Not a prediction.


#: every method but ``auto``, in the survey's order (the order of every table and figure)
BASE_TABLE: tuple[MethodInfo, ...] = (
    MethodInfo("random", RandomSelector, "Random", "#8c8c8c", 0.3),
    MethodInfo("kmeans", KMeansSelector, "K-Means", "#1f77b4", 0.5),
    MethodInfo("herding", HerdingSelector, "Kernel Herding", "#2ca02c", 0.3),
    MethodInfo("ppl", PPLSelector, "PPL strata", "#9467bd", 0.3),
    MethodInfo("irt", IRTSelector, "MetaBench IRT", "#ff7f0e", 3.0),
    MethodInfo("essence", EssenceSelector, "EssenceBench", "#d62728", 20.0),
    MethodInfo("tinybench", TinyBenchSelector, "tinyBenchmarks", "#17becf", 1.0),
    MethodInfo("disco", DiscoSelector, "DISCO", "#e377c2", 0.5),
)

#: the audit's baselines (:mod:`essence.methods.baselines`): random items read by one fixed reconstructor
BASELINE_TABLE: tuple[MethodInfo, ...] = (
    MethodInfo("random_mean", RandomMeanSelector, "Random + mean", "#c7c7c7", 0.1),
    MethodInfo("random_line", RandomLineSelector, "Random + line", "#7f7f7f", 0.1),
    MethodInfo("random_ridge", RandomRidgeSelector, "Random + ridge", "#bcbd22", 0.1),
    MethodInfo("aipw", AIPWSelector, "AIPW", "#8c564b", 0.2),
)


#: registry name -> the Selector class, for every method of :data:`BASE_TABLE`
BASE_METHODS: dict[str, type] = {m.name: m.cls for m in BASE_TABLE + BASELINE_TABLE}


def make_from(methods: dict, name: str, k: int, seed: int = 0, progress: bool = True, **params) -> Selector:
    """Instantiate the method ``name`` of ``methods`` (name -> Selector class) and check its parameters
    against their domains before any work; an unknown name or parameter, or a value outside its domain,
    raises InputError naming it."""
    if name not in methods:
        raise InputError(f"unknown method {name!r}; known methods: {', '.join(methods)}")
    cls = methods[name]
    params = cls.route_params(params)
    accepted = set(cls._param_names())
    unknown = set(params) - accepted
    if unknown:
        raise InputError(f"method {name!r}: unknown parameter(s) {sorted(unknown)}; accepted: "
                         f"{sorted(accepted - {'k', 'seed', 'progress'})}")
    return cls(k=k, seed=seed, progress=progress, **params).check_params()
