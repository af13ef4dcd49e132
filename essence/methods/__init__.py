"""Item-selection methods behind one interface (see :mod:`essence.methods.base`).

Methods are imported lazily so that ``import essence`` does not load torch or py-irt.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from .base import Selector, check_k
from ..errors import InputError

__all__ = ["COMPARED", "METHODS", "METHOD_TABLE", "METHOD_INFO", "MethodInfo", "Selector", "check_k", "get_method",
           "make_method"]


@dataclass(frozen=True)
class MethodInfo:
    """What the package knows about a method besides its code: one row of :data:`METHOD_TABLE`."""

    name: str  # registry name (--method NAME)
    path: str  # "module:Class", the module relative to essence.methods (imported only when asked for)
    label: str  # display name in tables, figures and cards
    color: str  # its colour in every figure
    cost: float  # relative cost of one run (measured mean seconds per run at k = 1 in the comparison
    #              sweep); the sweep starts the costliest runs first. Not a prediction.


#: Every method, in the survey's order (the order of every table and figure). The cards
#: (:mod:`essence.methods.cards`) hold the longer descriptions.
METHOD_TABLE: tuple[MethodInfo, ...] = (
    MethodInfo("random", "random:RandomSelector", "Random", "#8c8c8c", 0.3),
    MethodInfo("kmeans", "kmeans:KMeansSelector", "K-Means", "#1f77b4", 0.5),
    MethodInfo("herding", "herding:HerdingSelector", "Kernel Herding", "#2ca02c", 0.3),
    MethodInfo("ppl", "ppl:PPLSelector", "PPL strata", "#9467bd", 0.3),
    MethodInfo("irt", "irt:IRTSelector", "MetaBench IRT", "#ff7f0e", 3.0),
    MethodInfo("essence", "essence:EssenceSelector", "EssenceBench", "#d62728", 20.0),
    MethodInfo("tinybench", "tinybench:TinyBenchSelector", "tinyBenchmarks", "#17becf", 1.0),
    MethodInfo("disco", "disco:DiscoSelector", "DISCO", "#e377c2", 0.5),
    MethodInfo("auto", "auto:AutoSelector", "Auto (default)", "#000000", 20.0),
)

#: registry name -> its :class:`MethodInfo`
METHOD_INFO: dict[str, MethodInfo] = {m.name: m for m in METHOD_TABLE}

#: registry name -> "module:Class" (relative to essence.methods)
METHODS: dict[str, str] = {m.name: m.path for m in METHOD_TABLE}

#: the methods the comparison sweep runs (notebook 08, benchmarks/comparison.py): every method but
#: ``auto``, which chooses among them (with many models it is EssenceBench) and is measured where it
#: differs, with few reference models, by benchmarks/regimes.py
COMPARED: tuple[str, ...] = tuple(m.name for m in METHOD_TABLE if m.name != "auto")


def get_method(name: str) -> type:
    """The selector class registered under ``name``; ValueError listing the known names."""
    if name not in METHODS:
        raise InputError(f"unknown method {name!r}; known methods: {', '.join(METHODS)}")
    module, cls = METHODS[name].split(":")
    return getattr(importlib.import_module(f"{__name__}.{module}"), cls)


def make_method(name: str, k: int, seed: int = 0, progress: bool = True, **params) -> Selector:
    """Instantiate a method and check its parameters against their domains (before any work is done);
    unknown parameters, or a value outside its domain, raise InputError naming the parameter."""
    cls = get_method(name)
    accepted = set(cls._param_names())
    unknown = set(params) - accepted
    if unknown:
        raise InputError(
            f"method {name!r}: unknown parameter(s) {sorted(unknown)}; accepted: {sorted(accepted - {'k', 'seed', 'progress'})}"
        )
    return cls(k=k, seed=seed, progress=progress, **params).check_params()
