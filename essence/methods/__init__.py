"""Item-selection methods behind one interface (see :mod:`essence.methods.base`).

:data:`METHOD_TABLE` holds one row per method (name, class, label, colour, cost), imported for real;
heavy libraries (torch, py-irt, interpret) are imported inside the methods' functions, so importing this
package stays light.
"""

from __future__ import annotations

from ..data.errors import InputError
from .auto import AutoSelector
from .base import Selector, check_k
from .registry import BASE_TABLE, BASELINE_TABLE, MethodInfo, make_from

__all__ = ["BASELINES", "COMPARED", "METHODS", "METHOD_TABLE", "METHOD_INFO", "MethodInfo", "Selector", "check_k", "get_method",
           "make_method"]

#: every method, in the survey's order (the order of every table and figure); ``auto`` last
METHOD_TABLE: tuple[MethodInfo, ...] = BASE_TABLE + (
    MethodInfo("auto", AutoSelector, "Auto (default)", "#000000", 20.0),
) + BASELINE_TABLE

#: registry name -> its :class:`MethodInfo`
METHOD_INFO: dict[str, MethodInfo] = {m.name: m for m in METHOD_TABLE}

#: registry name -> the Selector class
METHODS: dict[str, type] = {m.name: m.cls for m in METHOD_TABLE}

#: the methods the comparison sweep runs: every method but ``auto``, which chooses among them
COMPARED: tuple[str, ...] = tuple(m.name for m in BASE_TABLE)
#: the audit's baselines, beside every method in every comparison
BASELINES: tuple[str, ...] = tuple(m.name for m in BASELINE_TABLE)


def get_method(name: str) -> type:
    """The selector class registered under ``name``; InputError listing the known names."""
    if name not in METHODS:
        raise InputError(f"unknown method {name!r}; known methods: {', '.join(METHODS)}")
    return METHODS[name]


def make_method(name: str, k: int, seed: int = 0, progress: bool = True, **params) -> Selector:
    """Instantiate a method and check its parameters against their domains (before any work is done);
    unknown parameters, or a value outside its domain, raise InputError naming the parameter."""
    return make_from(METHODS, name, k=k, seed=seed, progress=progress, **params)

