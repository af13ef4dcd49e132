"""The adaptive artifact (schema ``essence.adaptive``): an item bank, a policy and a calibrated interval, fitted on
the references of a model split (:func:`compress_adaptive`); ``estimate`` tests each model from its own results,
``next_items``/``result`` run a live model in rounds (:mod:`essence.lmeval.adaptive`)."""

from __future__ import annotations

import datetime as _dt
import zlib
from dataclasses import asdict, dataclass, field
from types import SimpleNamespace
from typing import ClassVar

import numpy as np
import pandas as pd

from ..data import METABENCH, POOL_CAVEAT, Responses, Split, split_models
from ..data.split import default_test
from ..data._runtime import single_thread
from ..data.checks import real_number, whole_number
from ..data.errors import InputError, warn
from ..features.bank import FIT_DEFAULTS, ItemBank, fit_bank
from ..methods.adaptive import POLICY_FIELDS, Policy, Session, calibrate, interval, simulate
from .base import Artifact, check_answers, check_same_benchmark, format_figures
from .compressed import _figures, _warn_constant

__all__ = ["AdaptiveCompressed", "compress_adaptive", "MIN_REFERENCES", "PARAMS"]

#: fewest references a bank and its calibration (5 random folds + a top fold) are fitted on
MIN_REFERENCES = 20
#: compress_adaptive's parameters besides its settings, with their defaults
PARAMS = {**asdict(Policy()), "sd_log_a": FIT_DEFAULTS["sd_log_a"], "sd_d": FIT_DEFAULTS["sd_d"], "folds": 5,
          "top_frac": 0.2}


def _keys(models) -> list[int]:
    return [zlib.crc32(str(m).encode("utf-8")) for m in models]


@dataclass
class AdaptiveCompressed(Artifact):
    """``items`` ``(J,)`` the bank's item ids; ``bank``; ``k`` the most items a model is given; ``params`` the
    policy and fit settings; ``calibration`` (:func:`~essence.methods.adaptive.calibrate`); ``dataset``;
    ``figures`` ``{"validation", "test"}`` (validation: the calibration's random folds)."""

    items: list[str]
    bank: ItemBank
    calibration: dict
    method: str = field(default="adaptive", kw_only=True)

    SCHEMA: ClassVar[str] = "essence.adaptive"
    REQUIRED: ClassVar[tuple] = ("schema", "schema_version", "method", "k", "seed", "params", "items", "bank",
                                 "calibration", "dataset", "figures")

    @property
    def policy(self) -> Policy:
        return Policy(**{f: self.params[f] for f in POLICY_FIELDS if f in self.params}).check()

    @property
    def interval(self):
        """The interval's nominal ``level`` (where :mod:`essence.artifact.report` reads it)."""
        return SimpleNamespace(level=float(self.calibration["level"]))

    def _matrix(self, data) -> tuple[np.ndarray, np.ndarray]:
        """``(models (n,), X (n, J))``: ``data``'s results on the bank's items, NaN where missing."""
        ids, models, R = self._table(data)
        pos = {s: i for i, s in enumerate(ids)}
        have = [j for j, s in enumerate(self.items) if s in pos]
        if not have:
            raise InputError(f"none of the artifact's {len(self.items)} bank items is in the responses (e.g. "
                             f"{self.items[0]!r}); are these results of the benchmark it was compressed from?")
        X = np.full((len(models), len(self.items)), np.nan)
        X[:, have] = R[:, [pos[self.items[j]] for j in have]]
        check_answers(X, models)
        return np.asarray(models), X

    def estimates(self, X, k: int | None = None, keys=None) -> dict:
        """Test each row of ``X`` ``(n, J)`` with at most ``k`` items: ``{"estimate", ..., "items_used"}``."""
        k = self.k if k is None else whole_number("k", k, 1, self.k)
        with single_thread():
            t = simulate(self.bank, X, k, self.policy, self.calibration, seed=self.seed, keys=keys)
        est = t.estimate[:, -1]
        lo, hi = self.calibration["ref_range"]
        return {"estimate": est, "lower": t.lower[:, -1], "upper": t.upper[:, -1], "outside": (est < lo) | (est > hi),
                "answered_by": np.full(est.shape, "adaptive", dtype=object), "items_used": t.n_items[:, -1]}

    def estimate(self, data):
        """DataFrame ``model`` + :meth:`estimates`' columns, each model tested from its own results in ``data``."""
        models, X = self._matrix(data)
        return pd.DataFrame({"model": models, **self.estimates(X, keys=_keys(models))})

    def evaluate(self, data) -> dict:
        """:func:`essence.data.metrics.summary` of the estimates on ``data``, plus ``items_used`` (mean)."""
        data = self._data(data, evaluate=True)
        check_same_benchmark(self._matrix(data)[1], self.dataset.get("item_means"), data.name)
        est = self.estimate(data)
        fig = _figures(data.target, *(est[c].to_numpy() for c in ("estimate", "lower", "upper")), data.name)
        return {**fig, "items_used": float(est["items_used"].mean())}

    def session(self, answers: dict | None = None, unavailable=(), key: int = 0) -> Session:
        """A live :class:`~essence.methods.adaptive.Session` with ``answers`` (item id -> score) recorded."""
        pos = {s: i for i, s in enumerate(self.items)}
        bad = [s for s in [*(answers or {}), *unavailable] if s not in pos]
        if bad:
            raise InputError(f"item {bad[0]!r} is not an item of this artifact's bank ({len(self.items)} items)")
        mask = np.isin(np.arange(len(self.items)), [pos[s] for s in unavailable])
        s = Session(self.bank, self.policy, self.k, self.calibration, seed=self.seed, key=key, unavailable=mask)
        for iid, y in (answers or {}).items():
            s.record(pos[iid], y)
        return s

    def next_items(self, answers: dict, n: int = 1, unavailable=()) -> list[str]:
        """Ids of up to ``n`` items to give next after ``answers``; empty once the test is done."""
        return [self.items[j] for j in self.session(answers, unavailable).next_items(whole_number("n", n, 1))]

    def result(self, answers: dict, unavailable=()) -> dict:
        """The estimate after ``answers``: Session.estimate's dict plus ``done``."""
        s = self.session(answers, unavailable)
        return {**s.estimate(), "done": s.done()}

    def summary_lines(self) -> list[str]:
        return [f"adaptive: a 2PL bank of {len(self.items)} items fitted on {self.bank.info.get('n_ref')} reference "
                f"models; each model gets at most {self.k} items by maximum information",
                *(f"{w + ':':11s} {format_figures(self.figures.get(w, {}))}" for w in ("validation", "test")),
                *([f"note: {self.dataset['caveat']}"] if "caveat" in self.dataset else [])]

    def evaluation_lines(self, res: dict, data) -> list[str]:
        return [f"{data.name}: adaptive k<={self.k} ({res['items_used']:.1f} items used on average): "
                f"{format_figures(res)}"]

    def to_dict(self) -> dict:
        return {**self.header(), **{f: getattr(self, f) for f in ("method", "k", "seed", "params", "items",
                "calibration", "dataset", "split", "figures", "selection")}, "bank": self.bank.to_dict()}

    @classmethod
    def _from_checked(cls, d: dict, source: str) -> "AdaptiveCompressed":
        try:
            art = cls(bank=ItemBank.from_dict(d["bank"]), **{f: d[f] for f in cls.REQUIRED[2:] if f != "bank"},
                      **{f: d[f] for f in ("split", "selection", "created", "essence_version") if f in d})
            k, items, cal, _ = whole_number("k", art.k, 1), art.items, art.calibration, art.policy
            _check_calibration(cal, k)
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"{source}: a damaged adaptive artifact ({type(exc).__name__}: {exc})") from None
        if len(items) != art.bank.n_items or len(set(items)) != len(items):
            raise InputError(f"{source}: {len(items)} item ids for a bank of {art.bank.n_items} items (or repeated "
                             f"ids), or a calibration that does not cover k = {k} items")
        return art


def _check_calibration(cal: dict, k: int) -> None:
    """ValueError unless ``cal`` is an adaptive calibration for ``k`` items: ``s_in``, ``s_out`` ``(k + 1,)`` finite
    and >= 0, ``z`` > 0, ``level`` in (0, 1), finite ``thr`` and an increasing ``ref_range`` (pp)."""
    s_in, s_out = (np.asarray(cal[f], dtype=np.float64) for f in ("s_in", "s_out"))
    z, level, thr = (float(cal[f]) for f in ("z", "level", "thr"))
    lo, hi = (float(x) for x in cal["ref_range"])
    if s_in.shape != (k + 1,) or s_out.shape != (k + 1,):
        raise ValueError(f"calibration: s_in and s_out do not cover k = {k} items ({k + 1} numbers each)")
    if not np.isfinite(np.r_[s_in, s_out, z, thr, lo, hi]).all() or (np.r_[s_in, s_out] < 0).any():
        raise ValueError("calibration: s_in, s_out, z, thr and ref_range must be finite (s_in, s_out >= 0)")
    if not (z > 0 and 0 < level < 1 and lo <= hi):
        raise ValueError(f"calibration: z = {z} must be > 0, level = {level} in (0, 1), ref_range increasing")


def compress_adaptive(data: Responses, k: int, seed: int = 0, split: Split | str | None = "random",
                      test: float | None = None,
                      val: float = 0.1, level: float = 0.9, progress: bool = True, **params) -> AdaptiveCompressed:
    """Fit the bank and the interval of an adaptive test of at most ``k`` items on the references of ``split`` and
    measure it on the test models. ``params``: :data:`PARAMS`. InputError for ``k`` beyond the pool, fewer than
    :data:`MIN_REFERENCES` references or an unknown parameter. ``progress`` is ignored."""
    if not isinstance(data, Responses):
        raise InputError("data: expected a Responses (see essence.data.load)")
    unknown = sorted(set(params) - set(PARAMS))
    if unknown:
        raise InputError(f"method 'adaptive': unknown parameter(s) {unknown}; accepted: {sorted(PARAMS)}")
    p = {**PARAMS, **params}
    seed, k = whole_number("seed", seed, 0), whole_number("k", k, 1)
    if real_number("level", level, 0.0, 1.0, open_min=True) >= 1:
        raise InputError(f"level: must be below 1, got {level}")
    for name in ("sd_log_a", "sd_d", "top_frac"):
        real_number(name, p[name], 0.0, 0.5 if name == "top_frac" else None, open_min=True)
    policy = Policy(**{f: p[f] for f in POLICY_FIELDS}).check()
    if k > data.n_items:
        raise InputError(f"k = {k} is larger than the pool of {data.n_items} items of {data.name}; an adaptive test "
                         f"gives each model at most the pool (use k <= {data.n_items})")
    constant = _warn_constant(data)
    kind = split if isinstance(split, str) else "random"
    test = default_test(kind) if test is None and not isinstance(split, Split) else test
    sp = split if isinstance(split, Split) else split_models(data, test=test, val=val, seed=seed, kind=kind)
    ref = np.sort(np.r_[sp.train, sp.val]).astype(np.intp)
    if ref.size < MIN_REFERENCES:
        raise InputError(f"{ref.size} reference (non-test) models are too few for an item bank and its calibration; "
                         f"adaptive testing needs at least {MIN_REFERENCES}")
    source, answered = data, (~np.isnan(data.responses[ref])).sum(axis=0) > 0
    if not answered.all():
        warn(f"{int((~answered).sum())} item(s) answered by no reference model are left out of the bank")
        data = data.subset(items=answered)
        k = min(k, data.n_items)
    R, y = data.responses, data.target
    fit_kw = {"sd_log_a": p["sd_log_a"], "sd_d": p["sd_d"]}
    with single_thread():
        bank = fit_bank(R[ref], y[ref], **fit_kw)
        cal, oof = calibrate(R[ref], y[ref], k, policy, level=level, folds=whole_number("folds", p["folds"], 2),
                             top_frac=p["top_frac"], seed=seed, fit_kw=fit_kw)
        lo, hi = interval(cal, oof["estimate"][:, k], oof["sd"][:, k], oof["slope"][:, k], k)
        figures = {"validation": _figures(y[ref], oof["estimate"][:, k], lo, hi, "validation figures",
                                          warn_few=False, quiet=constant)}
        selection = {}
        if sp.test.size:
            t = simulate(bank, R[sp.test], k, policy, cal, seed=seed, keys=_keys(data.models[sp.test]))
            figures["test"] = {**_figures(y[sp.test], t.estimate[:, -1], t.lower[:, -1], t.upper[:, -1], "test figures",
                                          quiet=constant), "items_used": float(t.n_items[:, -1].mean())}
            selection["test_distinct_items"] = int(np.unique(t.items[t.items >= 0]).size)
    dataset = {"name": data.name, "fingerprint": source.fingerprint(), "n_models": data.n_models,
               "n_items": source.n_items, "bank_items": data.n_items, "target_source": data.target_source,
               "binary": data.is_binary, "pool_map": list(bank.score_map[:2]) != [0.0, 100.0],
               "target_quantiles": np.round(np.nanpercentile(data.target, np.arange(101)), 4).tolist(),
               "item_means": np.round(np.nanmean(R[ref], axis=0), 4).tolist()}
    if data.name in METABENCH:
        dataset["caveat"] = POOL_CAVEAT
    return AdaptiveCompressed(
        k=int(k), seed=seed, params={**asdict(policy), **{n: p[n] for n in ("sd_log_a", "sd_d", "folds", "top_frac")}},
        items=data.items.tolist(), bank=bank, calibration=cal, dataset=dataset, figures=figures,
        split={"seed": seed, "kind": kind, "test": test, "val": val, "n_test": int(sp.test.size)}, selection=selection,
        created=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"))
