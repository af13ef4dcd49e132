"""Computerised adaptive testing on an item bank (:class:`essence.features.bank.ItemBank`): EAP ability, next item of
maximum information, interval ``estimate +- z sqrt(sd^2 + (s(n) g)^2)`` (:func:`calibrate`). :func:`simulate` and
:class:`Session` share the arithmetic; random draws are seeded by ``(seed, key)``, one key per model."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from statistics import NormalDist
from typing import ClassVar

import numpy as np

from ..data.checks import OneOf, Real, Settings, Whole
from ..data.errors import InputError
from ..features.bank import ItemBank, _sigmoid, fit_bank

__all__ = ["Policy", "POLICY_FIELDS", "Trajectory", "Session", "grid", "simulate", "calibrate", "halfwidth",
           "interval"]


@dataclass(frozen=True)
class Policy(Settings):
    """How items are chosen, abilities scored (Student-t prior, normal when ``prior_df`` is None) and tests stopped."""

    rule: str = "fisher"
    top_m: int = 1
    n_random_start: int = 0
    prior_df: float | None = 3.0
    prior_sd: float = 1.0
    grid_lim: float = 8.0
    target_halfwidth: float | None = None

    _domains: ClassVar[dict] = {"rule": OneOf("fisher", "random"), "top_m": Whole(1), "n_random_start": Whole(0),
                                "prior_df": Real(0.0, open_min=True, none=True), "prior_sd": Real(0.0, open_min=True),
                                "grid_lim": Real(1.0), "target_halfwidth": Real(0.0, open_min=True, none=True)}

    @property
    def random(self) -> bool:
        return self.rule == "random" or self.top_m > 1 or self.n_random_start > 0


POLICY_FIELDS = tuple(f.name for f in fields(Policy))


def grid(policy: Policy) -> tuple[np.ndarray, np.ndarray]:
    """``(nodes (Q,), log prior weights (Q,))`` of the scoring grid."""
    nodes = np.linspace(-policy.grid_lim, policy.grid_lim, int(round(policy.grid_lim * 10)) * 2 + 1)
    r2 = (nodes / policy.prior_sd) ** 2
    lw = -0.5 * r2 if policy.prior_df is None else -0.5 * (policy.prior_df + 1) * np.log1p(r2 / policy.prior_df)
    return nodes, lw - np.logaddexp.reduce(lw)


class _Tests:
    """The state of ``M`` tests on one bank: log posteriors, items used, the sums the estimate needs."""

    def __init__(self, bank: ItemBank, policy: Policy, unavailable, seed: int = 0, keys=None):
        self.bank, self.policy, self.J = bank, policy, bank.n_items
        self.nodes, lw = grid(policy)
        P = np.clip(bank.prob(self.nodes), 1e-9, 1 - 1e-9)  # (Q, J)
        self.logP, self.log1mP, self.P, self.V = np.log(P), np.log1p(-P), P, P * (1 - P)
        self.G = bank.a * self.V  # d P / d theta
        self.used = np.array(unavailable, dtype=bool)  # (M, J): given, or no result to give
        M, Q = self.used.shape[0], self.nodes.size
        self.L = np.tile(lw, (M, 1))
        self.obs, self.n = np.zeros(M), np.zeros(M, dtype=np.intp)
        self.Pans, self.Vans, self.Gans = np.zeros((M, Q)), np.zeros((M, Q)), np.zeros((M, Q))
        keys = np.arange(M) if keys is None else keys
        self.rngs = [np.random.default_rng([int(seed), int(k)]) for k in keys] if policy.random else None

    def stats(self, rows=None) -> dict:
        """``estimate``, ``sd``, ``slope`` (pp), ``theta`` (EAP), each ``(len(rows),)``."""
        rows = np.arange(self.L.shape[0]) if rows is None else rows
        L = self.L[rows]
        W = np.exp(L - L.max(axis=1, keepdims=True))
        W /= W.sum(axis=1, keepdims=True)
        icpt, sl, resid = self.bank.score_map
        F = icpt + sl * (self.obs[rows][:, None] + self.P.sum(axis=1) - self.Pans[rows]) / self.J
        est = (W * F).sum(axis=1)
        var = np.maximum((W * F**2).sum(axis=1) - est**2, 0.0)
        var += (W * (self.V.sum(axis=1) - self.Vans[rows])).sum(axis=1) * (sl / self.J) ** 2
        return {"estimate": est, "sd": np.sqrt(np.maximum(var, 0.0) + resid**2),
                "slope": (W * (self.G.sum(axis=1) - self.Gans[rows])).sum(axis=1) * sl / self.J,
                "theta": (W * self.nodes).sum(axis=1)}

    def choose(self, row: int, theta: float, n: int = 1) -> list[int]:
        """Up to ``n`` unused items for test ``row`` at EAP ``theta``."""
        pol, free, out = self.policy, ~self.used[row], []
        for i in range(n):
            if not free.any():
                break
            if pol.rule == "random" or self.n[row] + i < pol.n_random_start:
                crit, m = self.rngs[row].random(self.J), 1
            else:
                p = _sigmoid(theta * self.bank.a + self.bank.d)
                crit, m = self.bank.a**2 * p * (1 - p), pol.top_m
            crit = np.where(free, crit, -np.inf)
            if m > 1:
                top = np.argsort(-crit, kind="stable")[:m]
                top = top[np.isfinite(crit[top])]
                j = int(top[int(np.floor(self.rngs[row].random() * top.size))])
            else:
                j = int(np.argmax(crit))
            out.append(j)
            free[j] = False
        return out

    def record(self, rows, items, y) -> None:
        """Test ``rows[i]`` answered item ``items[i]`` with ``y[i]`` in [0, 1]."""
        y = np.asarray(y, dtype=np.float64)
        self.L[rows] += y[:, None] * self.logP[:, items].T + (1.0 - y)[:, None] * self.log1mP[:, items].T
        self.obs[rows] += y
        self.Pans[rows] += self.P[:, items].T
        self.Vans[rows] += self.V[:, items].T
        self.Gans[rows] += self.G[:, items].T
        self.used[rows, items] = True
        self.n[rows] += 1


def halfwidth(cal: dict, est, sd, slope, n) -> np.ndarray:
    """Unclipped half-width (pp) of the calibrated interval after ``n`` items (arrays or scalars)."""
    s_in, s_out = np.asarray(cal["s_in"]), np.asarray(cal["s_out"])
    n = np.minimum(np.asarray(n, dtype=np.intp), s_in.size - 1)
    s = np.where(np.asarray(est) > cal["thr"], s_out[n], s_in[n])
    return cal["z"] * np.sqrt(np.asarray(sd) ** 2 + (s * np.abs(slope)) ** 2)


def interval(cal: dict, est, sd, slope, n) -> tuple[np.ndarray, np.ndarray]:
    """``(lower, upper)`` pp: ``est -+`` :func:`halfwidth`, clipped to [0, 100]."""
    h = halfwidth(cal, est, sd, slope, n)
    return np.clip(est - h, 0.0, 100.0), np.clip(est + h, 0.0, 100.0)


def _misfit(resid, sd, g, z: float, level: float) -> float:
    """The smallest ``s >= 0`` with ``|resid| <= z sqrt(sd^2 + (s g)^2)`` for a share ``level`` of the residuals."""
    ok = np.isfinite(resid)
    r, v, g2 = np.abs(resid[ok]), sd[ok] ** 2, g[ok] ** 2
    def cov(s): return np.mean(r <= z * np.sqrt(v + s * s * g2)) if r.size else 1.0
    if cov(0.0) >= level:
        return 0.0
    lo, hi = 0.0, 1.0
    while cov(hi) < level and hi < 1e6:
        hi *= 2
    for _ in range(60):
        lo, hi = (lo, (lo + hi) / 2) if cov((lo + hi) / 2) >= level else ((lo + hi) / 2, hi)
    return float(hi)


@dataclass
class Trajectory:
    """``M`` tests of at most ``n_max`` items: ``items`` ``(M, n_max)`` given at each step (-1 after the stop);
    ``n_items``, ``estimate``, ``sd``, ``slope``, ``theta`` ``(M, n_max + 1)`` after each step (column 0: before any
    item); ``lower``, ``upper`` with a calibration."""

    items: np.ndarray
    n_items: np.ndarray
    estimate: np.ndarray
    sd: np.ndarray
    slope: np.ndarray
    theta: np.ndarray
    lower: np.ndarray | None = None
    upper: np.ndarray | None = None


def simulate(bank: ItemBank, X, n_max: int, policy: Policy = Policy(), calibration: dict | None = None,
             seed: int = 0, keys=None) -> Trajectory:
    """Test each row of ``X`` ``(M, J)`` (answers in [0, 1]; NaN never given) for up to ``n_max`` items."""
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[1] != bank.n_items:
        raise InputError(f"simulate: answers of shape {X.shape}, expected (n_models, {bank.n_items})")
    M, n_max = X.shape[0], int(n_max)
    st = _Tests(bank, policy, np.isnan(X), seed, keys)
    out = {k: np.zeros((M, n_max + 1)) for k in ("estimate", "sd", "slope", "theta")}
    items, n_items = np.full((M, n_max), -1, dtype=np.intp), np.zeros((M, n_max + 1), dtype=np.intp)
    stopped = np.zeros(M, dtype=bool)
    target = policy.target_halfwidth if calibration is not None else None
    for k, v in st.stats().items():
        out[k][:, 0] = v
    theta = out["theta"][:, 0].copy()
    for t in range(n_max):
        for k in out:
            out[k][:, t + 1] = out[k][:, t]
        active = np.flatnonzero(~stopped & (~st.used).any(axis=1))
        if active.size:
            if policy.random:
                j = np.array([st.choose(r, theta[r])[0] for r in active], dtype=np.intp)
            else:  # greedy maximum information, all active tests at once
                p = _sigmoid(theta[active][:, None] * bank.a + bank.d)
                j = np.argmax(np.where(st.used[active], -np.inf, bank.a**2 * p * (1 - p)), axis=1)
            st.record(active, j, X[active, j])
            items[active, t] = j
            s = st.stats(active)
            for k in out:
                out[k][active, t + 1] = s[k]
            theta[active] = s["theta"]
            if target is not None:
                h = halfwidth(calibration, s["estimate"], s["sd"], s["slope"], st.n[active])
                stopped[active[h <= target]] = True
        n_items[:, t + 1] = st.n
    traj = Trajectory(items, n_items, **out)
    if calibration is not None:
        traj.lower, traj.upper = interval(calibration, traj.estimate, traj.sd, traj.slope, traj.n_items)
    return traj


class Session:
    """One model's live test; ``unavailable`` ``(J,)``: items it cannot be given; ``key``: its random stream."""

    def __init__(self, bank: ItemBank, policy: Policy = Policy(), max_items: int = 50, calibration: dict | None = None,
                 seed: int = 0, key: int = 0, unavailable=None):
        self.bank, self.policy, self.max_items, self.calibration = bank, policy, int(max_items), calibration
        un = np.zeros((1, bank.n_items), dtype=bool)
        un[0] = False if unavailable is None else np.asarray(unavailable, dtype=bool)
        self._st = _Tests(bank, policy, un, seed, [key])
        self.given: list[int] = []

    def next_items(self, n: int = 1) -> list[int]:
        """Up to ``n`` items to give next, chosen at the current ability (none once :meth:`done`)."""
        if self.done():
            return []
        return self._st.choose(0, self.estimate()["theta"], min(int(n), self.max_items - len(self.given)))

    def record(self, j: int, y: float) -> None:
        """Answer ``y`` in [0, 1] to item ``j``; NaN (no result) only marks ``j`` used."""
        j, y = int(j), float(y)
        if not 0 <= j < self.bank.n_items or j in self.given:
            raise InputError(f"item {j}: not an item of the bank (0-{self.bank.n_items - 1}) or already answered")
        if np.isnan(y):
            self._st.used[0, j] = True
        elif not 0.0 <= y <= 1.0:
            raise InputError(f"item {j}: answer {y} is outside [0, 1]")
        else:
            self._st.record([0], [j], [y])
            self.given.append(j)

    def estimate(self) -> dict:
        """``estimate``, ``lower``, ``upper``, ``halfwidth``, ``sd``, ``slope`` (pp), ``theta``, ``n``."""
        s = {k: float(v[0]) for k, v in self._st.stats().items()}
        n, cal = len(self.given), self.calibration
        lo, hi, h = (np.nan,) * 3 if cal is None else (*interval(cal, s["estimate"], s["sd"], s["slope"], n),
                                                       halfwidth(cal, s["estimate"], s["sd"], s["slope"], n))
        return {**s, "lower": float(lo), "upper": float(hi), "halfwidth": float(h), "n": n}

    def done(self) -> bool:
        if len(self.given) >= self.max_items or self._st.used[0].all():
            return True
        t = self.policy.target_halfwidth
        return t is not None and self.calibration is not None and bool(self.given) and self.estimate()["halfwidth"] <= t


def calibrate(R, y, n_max: int, policy: Policy = Policy(), *, level: float = 0.9, folds: int = 5,
              top_frac: float = 0.2, seed: int = 0, fit_kw: dict | None = None) -> tuple[dict, dict]:
    """Calibrate the interval's misfit on references (``R`` ``(N, J)``, ``y`` ``(N,)`` pp) over ``folds`` random folds
    and a top fold (the strongest ``top_frac``). Returns ``({"level", "z", "s_in", "s_out" (n_max + 1,), "thr",
    "ref_range"}, out_of_fold {"estimate", "sd", "slope"} (N, n_max + 1))``."""
    R, y = np.asarray(R, dtype=np.float64), np.asarray(y, dtype=np.float64)
    N, fixed = len(y), Policy(**{**asdict(policy), "target_halfwidth": None})
    perm = np.random.default_rng(seed).permutation(N)
    tests = [np.sort(perm[f::folds]) for f in range(folds)]
    tests.append(np.sort(np.argsort(-y, kind="stable")[: max(2, int(round(top_frac * N)))]))
    oof = {k: np.full((N, n_max + 1), np.nan) for k in ("estimate", "sd", "slope")}
    for i, te in enumerate(tests):
        tr = np.setdiff1d(np.arange(N), te)
        traj = simulate(fit_bank(R[tr], y[tr], **(fit_kw or {})), R[te], n_max, fixed, seed=seed, keys=te)
        for k in oof if i < folds else ():
            oof[k][te] = getattr(traj, k)
    z = NormalDist().inv_cdf(0.5 + level / 2)
    r_in = y[:, None] - oof["estimate"]
    s_in = [_misfit(r_in[:, n], oof["sd"][:, n], oof["slope"][:, n], z, level) for n in range(n_max + 1)]
    s_out = [_misfit(y[te] - traj.estimate[:, n], traj.sd[:, n], traj.slope[:, n], z, level) for n in range(n_max + 1)]
    return {"level": float(level), "z": z, "s_in": s_in, "s_out": s_out, "thr": float(np.quantile(y, 1 - top_frac)),
            "ref_range": [float(y.min()), float(y.max())]}, oof
