"""Suites in a sweep: a ``--data`` entry that joins two or more benchmarks with ``+``
(``arc+gsm8k+mmlu+truthfulqa+winogrande``; names or paths) is one suite (:mod:`essence.suite`).

A suite run is ``compress_suite(suite, k, method, seed, split=split)`` with the split ``compress_suite``
makes for that seed (on the suite mean over the shared models), computed once per suite x seed and handed
to every method. It gives one table row per member and one for the suite mean (column ``benchmark``: the
member's name or ``"mean"``). Methods not in :data:`essence.suite.SUITE_METHODS` give error rows.
:data:`SUITE_SWEEP_SETTINGS` fixes the reconstructors (no stronger kinds, no averages), so methods are
compared at equal reconstructors, as single runs are.
"""

from __future__ import annotations

import inspect
from pathlib import Path

import numpy as np

from .. import data as _data
from ..data.errors import InputError

__all__ = ["SUITE_SEP", "SUITE_SWEEP_SETTINGS", "suite_members",
           "build_suite", "load_suite_entry", "suite_settings", "suite_params", "suite_rows", "MEAN"]

#: joins the members of a suite in a ``--data`` entry and in the suite's dataset name
SUITE_SEP = "+"
#: the ``benchmark`` value of a suite's mean row
MEAN = "mean"
#: ``compress_suite`` settings the sweep fixes for suite runs (recorded in every suite signature)
SUITE_SWEEP_SETTINGS = {"reconstructors": "basic"}
#: ``compress_suite`` defaults that shape the figures (recorded in every suite signature)
_SUITE_DEFAULTS = ("level",)


def suite_members(entry: str) -> list[str] | None:
    """The members of a ``--data`` entry that names a suite, or None for a single dataset.

    An entry is a suite when it contains ``+`` and is neither a shipped dataset name nor an existing file.
    InputError for an empty member (``arc+``), a member given twice, or fewer than two members.
    """
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
    """The suite of ``sources`` (member names or paths, in order): each member loaded with
    :func:`essence.data.load`, then :func:`essence.suite.make_suite` (models present in all members)."""
    from ..suite import make_suite

    return make_suite([_data.load(s) for s in sources])


def load_suite_entry(entry: str, members: list[str]):
    """``(Suite, source)``: the suite and what a worker loads it from (a tuple of member names or absolute
    paths). An unknown or unreadable member is an InputError naming the entry and the member."""
    from ..suite import make_suite

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
    """The ``compress_suite`` settings of every suite run: its defaults for :data:`_SUITE_DEFAULTS` and
    :data:`SUITE_SWEEP_SETTINGS` (JSON values)."""
    from ..suite.artifact import compress_suite

    defaults = inspect.signature(compress_suite).parameters
    out = {n: defaults[n].default for n in _SUITE_DEFAULTS if n in defaults}
    out = {n: list(v) if isinstance(v, tuple) else v for n, v in out.items()}
    return {**out, **SUITE_SWEEP_SETTINGS}


def suite_params(method: str, k: int, seed: int, params: dict) -> dict:
    """The method's resolved parameters on a suite (for the signature): for ``essence``
    :data:`essence.suite.select.JOINT_DEFAULTS` overridden by ``params``, else its constructor's parameters.
    InputError when the method does not run on a suite or a parameter is not one of its settings."""
    from ..methods import make_method
    from ..suite import SUITE_METHODS
    from ..suite.select import JOINT_DEFAULTS

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
    """Table rows of a suite run: one per member (``rec["members"]``, in order) and one for the mean.

    ``row_of(rec, meta, benchmark, figures, preselected)`` makes one row (:func:`essence.sweep.records._row`);
    ``figures`` is the run's test summary of that benchmark (``{}`` on error)."""
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
