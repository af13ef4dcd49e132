"""Domain checks for parameters: each returns the value as a plain Python type or raises a one-line InputError."""

from __future__ import annotations

import argparse
import json
import math
import numbers

import numpy as np

from .errors import InputError, UsageError

__all__ = ["whole_number", "real_number", "cli_whole_number", "Whole", "Real", "OneOf", "Flag", "ListOf", "check_params",
           "parse_params", "parse_value", "RESERVED_PARAMS", "Settings", "store_params", "as_matrix"]


def _show(value) -> str:
    """``repr`` of a value as a user typed it (``3`` not ``np.int64(3)``, ``'a'`` not ``np.str_('a')``)."""
    item = getattr(value, "item", None)
    if callable(item) and getattr(value, "ndim", None) == 0:
        value = item()
    return repr(value)


def whole_number(name: str, value, minimum: int | None = None, maximum: int | None = None) -> int:
    """``value`` as an ``int`` in ``[minimum, maximum]``; InputError otherwise, booleans and floats (``3.0``) included."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise InputError(f"{name}: must be a whole number{_range(minimum, maximum)}, got {_show(value)}")
    v = int(value)
    if (minimum is not None and v < minimum) or (maximum is not None and v > maximum):
        raise InputError(f"{name}: must be a whole number{_range(minimum, maximum)}, got {v}")
    return v


def real_number(name: str, value, minimum: float | None = None, maximum: float | None = None,
                open_min: bool = False) -> float:
    """``value`` as a finite ``float`` in ``[minimum, maximum]`` (``(minimum, ...`` when ``open_min``)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(float(value)):
        raise InputError(f"{name}: must be a finite number{_range(minimum, maximum, open_min)}, got {_show(value)}")
    v = float(value)
    low_bad = minimum is not None and (v <= minimum if open_min else v < minimum)
    if low_bad or (maximum is not None and v > maximum):
        raise InputError(f"{name}: must be a finite number{_range(minimum, maximum, open_min)}, got {v:g}")
    return v


def as_matrix(R, name: str) -> np.ndarray:
    """``R`` as a float ``(n_models, n_items)`` array; InputError naming ``name`` for another number of dimensions."""
    R = np.asarray(R, dtype=np.float64)
    if R.ndim != 2:
        raise InputError(f"{name}: expected (n_models, n_items), got shape {R.shape}")
    return R


def _range(minimum, maximum, open_min: bool = False) -> str:
    parts = [f"{'>' if open_min else '>='} {minimum}"] * (minimum is not None) + [f"<= {maximum}"] * (maximum is not None)
    return " " + " and ".join(parts) if parts else ""


#: names a ``--param`` may not set, with the flag that sets them
RESERVED_PARAMS = {"k": "--k", "seed": "--seed", "method": "--method", "progress": "--quiet"}


def parse_value(text: str):
    """A ``--param`` value: JSON (``200``, ``true``, ``[1, 2]``), else a float (``nan``, ``inf``), else the text."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


def parse_params(pairs, qualified: bool = False, reserved: dict | None = None) -> dict:
    """Repeated ``--param`` flags (``pairs``, None for none): ``NAME=VALUE`` -> ``{NAME: value}``, or with
    ``qualified`` ``METHOD.NAME=VALUE`` -> ``{METHOD: {NAME: value}}`` (values by :func:`parse_value`).
    UsageError for a malformed flag, a name given twice, or one in ``reserved`` (default :data:`RESERVED_PARAMS`)."""
    reserved = RESERVED_PARAMS if reserved is None else reserved
    shape = "METHOD.NAME=VALUE, e.g. --param essence.generations=200" if qualified else \
        "NAME=VALUE, e.g. --param generations=200"
    out: dict = {}
    seen: dict = {}
    for kv in pairs or []:
        key, eq, val = str(kv).partition("=")
        key = key.strip()
        method, name = key.split(".", 1) if qualified and "." in key else ("", key)
        if not eq or not name or (qualified and not method):
            raise UsageError(f"--param {kv!r}: expected {shape}")
        if name in reserved:
            raise UsageError(f"--param {kv!r}: {name} is set by {reserved[name]}, not by --param; "
                             f"use {reserved[name]} instead")
        if key in seen:
            raise UsageError(f"--param {key} given twice ({seen[key]!r} and {val!r}); give each parameter once")
        seen[key] = val
        (out.setdefault(method, {}) if qualified else out)[name] = parse_value(val)
    return out


def cli_whole_number(minimum: int = 1):
    """An argparse ``type=`` that parses a whole number ``>= minimum`` (argparse prints the message)."""

    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if v < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {v}")
        return v

    parse.__name__ = f"whole number >= {minimum}"
    return parse


# Declarative parameter domains: a class lists ``_domains = {"name": Whole(1), ...}`` for ``check_params``.
class _Number:
    none = False

    def check(self, name: str, value):
        if value is None and self.none:
            return
        try:
            self._check(name, value)
        except InputError as exc:
            raise InputError(str(exc).replace(", got", " (or None), got", 1) if self.none else str(exc)) from None


class Whole(_Number):
    """A whole number in ``[minimum, maximum]``; ``none=True`` also allows None."""

    def __init__(self, minimum: int | None = None, maximum: int | None = None, none: bool = False):
        self.minimum, self.maximum, self.none = minimum, maximum, none

    def _check(self, name, value):
        whole_number(name, value, self.minimum, self.maximum)


class Real(_Number):
    """A finite real number in ``[minimum, maximum]`` (``(minimum, ...`` when ``open_min``); ``none`` allows None."""

    def __init__(self, minimum: float | None = None, maximum: float | None = None, open_min: bool = False,
                 none: bool = False):
        self.minimum, self.maximum, self.open_min, self.none = minimum, maximum, open_min, none

    def _check(self, name, value):
        real_number(name, value, self.minimum, self.maximum, self.open_min)


class OneOf:
    """One of the given values (compared with ``==``; booleans only match booleans)."""

    def __init__(self, *choices):
        self.choices = choices

    def check(self, name: str, value):
        ok = any(value == c and isinstance(value, bool) == isinstance(c, bool) for c in self.choices)
        if not ok:
            raise InputError(f"{name}: must be one of {', '.join(map(repr, self.choices))}, got {_show(value)}")


class Flag(OneOf):
    """True or False."""

    def __init__(self):
        super().__init__(True, False)


class ListOf:
    """A non-empty list/tuple (or one bare value) whose every entry satisfies ``each``."""

    def __init__(self, each):
        self.each = each

    def check(self, name: str, value):
        values = list(value) if isinstance(value, (list, tuple)) else [value]
        if not values:
            raise InputError(f"{name}: must name at least one value, got {_show(value)}")
        for v in values:
            self.each.check(name, v)


def check_params(obj, domains: dict | None = None) -> None:
    """InputError for the first of ``obj``'s parameters outside ``domains`` (default ``type(obj)._domains``)."""
    domains = getattr(type(obj), "_domains", {}) if domains is None else domains
    for name, domain in domains.items():
        domain.check(name, getattr(obj, name))


def store_params(obj, params: dict) -> None:
    """Each constructor argument of ``params`` (the constructor's ``locals()``) stored as the attribute of its name,
    where scikit-learn's ``get_params`` reads it back."""
    for name, value in params.items():
        if name != "self":
            setattr(obj, name, value)


class Settings:
    """Base of the settings dataclasses: :meth:`check` reads their ``_domains``."""

    def check(self):
        """``self``; InputError naming the first setting outside its domain."""
        check_params(self)
        return self
