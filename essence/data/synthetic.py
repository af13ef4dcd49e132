"""GENERATED (seeded) 0/1 results for scale tests and cost curves, from a multidimensional 2PL with a guessing
floor ``c_j``: ``P(i answers j) = c_j + (1 - c_j) sigmoid(a_j . theta_i - b_j)``. Same arguments, same matrix."""

from __future__ import annotations

import numpy as np
from tqdm.auto import tqdm

from .checks import whole_number
from .errors import InputError
from .validation import from_arrays

__all__ = ["mirt_parameters", "generate_mirt", "generate_matrix", "GENERATED_LABEL"]

#: prefix of the ``name`` of every generated dataset, so that figures computed on it say so
GENERATED_LABEL = "generated"


def mirt_parameters(n_models: int, n_items: int, dims: int = 5, seed: int = 0, rho: float = 0.6,
                    a_main: float = 1.5, a_side: float = 0.3, b_mean: float = 0.0, b_sd: float = 1.5,
                    guessing: float = 0.25) -> dict:
    """``theta`` ``(n_models, dims)``, ``a`` ``(n_items, dims)``, ``b``, ``c``, ``subject`` ``(n_items,)``."""
    n_models = whole_number("n_models", n_models, 2)
    n_items = whole_number("n_items", n_items, 1)
    dims = whole_number("dims", dims, 1)
    if not 0 <= float(rho) < 1:
        raise InputError(f"rho: the correlation between ability dimensions must be in [0, 1), got {rho}")
    if not 0 <= float(guessing) < 1:
        raise InputError(f"guessing: the chance floor must be in [0, 1), got {guessing}")
    rng = np.random.default_rng(seed)
    # general ability: a right-skewed mixture (most models weak, a tail of strong ones)
    strong = rng.random(n_models) < 0.3
    g = np.where(strong, rng.normal(1.0, 0.8, n_models), rng.normal(-0.45, 0.7, n_models))
    g = (g - g.mean()) / g.std()
    e = rng.normal(size=(n_models, dims))
    theta = np.sqrt(rho) * g[:, None] + np.sqrt(1 - rho) * e
    subject = rng.integers(0, dims, n_items)
    a = rng.lognormal(np.log(a_side), 0.5, size=(n_items, dims))
    a[np.arange(n_items), subject] = rng.lognormal(np.log(a_main), 0.35, size=n_items)
    b = rng.normal(b_mean, b_sd, n_items)
    c = np.full(n_items, float(guessing))
    return {"theta": theta, "a": a, "b": b, "c": c, "subject": subject}


def generate_mirt(n_models: int, n_items: int, dims: int = 5, seed: int = 0, progress: bool = False,
                  chunk_models: int = 256, **params):
    """A `Responses` of ``n_models`` x ``n_items`` 0/1 responses; ``params`` go to :func:`mirt_parameters`."""
    par = mirt_parameters(n_models, n_items, dims=dims, seed=seed, **params)
    R = _draw(par, seed, progress, chunk_models, np.float64)  # drawn into the Responses' own matrix
    return from_arrays(
        R, copy=False, models=[f"gen-m{i}" for i in range(R.shape[0])], items=[f"gen-i{j}" for j in range(R.shape[1])],
        name=f"{GENERATED_LABEL}-mirt{dims}d-{n_models}x{n_items}-s{seed}",
        item_extras={"subject": par["subject"]}, model_extras={"ability": par["theta"].mean(axis=1)})


def generate_matrix(n_models: int, n_items: int, dims: int = 5, seed: int = 0, progress: bool = False,
                    chunk_models: int = 256, **params) -> np.ndarray:
    """The ``(n_models, n_items)`` float32 matrix of :func:`generate_mirt` (same arguments, same values)."""
    par = mirt_parameters(n_models, n_items, dims=dims, seed=seed, **params)
    return _draw(par, seed, progress, chunk_models)


def _draw(par: dict, seed, progress: bool, chunk_models: int, dtype=np.float32) -> np.ndarray:
    theta, a, b, c = par["theta"], par["a"], par["b"], par["c"]
    n_models, n_items = theta.shape[0], a.shape[0]
    out = np.empty((n_models, n_items), dtype=dtype)
    # a second stream, so that the parameters do not depend on how the cells are drawn
    rng = np.random.default_rng([int(seed), 1])
    at = np.ascontiguousarray(a.T)
    for s in tqdm(range(0, n_models, chunk_models), desc="generating", unit="chunk", disable=not progress):
        t = theta[s:s + chunk_models]
        p = c + (1 - c) / (1 + np.exp(-(t @ at - b)))
        out[s:s + t.shape[0]] = rng.random(p.shape) < p
    return out
