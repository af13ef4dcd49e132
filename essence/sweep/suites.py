"""Suites in a sweep: a ``--data`` entry joining benchmarks with ``+`` (names or paths) is one suite
(:mod:`essence.suite`), run as ``compress_suite(suite, k, method, seed, split=split)`` on the split
``compress_suite`` makes for that seed, with :data:`SUITE_SWEEP_SETTINGS`; it gives a row per member and one for
the mean. Methods not in :data:`essence.suite.SUITE_METHODS` give error rows."""

from __future__ import annotations

import inspect
from pathlib import Path

import numpy as np

from .. import data as _data
from ..data.errors import InputError
from ..methods import make_method
from ..suite import SUITE_METHODS, make_suite
from ..suite.artifact import compress_suite
from ..suite.select import JOINT_DEFAULTS

__all__ = ["SUITE_SEP", "SUITE_SWEEP_SETTINGS", "suite_members", "build_suite", "load_suite_entry", "suite_settings",
           "suite_params", "suite_rows", "MEAN"]

#: joins the members of a suite in a ``--data`` entry and in the suite's dataset name
SUITE_SEP = "+"
#: the ``benchmark`` value of a suite's mean row
MEAN = "mean"
#: ``compress_suite`` settings the sweep fixes for suite runs (recorded in every suite signature)
SUITE_SWEEP_SETTINGS = {"reconstructors": "basic"}
#: ``compress_suite`` defaults that shape the figures (recorded in every suite signature)
_SUITE_DEFAULTS = ("level",)


def suite_members(entry: str) -> list[str] | None:
    """The members of a ``--data`` entry with ``+`` that is neither a shipped name nor a file; else None. InputError
    for an empty member (``arc+``) or one given twice."""
    entry = str(entry)
    if SUITE_SEP not in entry or entry in _data.DATASETS or Path(entry).exists():
        return None
    parts = [p.strip() for p in entry.split(SUITE_SEP)]
    if any(not p for p in parts):
        raise InputError(f"--data {entry}: an empty suite member; join two or more dataset names or paths "
                         f"with '{SUITE_SEP}', e.g. arc+gsm8k")
    twice = sorted({p for p in parts if parts.count(p) > 1})
    if twice:
        raise InputError(f"--data {entry}: {twice[0]!r} is given twice in one suite; name each member once")
    return parts


def build_suite(sources):
    """:func:`essence.suite.make_suite` of the loaded ``sources`` (member names or paths, in order)."""
    return make_suite([_data.load(s) for s in sources])


def load_suite_entry(entry: str, members: list[str]):
    """``(Suite, source)``: the suite and what a worker loads (member names or absolute paths); InputError naming
    the entry and an unknown or unreadable member."""
    sources, loaded = [], []
    for m in members:
        src = m if m in _data.DATASETS or not Path(m).exists() else str(Path(m).resolve())
        try:
            loaded.append(_data.load(src))
        except InputError as exc:
            raise InputError(f"--data {entry}: member {m!r}: {' '.join(str(exc).split())}") from None
        sources.append(src)
    try:
        suite = make_suite(loaded)
    except InputError as exc:
        raise InputError(f"--data {entry}: {' '.join(str(exc).split())}") from None
    return suite, tuple(sources)


def suite_settings() -> dict:
    """The ``compress_suite`` settings of every suite run (JSON values)."""
    defaults = inspect.signature(compress_suite).parameters
    out = {n: defaults[n].default for n in _SUITE_DEFAULTS if n in defaults}
    return {**{n: list(v) if isinstance(v, tuple) else v for n, v in out.items()}, **SUITE_SWEEP_SETTINGS}


def suite_params(method: str, k: int, seed: int, params: dict) -> dict:
    """The method's resolved parameters on a suite (``essence``: :data:`essence.suite.select.JOINT_DEFAULTS`
    updated by ``params``); InputError when it does not run on a suite or takes no such parameter."""
    if method not in SUITE_METHODS:
        raise InputError(f"method {method!r} does not run on a suite; methods that do: {', '.join(SUITE_METHODS)}")
    if method == "essence":
        unknown = sorted(set(params) - set(JOINT_DEFAULTS))
        if unknown:
            raise InputError(f"essence.{unknown[0]}: not a setting of the joint EssenceBench (a suite's "
                             f"essence); its settings: {', '.join(JOINT_DEFAULTS)}")
        return {**JOINT_DEFAULTS, **params}
    return make_method(method, k=k, seed=seed, progress=False, **params).params_dict()


def suite_rows(rec: dict, meta: dict, row_of) -> list[dict]:
    """Table rows of a suite run, one per member and one for the mean, each ``row_of(rec, meta, benchmark,
    test figures, preselected)``."""
    test = (rec.get("figures") or {}).get("test") or {}
    members = list(rec["members"])
    kinds = {} if rec.get("error") else dict(rec.get("reconstructor") or {})  # member -> chosen kind
    if kinds:
        kinds[MEAN] = f"mean of the {len(members)} members"
    rows = []
    for b in [*members, MEAN]:
        pre = any(m in _data.METABENCH for m in members) if b == MEAN else b in _data.METABENCH
        rows.append(row_of({**rec, "reconstructor": kinds.get(b, "")}, meta, b, test.get(b) or {}, pre))
    return rows


def n_items(d) -> int:
    """Items of a dataset (Responses) or of a whole suite (the sum over members)."""
    return int(np.sum(d.n_items))
