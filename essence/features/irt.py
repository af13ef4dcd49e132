"""Two-parameter logistic (2PL) IRT, ``P_j(theta) = sigmoid(a_j (theta - b_j))``, on the standardised logit scale
(training abilities: mean 0, sd 1), fitted with py-irt (:func:`fit_2pl`, cached by :func:`fit_2pl_cached`)."""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import ClassVar

import numpy as np
from tqdm.auto import tqdm

from ..data._io import write_atomic
from ..data.checks import Flag, OneOf, Real, Settings, Whole, as_matrix, check_params
from ..data.errors import InputError
from .cache import cache_root

__all__ = ["ItemParams", "binarize", "prob", "fisher_information", "estimate_ability", "fit_2pl", "fit_2pl_cached",
           "irt_cache_dir", "DEFAULT_FIT", "IRTConfig", "fit_item_params"]

#: Default py-irt settings.
DEFAULT_FIT = {"epochs": 150, "lr": 0.1, "lr_decay": 0.9999, "priors": "hierarchical", "max_models": 500}


@dataclass(frozen=True)
class IRTConfig(Settings):
    """IRT settings of the ``irt`` and ``tinybench`` methods."""

    binarize: float = 0.5
    epochs: int = DEFAULT_FIT["epochs"]
    lr: float = DEFAULT_FIT["lr"]
    lr_decay: float = DEFAULT_FIT["lr_decay"]
    priors: str = DEFAULT_FIT["priors"]
    max_models: int | None = DEFAULT_FIT["max_models"]
    prior_sd: float = 1.0
    cache: bool = True

    _domains: ClassVar[dict] = {"binarize": Real(0.0, 1.0), "epochs": Whole(1), "lr": Real(0.0, open_min=True),
                                "lr_decay": Real(0.0, 1.0, open_min=True), "priors": OneOf("hierarchical", "vague"),
                                "max_models": Whole(2, none=True), "prior_sd": Real(0.0, open_min=True),
                                "cache": Flag()}

    def fit_settings(self) -> dict:
        """The keys of :data:`DEFAULT_FIT`, as :func:`fit_2pl_cached` takes them."""
        return {n: getattr(self, n) for n in DEFAULT_FIT}


#: Bumped whenever fitted numbers change (cache key).
_ALGO_VERSION = 1
_MEMO: dict[str, "ItemParams"] = {}


@dataclass(frozen=True, eq=False)
class ItemParams:
    """Fitted 2PL parameters, each ``(n_items,)``: ``a`` (>= 0), ``b``, ``p_fixed`` (constant items, else NaN)."""

    a: np.ndarray
    b: np.ndarray
    p_fixed: np.ndarray
    settings: dict = field(default_factory=dict)
    info: dict = field(default_factory=dict)

    @property
    def n_items(self) -> int:
        return int(self.a.size)

    def prob(self, theta) -> np.ndarray:
        """``(n_theta, n_items)`` success probabilities; constant items give their ``p_fixed``."""
        p = prob(theta, self.a, self.b)
        fixed = ~np.isnan(self.p_fixed)
        if fixed.any():
            p[:, fixed] = self.p_fixed[fixed]
        return p

    def subset(self, idx) -> "ItemParams":
        idx = np.asarray(idx, dtype=np.intp)
        return ItemParams(self.a[idx], self.b[idx], self.p_fixed[idx], dict(self.settings), dict(self.info))

    def to_dict(self) -> dict:
        return {"a": [float(v) for v in self.a], "b": [float(v) for v in self.b],
                "p_fixed": [None if np.isnan(v) else float(v) for v in self.p_fixed], "settings": self.settings,
                "info": self.info}

    @classmethod
    def from_dict(cls, d: dict) -> "ItemParams":
        pf = np.array([np.nan if v is None else float(v) for v in d["p_fixed"]], dtype=np.float64)
        return cls(np.asarray(d["a"], dtype=np.float64), np.asarray(d["b"], dtype=np.float64), pf,
                   dict(d.get("settings", {})), dict(d.get("info", {})))


def binarize(responses, threshold: float = 0.5) -> np.ndarray:
    """0/1 copy of ``responses``: 1 where ``x >= threshold`` (in (0, 1], else InputError), NaN kept."""
    if not (isinstance(threshold, (int, float, np.floating)) and 0 < float(threshold) <= 1):
        raise InputError(f"binarize: threshold {threshold!r} must be a number in (0, 1], e.g. 0.5")
    R = np.asarray(responses, dtype=np.float64)
    return np.where(np.isnan(R), np.nan, (R >= float(threshold)).astype(np.float64))


def _sigmoid(z):
    return 0.5 * (1.0 + np.tanh(0.5 * z))


def prob(theta, a, b) -> np.ndarray:
    """2PL success probability ``sigmoid(a (theta - b))``: ``theta`` ``(n,)``, ``a``, ``b`` ``(m,)`` -> ``(n, m)``."""
    theta = np.atleast_1d(np.asarray(theta, dtype=np.float64))
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    return _sigmoid(a[None, :] * (theta[:, None] - b[None, :]))


def fisher_information(theta, a, b) -> np.ndarray:
    """Fisher information ``a^2 P (1 - P)`` of each item at each ability: ``(n_theta, n_items)``."""
    p = prob(theta, a, b)
    a = np.asarray(a, dtype=np.float64)
    return (a[None, :] ** 2) * p * (1.0 - p)


def estimate_ability(X, a, b, prior_mean: float = 0.0, prior_sd: float = 1.0, max_iter: int = 100,
                     tol: float = 1e-10) -> np.ndarray:
    """MAP abilities ``(n_models,)`` from 0/1 ``X`` ``(n_models, k)`` (NaN left out) and ``(k,)`` ``a``, ``b`` under a
    ``N(prior_mean, prior_sd^2)`` prior."""
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise InputError(f"X: expected (n_models, k), got shape {X.shape}")
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != (X.shape[1],) or b.shape != (X.shape[1],):
        raise InputError(f"a, b: expected shape ({X.shape[1]},) to match X's columns, got {a.shape} and {b.shape}")
    if not prior_sd > 0:
        raise InputError(f"prior_sd: {prior_sd} must be positive")
    obs = ~np.isnan(X)
    Xo = np.where(obs, X, 0.0)
    W = obs.astype(np.float64)
    prec = 1.0 / prior_sd**2
    theta = np.full(X.shape[0], float(prior_mean))
    for _ in range(max_iter):
        p = _sigmoid(a[None, :] * (theta[:, None] - b[None, :]))
        grad = ((Xo - p) * W) @ a - (theta - prior_mean) * prec
        hess = (p * (1.0 - p) * W) @ (a**2) + prec
        step = np.clip(grad / hess, -1.0, 1.0)
        theta = theta + step
        if np.max(np.abs(step), initial=0.0) < tol:
            break
    return theta


def fit_2pl(responses, *, epochs: int = DEFAULT_FIT["epochs"], lr: float = DEFAULT_FIT["lr"],
            lr_decay: float = DEFAULT_FIT["lr_decay"], priors: str = DEFAULT_FIT["priors"],
            max_models: int | None = DEFAULT_FIT["max_models"], seed: int = 0, threads: int = 1,
            progress: bool = True) -> ItemParams:
    """:class:`ItemParams` of 0/1 ``responses`` ``(n_models, n_items)`` (NaN = missing) by py-irt's SVI; InputError
    for non-0/1 responses or fewer than 2 varying items."""
    R = as_matrix(responses, "responses")
    vals = R[~np.isnan(R)]
    if vals.size and not np.all((vals == 0) | (vals == 1)):
        raise InputError("responses: the 2PL model needs 0/1 responses; threshold continuous scores first "
                         "with essence.features.irt.binarize(responses, threshold)")
    given = {"priors": priors, "epochs": epochs, "max_models": max_models, "lr": lr, "lr_decay": lr_decay}
    check_params(SimpleNamespace(**given), {name: IRTConfig._domains[name] for name in given})
    n_models, n_items = R.shape
    settings = {"epochs": int(epochs), "lr": float(lr), "lr_decay": float(lr_decay), "priors": priors,
                "max_models": None if max_models is None else int(max_models), "seed": int(seed)}

    obs = ~np.isnan(R)
    n_obs = obs.sum(axis=0)
    succ = np.where(obs, R, 0.0).sum(axis=0)
    constant = (succ == 0) | (succ == n_obs)
    p_fixed = np.where(constant, (succ + 0.5) / (n_obs + 1.0), np.nan)
    fit_items = np.flatnonzero(~constant)
    if fit_items.size < 2:
        raise InputError(f"responses: only {fit_items.size} of {n_items} items vary over the models; the 2PL "
                         "model needs at least 2 items that some models pass and some fail")

    rng = np.random.default_rng(seed)
    rows = (np.sort(rng.choice(n_models, size=int(max_models), replace=False))
            if max_models is not None and n_models > max_models else np.arange(n_models))
    sub = R[np.ix_(rows, fit_items)]
    keep = (~np.isnan(sub)).any(axis=1)
    rows, sub = rows[keep], sub[keep]
    if rows.size < 2:
        raise InputError("responses: fewer than 2 models answered any varying item; give more models")

    t0 = time.perf_counter()
    ability, diff, disc, loss = _pyirt_svi(sub, epochs=int(epochs), lr=float(lr), lr_decay=float(lr_decay),
                                           priors=priors, seed=int(seed), threads=threads, progress=progress)
    seconds = time.perf_counter() - t0
    if not (np.isfinite(ability).all() and np.isfinite(diff).all() and np.isfinite(disc).all()):
        raise InputError(f"py-irt 2PL fit diverged (non-finite parameters); lower the learning rate lr={lr}")

    # standardise: fitted abilities of the models used -> mean 0, sd 1
    mu, sd = float(np.mean(ability)), float(np.std(ability))
    sd = sd if sd > 0 else 1.0
    a = np.zeros(n_items)
    b = np.zeros(n_items)
    a[fit_items] = disc * sd
    b[fit_items] = (diff - mu) / sd
    info = {"n_models": int(n_models), "n_models_fit": int(rows.size), "n_items": int(n_items),
            "n_constant_items": int(constant.sum()), "seconds": round(seconds, 3), "final_loss": float(loss),
            "ability_mean_raw": mu, "ability_sd_raw": sd}
    return ItemParams(a, b, p_fixed, settings, info)


def _pyirt_svi(R, *, epochs, lr, lr_decay, priors, seed, threads, progress):
    """Raw ``(ability, diff, disc, loss)`` of py-irt's 2PL on ``R`` ``(n, m)``."""
    import pyro
    import torch
    from pyro.infer import SVI, Trace_ELBO
    from py_irt.models.two_param_logistic import TwoParamLog
    from .lm import _torch_threads

    s_idx, i_idx = np.nonzero(~np.isnan(R))
    with _torch_threads(max(1, int(threads))):
        pyro.set_rng_seed(seed)
        pyro.clear_param_store()
        model = TwoParamLog(priors=priors, num_items=R.shape[1], num_subjects=R.shape[0], device="cpu")
        pm, pg = model.get_model(), model.get_guide()
        scheduler = pyro.optim.ExponentialLR(
            {"optimizer": torch.optim.Adam, "optim_args": {"lr": lr}, "gamma": lr_decay})
        svi = SVI(pm, pg, scheduler, loss=Trace_ELBO())
        subjects = torch.tensor(s_idx, dtype=torch.long)
        items = torch.tensor(i_idx, dtype=torch.long)
        obs = torch.tensor(R[s_idx, i_idx], dtype=torch.float)
        _ = pm(subjects, items, obs)
        _ = pg(subjects, items, obs)
        loss = float("nan")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                for _ in tqdm(range(epochs), desc="py-irt 2PL", unit="epoch", disable=not progress, leave=False):
                    loss = svi.step(subjects, items, obs)
                    scheduler.step()
            except ValueError as exc:  # pyro's distribution checks fire on NaN parameters
                raise InputError(f"py-irt 2PL fit diverged (non-finite parameters: {str(exc).splitlines()[0][:120]}); "
                                 f"lower the learning rate lr={lr} (e.g. to 0.05)") from None
        out = model.export()
    return (*(np.asarray(out[k], dtype=np.float64) for k in ("ability", "diff", "disc")), loss)


def irt_cache_dir() -> Path:
    """``cache_root() / "irt"``: where fitted item parameters are cached."""
    return Path(cache_root()) / "irt"


def fit_2pl_cached(train, *, threshold: float = 0.5, cache: bool = True, progress: bool = True,
                   **settings) -> ItemParams:
    """:func:`fit_2pl` (``settings``: its keywords) on ``binarize(train.responses, threshold)``, cached in memory
    and in ``irt_cache_dir()``; ``cache=False`` always fits and writes nothing."""
    full = {k: settings.get(k, v) for k, v in DEFAULT_FIT.items()}
    full["seed"] = int(settings.get("seed", 0))
    unknown = set(settings) - set(full) - {"threads"}
    if unknown:
        raise InputError(f"fit_2pl_cached: unknown setting(s) {sorted(unknown)}; accepted: {sorted(full)}")
    threads = settings.get("threads", 1)
    key_src = json.dumps({"data": train.fingerprint(), "threshold": float(threshold), "settings": full,
                          "py_irt": importlib.metadata.version("py-irt"), "algo": _ALGO_VERSION}, sort_keys=True)
    key = hashlib.sha256(key_src.encode()).hexdigest()[:24]
    if cache and key in _MEMO:
        _MEMO[key].info["cache"] = "memory"
        return _MEMO[key]
    path = irt_cache_dir() / f"{key}.json"
    if cache and path.is_file():
        try:
            params = ItemParams.from_dict(json.loads(path.read_text()))
            if params.n_items == train.n_items:
                params.info["cache"] = "disk"
                _MEMO[key] = params
                return params
        except (OSError, ValueError, KeyError, TypeError):
            pass  # damaged or foreign file: refit and overwrite
    R = binarize(train.responses, threshold)
    params = fit_2pl(R, threads=threads, progress=progress, **full)
    params.info["cache"] = "miss"
    if cache:
        write_atomic(path, json.dumps(params.to_dict()), overwrite=True)
        _MEMO[key] = params
    return params


_binarize = binarize  # fit_item_params's keyword ``binarize`` (the selectors' parameter name) shadows it


def fit_item_params(train, *, method: str, binarize: float = 0.5, cache: bool = True, progress: bool = True,
                    seed: int = 0, **settings) -> tuple[ItemParams, np.ndarray, dict]:
    """``(params, Rb, record)``: :func:`fit_2pl_cached` on ``train``, the binarised responses ``(n_train, n_items)``
    (continuous scores warned about, naming ``method``) and a JSON-able record of the fit."""
    Rb = _binarize(train.responses, binarize)
    if not train.is_binary:
        warnings.warn(f"{method}: {train.name} has continuous scores; the 2PL model sees them "
                      f"thresholded at binarize={binarize} (x >= {binarize} -> 1)", UserWarning, stacklevel=4)
    params = fit_2pl_cached(train, threshold=binarize, cache=cache, progress=progress, seed=seed, **settings)
    return params, Rb, {**params.settings, **params.info, "binarize": binarize}
