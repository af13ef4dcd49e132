"""Item-selection methods behind one interface (:mod:`essence.methods.base`); :data:`METHOD_TABLE` lists them."""

from __future__ import annotations

from dataclasses import dataclass

from ..data.errors import InputError
from .auto import AutoSelector
from .base import Selector, check_k
from .baselines import AIPWSelector, RandomLineSelector, RandomMeanSelector, RandomRidgeSelector
from .disco import DiscoSelector
from .essence import EssenceSelector
from .herding import HerdingSelector
from .irt import IRTSelector
from .kmeans import KMeansSelector
from .ppl import PPLSelector
from .random import RandomSelector
from .tinybench import TinyBenchSelector

__all__ = ["BASELINES", "COMPARED", "METHODS", "METHOD_TABLE", "METHOD_INFO", "MethodInfo", "Selector", "check_k",
           "get_method", "make_method"]


@dataclass(frozen=True)
class MethodInfo:
    """One row of the method table: registry name, Selector class, display label, colour, relative cost of a run."""

    name: str
    cls: type
    label: str
    color: str
    cost: float


#: every method, in the order of every table and figure: the compared methods, ``auto``, the audit's baselines
METHOD_TABLE: tuple[MethodInfo, ...] = (
    MethodInfo("random", RandomSelector, "Random", "#8c8c8c", 0.3),
    MethodInfo("kmeans", KMeansSelector, "K-Means", "#1f77b4", 0.5),
    MethodInfo("herding", HerdingSelector, "Kernel Herding", "#2ca02c", 0.3),
    MethodInfo("ppl", PPLSelector, "PPL strata", "#9467bd", 0.3),
    MethodInfo("irt", IRTSelector, "MetaBench IRT", "#ff7f0e", 3.0),
    MethodInfo("essence", EssenceSelector, "EssenceBench", "#d62728", 20.0),
    MethodInfo("tinybench", TinyBenchSelector, "tinyBenchmarks", "#17becf", 1.0),
    MethodInfo("disco", DiscoSelector, "DISCO", "#e377c2", 0.5),
    MethodInfo("auto", AutoSelector, "Auto (default)", "#000000", 20.0),
    MethodInfo("random_mean", RandomMeanSelector, "Random + mean", "#c7c7c7", 0.1),
    MethodInfo("random_line", RandomLineSelector, "Random + line", "#7f7f7f", 0.1),
    MethodInfo("random_ridge", RandomRidgeSelector, "Random + ridge", "#bcbd22", 0.1),
    MethodInfo("aipw", AIPWSelector, "AIPW", "#8c564b", 0.2))

#: registry name -> its :class:`MethodInfo`
METHOD_INFO: dict[str, MethodInfo] = {m.name: m for m in METHOD_TABLE}

#: registry name -> the Selector class
METHODS: dict[str, type] = {m.name: m.cls for m in METHOD_TABLE}

#: the audit's baselines, beside every method in every comparison
BASELINES: tuple[str, ...] = ("random_mean", "random_line", "random_ridge", "aipw")
#: the methods the comparison sweep runs: every method but ``auto``, which chooses among them, and the baselines
COMPARED: tuple[str, ...] = tuple(n for n in METHODS if n != "auto" and n not in BASELINES)


def get_method(name: str) -> type:
    """The selector class registered under ``name``; InputError listing the known names."""
    if name not in METHODS:
        raise InputError(f"unknown method {name!r}; known methods: {', '.join(METHODS)}")
    return METHODS[name]


def make_method(name: str, k: int, seed: int = 0, progress: bool = True, **params) -> Selector:
    """The method ``name``, its parameters checked before any work (InputError naming the first bad one)."""
    cls = get_method(name)
    params = cls.route_params(params)
    accepted = set(cls._param_names())
    unknown = set(params) - accepted
    if unknown:
        raise InputError(f"method {name!r}: unknown parameter(s) {sorted(unknown)}; accepted: "
                         f"{sorted(accepted - {'k', 'seed', 'progress'})}")
    return cls(k=k, seed=seed, progress=progress, **params).check_params()
