"""The compressed suite: k items across several benchmarks, a reconstructor and interval per member; one JSON file."""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd
from joblib import Parallel, delayed

from ..artifact.base import Artifact, check_answers, check_same_benchmark, format_figures, missing_items
from ..artifact.checks import check_artifact
from ..artifact.compressed import _figures
from ..data import split_models
from ..data._io import jsonable
from ..data._runtime import single_thread
from ..data.checks import whole_number
from ..data.errors import InputError, warn
from ..data.split import default_test
from ..reconstructors.base import KINDS as RECONSTRUCTOR_KINDS, reconstructor_class
from ..reconstructors.boost import BoostReconstructor
from ..reconstructors.choose import choose_average_by_cv, choose_by_cv
from ..reconstructors.intervals import IntervalModel, cross_fitted_predictions
from ..reconstructors.kernel import KernelReconstructor
from ..reconstructors.simple import MeanRidgeReconstructor, RidgeGAMReconstructor
from .data import SEP, Suite, shared_models
from .select import select_suite

__all__ = ["SuiteCompressed", "compress_suite", "SUITE_SCHEMA", "BASIC_RECONSTRUCTORS", "member_candidates",
           "fit_members"]

SUITE_SCHEMA = "essence.suite"
SUITE_SCHEMA_VERSION = 1
#: the kinds ``reconstructors="basic"`` chooses among by CV (no averages): what the comparison sweep uses
BASIC_RECONSTRUCTORS = ("ridge", "ridge_gam", "mean_ridge")


@dataclass
class SuiteCompressed(Artifact):
    """``names``: members in compress order; ``items``: ``{name: [chosen item ids]}`` (read in the order of
    :meth:`columns`); ``reconstructors``, ``intervals``: one per member; ``mean_interval``: the suite mean's
    (its estimate is the mean of the member estimates); ``figures``: ``{"validation"|"test": {name|"mean": ...}}``."""

    names: list
    items: dict
    reconstructors: dict
    intervals: dict
    mean_interval: IntervalModel

    SCHEMA: ClassVar[str] = SUITE_SCHEMA
    SCHEMA_VERSION: ClassVar[int] = SUITE_SCHEMA_VERSION
    REQUIRED: ClassVar[tuple] = ("method", "k", "seed", "params", "names", "items", "members", "mean_interval",
                                 "dataset", "figures")

    @property
    def n_inputs(self) -> int:
        return len(self.names)

    def columns(self) -> list[str]:
        """The chosen items as pooled ids ``member/item``, in the order every reconstructor reads them."""
        return [f"{n}{SEP}{i}" for n in self.names for i in self.items[n]]

    # -- estimates -------------------------------------------------------------------------------
    def _matrix(self, data) -> tuple[np.ndarray, np.ndarray, list]:
        """``(models (n,), X (n, k), members)`` on the models in all of ``data`` (one per member, in order)."""
        members = [self._data(d) for d in self.inputs(data)]
        models = shared_models(members)
        if not models:
            raise InputError(f"no model is in all {len(members)} results files; a suite estimate needs each model's "
                             "results on every member's chosen items")
        shared = set(models)
        left = [(n, [s for s in m.models.tolist() if s not in shared]) for n, m in zip(self.names, members)]
        left = [(n, v) for n, v in left if v]
        if left:
            warn(f"{sum(len(v) for _, v in left)} model(s) are not in every results file and get no estimate: "
                 + "; ".join(f"{n}: {len(v)}, e.g. {v[0]!r}" for n, v in left)
                 + " (check that the files name models the same way)", stacklevel=3)
        blocks = []
        for name, m in zip(self.names, members):
            pos = {s: i for i, s in enumerate(m.items.tolist())}
            missing = [s for s in self.items[name] if s not in pos]
            if missing:
                raise InputError(f"{name} (file {m.name}): {len(missing)} of its {len(self.items[name])} chosen items "
                                 f"are missing: {missing_items(missing)}; is the file the right benchmark, in the "
                                 f"suite's order ({', '.join(self.names)})?")
            blocks.append(m.subset(models=models).responses[:, [pos[s] for s in self.items[name]]])
        X = np.hstack(blocks) if blocks else np.zeros((len(models), 0))
        check_answers(X, models)
        return np.asarray(models), X, members

    def estimate(self, data):
        """DataFrame ``model`` + per member and ``mean``: ``NAME``, ``NAME_lower``, ``NAME_upper`` (pp)."""
        models, X, _ = self._matrix(data)
        est = self._predict(X)
        cols = {"model": models}
        for name, e in est.items():
            lo, hi = self._interval_of(name).interval(e)
            cols.update({name: e, f"{name}_lower": lo, f"{name}_upper": hi})
        return pd.DataFrame(cols)

    def _interval_of(self, name: str) -> IntervalModel:
        return self.mean_interval if name == "mean" else self.intervals[name]

    def _all_figures(self, truth: dict, est: dict, what: str, warn_few: bool = True) -> dict:
        """``{name|"mean": figures}`` of ``est`` against ``truth``; ``what``: the warnings' label, ``{}`` = name."""
        out = {}
        for name in [*self.names, "mean"]:
            lo, hi = self._interval_of(name).interval(est[name])
            out[name] = _figures(truth[name], est[name], lo, hi, what.format(name), warn_few=warn_few)
        return out

    def _predict(self, X) -> dict:
        est = {n: np.asarray(self.reconstructors[n].predict(X), dtype=np.float64) for n in self.names}
        est["mean"] = np.mean([est[n] for n in self.names], axis=0)
        return est

    def evaluate(self, data) -> dict:
        """``{"n_models", "benchmarks": {name: summary + coverage}, "mean": {...}}`` on the models in all files."""
        models, X, members = self._matrix(data)
        check_same_benchmark(X, self.dataset.get("item_means"), "+".join(m.name for m in members))
        est = self._predict(X)
        truth = {n: m.subset(models=models).target for n, m in zip(self.names, members)}
        truth["mean"] = np.mean([truth[n] for n in self.names], axis=0)
        figs = self._all_figures(truth, est, "{} figures")
        return {"n_models": int(len(models)), "benchmarks": {n: figs[n] for n in self.names}, "mean": figs["mean"]}

    # -- what the command line prints -------------------------------------------------------------
    def summary_lines(self) -> list[str]:
        """What ``essence compress`` prints about the suite artifact it wrote."""
        lines = ["budget: " + ", ".join(f"{n} {c}" for n, c in self.selection["budget"].items())]
        for name in [*self.names, "mean"]:
            lines.append(f"test {name:12s} {format_figures(self.figures.get('test', {}).get(name, {}))}")
        lines.append(f"(errors in pp on held-out test models; coverage of the {self.mean_interval.level:.0%} interval)")
        if self.dataset.get("caveat"):
            lines.append(f"note: {self.dataset['caveat']}")
        return lines

    def evaluation_lines(self, res: dict, data) -> list[str]:
        """What ``essence evaluate`` prints for :meth:`evaluate`'s ``res``."""
        lines = [f"suite {' + '.join(self.names)}: {self.method} k={self.k}: {res['n_models']} models in all files"]
        for name, fig in [*res["benchmarks"].items(), ("mean", res["mean"])]:
            lines.append(f"{name:12s} {format_figures({k: v for k, v in fig.items() if k != 'n_models'})}")
        if self.dataset.get("caveat"):
            lines.append(f"note: {self.dataset['caveat']}")
        return lines

    # -- persistence -----------------------------------------------------------------------------
    def to_dict(self) -> dict:
        return {
            **self.header(), "method": self.method, "k": int(self.k), "seed": int(self.seed),
            "params": self.params, "names": list(self.names), "items": {n: list(self.items[n]) for n in self.names},
            "members": {n: {"reconstructor": self.reconstructors[n].to_dict(),
                            "interval": self.intervals[n].to_dict()} for n in self.names},
            "mean_interval": self.mean_interval.to_dict(), "dataset": self.dataset, "split": self.split,
            "figures": self.figures, "selection": self.selection}

    @classmethod
    def _from_checked(cls, d: dict, source: str) -> "SuiteCompressed":
        names = d["names"]
        if (not isinstance(names, list) or len(names) < 2 or not isinstance(d["items"], dict)
                or not isinstance(d["members"], dict) or any(n not in d["items"] or n not in d["members"] for n in names)):
            raise InputError(f"{source}: damaged: names, items and members do not name the same benchmarks")
        cols = [f"{n}{SEP}{i}" for n in names for i in d["items"][n]]
        recs, ivs = {}, {}
        for n in names:  # each member checked as a single artifact over all chosen items
            one = {"k": d["k"], "seed": d["seed"], "params": d["params"], "items": cols, **d["members"][n]}
            recs[n], ivs[n] = check_artifact(one, f"{source} [{n}]")
        try:
            mean_iv = IntervalModel.from_dict(d["mean_interval"])
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"{source}: damaged: mean_interval cannot be rebuilt ({exc})") from None
        return cls(method=d["method"], k=int(d["k"]), seed=int(d["seed"]), params=d["params"], names=list(names),
                   items={n: list(d["items"][n]) for n in names}, reconstructors=recs, intervals=ivs,
                   mean_interval=mean_iv, dataset=d["dataset"], figures=d["figures"], split=d.get("split", {}),
                   selection=d.get("selection", {}), created=d.get("created", ""),
                   essence_version=d.get("essence_version", "unknown"))

    def __repr__(self) -> str:
        t = self.figures.get("test", {}).get("mean", {})
        return (f"SuiteCompressed(method={self.method!r}, k={self.k}, members={self.names}, "
                f"budget={self.selection.get('budget')}, test_mean_rmse={t.get('rmse', float('nan')):.3f} pp)")


def member_candidates(idx, member_of, b: int) -> dict:
    """label -> factory: the candidates of member ``b`` on the pooled items ``idx`` ``(k,)`` (``member_of``
    ``(M,)``: the member of each pooled item): ridge + GAM, mean + ridge, kernel ridge on the member's own items
    and boosted trees on the answers and the members' sub-scores."""
    owner = np.asarray(member_of)[np.asarray(idx, dtype=np.intp)]
    own = np.flatnonzero(owner == b).tolist()
    blocks = [np.flatnonzero(owner == m).tolist() for m in np.unique(owner)]
    return {"ridge_gam": RidgeGAMReconstructor, "mean_ridge": MeanRidgeReconstructor,
            "kernel": lambda: KernelReconstructor(own=own), "boost": lambda: BoostReconstructor(blocks=blocks)}


def _fit_member(X, y, R, candidates, seed: int):
    """One member's ``(label, fitted, scores, out-of-fold predictions)`` (a dict of ``candidates``: greedy ensemble)."""
    with single_thread():
        if isinstance(candidates, dict):
            return choose_average_by_cv(candidates, X, y, seed=seed, R=R, combine="greedy")
        label, rec, scores = choose_by_cv({kind: reconstructor_class(kind) for kind in candidates}, X, y, seed=seed,
                                          R=R)
        return label, rec, scores, cross_fitted_predictions(rec, X, y, seed=seed, R=R)


def fit_members(suite_fit: Suite, idx, reconstructors="default", n_train: int | None = None, level: float = 0.9,
                seed: int = 0, jobs: int = 2):
    """Per member: the reconstructor on pooled items ``idx`` by 5-fold CV and its interval. ``reconstructors``:
    ``"default"`` (:func:`member_candidates`), ``"basic"`` (:data:`BASIC_RECONSTRUCTORS`) or a tuple of kinds;
    ``n_train``: the first models train, the rest calibrate the intervals (None: all); ``jobs``: processes.
    Returns ``(recs, intervals, mean_interval, choice, cv_pred (n, B))``."""
    if isinstance(reconstructors, str):
        if reconstructors not in ("default", "basic"):
            raise InputError(f"reconstructors: {reconstructors!r}; give 'default', 'basic' or a list of kinds")
        kinds = BASIC_RECONSTRUCTORS if reconstructors == "basic" else None
    else:
        kinds = tuple(reconstructors)
        unknown = [r for r in kinds if r not in RECONSTRUCTOR_KINDS]
        if unknown or not kinds:
            raise InputError(f"reconstructors: unknown kind {unknown[0] if unknown else None!r}; "
                             f"choose among {', '.join(sorted(RECONSTRUCTOR_KINDS))}")
    R = suite_fit.pooled().responses
    X, Y = R[:, idx], suite_fit.targets
    nt = X.shape[0] if n_train is None else int(n_train)
    cands = [kinds or member_candidates(idx, suite_fit.member_of, b) for b in range(Y.shape[1])]
    jobs = max(1, min(int(jobs), Y.shape[1]))
    if jobs > 1:
        done = Parallel(n_jobs=jobs)(delayed(_fit_member)(X, Y[:, b], R, cands[b], seed) for b in range(Y.shape[1]))
    else:
        done = [_fit_member(X, Y[:, b], R, cands[b], seed) for b in range(Y.shape[1])]
    recs, ivs, choice, cv = {}, {}, {}, np.empty_like(Y)
    for b, (name, (label, rec, scores, oof)) in enumerate(zip(suite_fit.names, done)):
        recs[name], cv[:, b] = rec, oof
        choice[name] = {"kind": label, "cv_rmse": {k_: (round(v, 5) if isinstance(v, float) else v)
                                                    for k_, v in scores.items()},
                        **({"weights": dict(zip(label.split("+"), rec.part_weights))}
                           if getattr(rec, "part_weights", None) is not None else {})}
        ivs[name] = _interval(cv[:, b], Y[:, b], nt, level)
    return recs, ivs, _interval(cv.mean(axis=1), Y.mean(axis=1), nt, level), choice, cv


def _interval(pred, y, n_train: int, level: float) -> IntervalModel:
    if n_train >= len(y):
        return IntervalModel(level=level).fit(pred, y, pred[:0], y[:0])
    return IntervalModel(level=level).fit(pred[:n_train], y[:n_train], pred[n_train:], y[n_train:])


def compress_suite(suite: Suite, k: int, method: str = "essence", seed: int = 0, split=None, test: float | None = None,
                   val: float = 0.1, level: float = 0.9, per_benchmark: int = 0, reconstructors="default",
                   jobs: int = 2, progress: bool = True, **params) -> SuiteCompressed:
    """Choose ``k`` items across ``suite`` with ``method`` and fit every member's reconstructor on them (training
    and validation models only; ``split`` defaults to ``split_models`` on the suite mean). ``params`` go to
    :func:`select_suite`; ``reconstructors``, ``jobs`` to :func:`fit_members`."""
    if not isinstance(suite, Suite):
        raise InputError("suite: expected a Suite (see essence.suite.load_suite)")
    seed = whole_number("seed", seed, 0)
    kind = split if isinstance(split, str) else "random"
    test = default_test(kind) if test is None and isinstance(split, (str, type(None))) else test
    split = split if not isinstance(split, (str, type(None))) else split_models(suite.mean_target, test=test, val=val,
                                                                                   seed=seed, kind=kind)
    train, valid, testd = (suite.subset(ix) for ix in split)
    with single_thread():
        idx, info = select_suite(train, valid, k, method=method, seed=seed, per_benchmark=per_benchmark,
                                 progress=progress, **params)
        fit_part = suite.subset(np.r_[split.train, split.val])
        recs, ivs, mean_iv, choice, cv = fit_members(fit_part, idx, reconstructors, train.n_models, level, seed,
                                                     jobs=jobs)
    pooled_ids = suite.pooled().items[idx]
    items = {n: [s.split(SEP, 1)[1] for s in pooled_ids if s.split(SEP, 1)[0] == n] for n in suite.names}
    art = SuiteCompressed(
        method=method, k=int(k), seed=int(seed), params=jsonable(params), names=suite.names, items=items,
        reconstructors=recs, intervals=ivs, mean_interval=mean_iv,
        dataset={"names": suite.names, "n_models": suite.n_models, "dropped": suite.dropped,
                 "n_items": dict(zip(suite.names, suite.n_items)), "fingerprint": suite.fingerprint(),
                 "item_means": np.round(np.nanmean(fit_part.pooled().responses[:, idx], axis=0), 4).tolist(),
                 **({"caveat": suite.caveat} if suite.caveat else {})},
        figures={}, split={"seed": int(seed), "kind": kind, "test": test, "val": val, "n_train": train.n_models,
                           "n_val": valid.n_models, "n_test": testd.n_models},
        selection={**info, "reconstructor_choice": choice},
        created=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"))
    if art.columns() != pooled_ids.tolist():  # a bug, not user input: members keep their pooled order
        raise RuntimeError("suite artifact: chosen columns out of order")
    nt = train.n_models
    val_est = {n: cv[nt:, b] for b, n in enumerate(suite.names)}
    val_est["mean"] = cv[nt:].mean(axis=1)
    figs = {}
    for label, part, est in (("validation", valid, val_est), ("test", testd, None)):
        if not part.n_models:
            continue
        est = art._predict(part.pooled().responses[:, idx]) if est is None else est
        truth = {n: part.targets[:, b] for b, n in enumerate(suite.names)}
        truth["mean"] = part.mean_target
        figs[label] = art._all_figures(truth, est, f"{label} figures ({{}})", warn_few=label == "test")
    art.figures = figs
    return art
