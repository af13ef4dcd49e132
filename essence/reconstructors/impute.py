"""Fill the blocks of answers some models lack, from the blocks they have (conditional-mean imputation).

In a suite, a member's models outside the suite have that member's answers but not every other member's
(:meth:`essence.suite.data.Suite.outside_rows`: their cells on an absent member's chosen items are NaN). A
kind that needs a full answer vector (the kernel) can still train on them once the missing blocks are filled
with their expected values given the blocks present: :func:`impute_blocks` fits, on reference models that
have every block, one ridge regression per pattern of missing blocks from the present columns to the missing
ones (centred, penalty ``penalty * n`` on the coefficients), the linear conditional mean, clipped to [0, 1]
and rounded to a grid of ``1 / levels`` so a kernel artifact can store the rows as short strings.

Measured on the five metabench pools (``benchmarks/suite.py --seeds 0 1 2 3 4 --kinds``, README "Suites"):
the kernel trained on the outside models too had a CV RMSE 1-8 % below the kernel on the shared models
alone on every member; with the missing blocks filled by column means instead (a one-off probe, seed 0,
script not kept), it was worse than the plain kernel on WinoGrande (1.476 against 1.451 pp).
"""

from __future__ import annotations

import numpy as np

from ..data.errors import InputError

__all__ = ["impute_blocks", "IMPUTE_LEVELS"]

IMPUTE_LEVELS = 20  # imputed answers are rounded to multiples of 1 / IMPUTE_LEVELS


def _blocks(blocks, k: int) -> list[np.ndarray]:
    out, seen = [], set()
    for b in blocks:
        cols = np.asarray(list(b), dtype=np.intp)
        if cols.size == 0 or cols.min() < 0 or cols.max() >= k or seen & set(cols.tolist()):
            raise InputError(f"impute: blocks must be non-empty, disjoint lists of positions below {k}, "
                             f"got {[list(map(int, x)) for x in blocks]}")
        seen |= set(cols.tolist())
        out.append(cols)
    return out


def impute_blocks(X_ref, X, blocks, penalty: float = 0.03, levels: int = IMPUTE_LEVELS) -> np.ndarray:
    """``X`` ``(m, k)`` with its missing blocks filled from its present ones, fitted on ``X_ref`` ``(n, k)``.

    ``blocks``: disjoint lists of column positions (a suite: each member's chosen items). A row lacks a block
    when every cell of it is NaN; those cells get the conditional mean given the row's present blocks (one
    ridge fit on ``X_ref`` per pattern of missing blocks; a row with no block present gets the reference
    means). Any other NaN (here or in ``X_ref``) counts as its column's reference mean. Answers in [0, 1];
    the filled cells are clipped to [0, 1] and rounded to multiples of ``1 / levels``. Returns a new
    ``(m, k)`` array; the present cells are unchanged apart from the sporadic NaNs.
    """
    X_ref = np.asarray(X_ref, dtype=np.float64)
    X = np.array(X, dtype=np.float64)
    if X_ref.ndim != 2 or X.ndim != 2 or X_ref.shape[1] != X.shape[1]:
        raise InputError(f"impute: reference answers {X_ref.shape} and answers to fill {X.shape} need the same "
                         "items; give (n, k) and (m, k)")
    if X_ref.shape[0] < 2:
        raise InputError(f"impute: needs at least 2 reference models, got {X_ref.shape[0]}")
    if not penalty > 0 or int(levels) != levels or levels < 1:
        raise InputError(f"impute: penalty must be > 0 and levels a whole number >= 1, got {penalty!r}, {levels!r}")
    k = X.shape[1]
    cols = _blocks(blocks, k)
    with np.errstate(all="ignore"):
        mu = np.nanmean(X_ref, axis=0)
    mu = np.where(np.isnan(mu), 0.0, mu)
    R = np.where(np.isnan(X_ref), mu, X_ref)
    lacks = np.column_stack([np.isnan(X[:, c]).all(axis=1) for c in cols]) if cols else np.zeros((len(X), 0), bool)
    missing = np.zeros(X.shape, dtype=bool)
    for j, c in enumerate(cols):
        missing[np.ix_(lacks[:, j], c)] = True
    X = np.where(np.isnan(X) & ~missing, mu, X)  # sporadic gaps: the reference mean
    n = R.shape[0]
    patterns, inverse = np.unique(lacks, axis=0, return_inverse=True)
    for p, pattern in enumerate(patterns):
        if not pattern.any():
            continue
        rows = np.flatnonzero(inverse.ravel() == p)
        miss = np.concatenate([cols[j] for j in np.flatnonzero(pattern)])
        have = np.setdiff1d(np.arange(k), miss)
        if have.size == 0:
            fill = np.broadcast_to(mu[miss], (rows.size, miss.size))
        else:
            A = R[:, have] - mu[have]
            W = np.linalg.solve(A.T @ A + penalty * n * np.eye(have.size), A.T @ (R[:, miss] - mu[miss]))
            fill = mu[miss] + (X[np.ix_(rows, have)] - mu[have]) @ W
        X[np.ix_(rows, miss)] = np.round(np.clip(fill, 0.0, 1.0) * levels) / levels
    return X
