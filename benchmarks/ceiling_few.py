"""Ceilings of few-model item selection on GENERATED matrices: what knowing more than a user knows buys.

Issue 12 asks the default (``auto``) for at most 0.9 x "random items + least-squares line" (the baseline)
from 35 models up, also on GENERATED matrices (40 models x 800 items, 30 x 500). This script measures,
with the regime map's protocol (:func:`essence.lessons.regimes.run_one`: all models, draw 0, 5-fold CV over the
models by :func:`essence.reconstructors.base.model_folds` with seed 0, k = N/20, fold ``f``'s baseline items drawn
with seed ``f``, the line fitted on all non-test models of the fold), how close to 0.9 x selections get
that KNOW what no user knows:

* ``info``: the k items of highest Fisher information about the general ability ``g`` (the generator's
  ``theta = sqrt(rho) g + ...``; directional derivative of ``P_ij`` along ``g``), averaged over the
  non-test models' TRUE abilities (:func:`essence.data.synthetic.mirt_parameters`);
* ``info_strat``: the same within k equal-count strata of true difficulty (mean true ``P_ij``), one item
  per stratum (the pool's difficulty profile);
* ``corr``: the k items whose observed 0/1 answer correlates most with the models' true expected full score
  ``T_i = mean_j P_ij`` (computed from the true parameters: ``cov(P_j, T) / sqrt(var(P_j) + mean P_j (1 -
  P_j)) / sd(T)`` over the non-test models): the population item-rest correlation, i.e. what a screen on
  estimated item statistics tries to find; ``corr_strat``: the same, one per difficulty stratum;
* ``est_corr`` / ``est_corr_strat``: the same two rules with the item-rest correlation ESTIMATED from the
  non-test models' answers (what a user can compute; :func:`essence.search.screen.item_statistics`);
* ``population_ga_S``: the ruler's genetic search (200 x 200, closed-form leave-one-out line fitness,
  :class:`essence.search.fitness.LOOLineFitness`) run on S (``--pop-sizes``: 100, 300, 2,000) FRESH
  models drawn from the generator's ability distribution for the same items (``fresh_models``): the subset
  the search would find with S models rather than 30-40 (2,000: about the population's), read through the
  line fitted on the fold's non-test models: how many models the search needs on such a pool;
* ``oracle_test``: the same search for the k items whose line, fitted on the non-test models, has the lowest
  RMSE on the TEST models: selection with the test models' full answers known (no user has them). With
  8 test models and 800 items it fits them almost exactly: it shows that subsets which would meet any target
  exist, not that they can be found;
* ``bayes`` / ``bayes_info_strat``: the baseline's random items (or ``info_strat``'s) read through the TRUE
  model: each model's posterior mean of ``T`` given its k answers (importance weights over 4,000 abilities
  drawn from the generator's distribution), then a line to the full score fitted on the non-test models:
  a reconstructor that knows every parameter;
* ``random_redraw_min / median / max``: ``redraws`` (20) other draws of random items per fold, read
  through the line: how far the ratio of a method no better than the baseline moves by the draw alone;
* ``true_T``: no items at all, a line on each model's true expected score ``T_i``: the floor set by the
  full score's own sampling noise (mean of N Bernoulli answers).

Each selection is read through the line (``/line``) and, for the true-parameter rules, also through the
reconstructor every method gets by 5-fold CV over the non-test models (``/cv``: line, shrinkage toward it,
GAM; :class:`essence.methods.base.Selector`). Printed: per matrix the baseline RMSE (pp) and each
selection's ratio RMSE / baseline RMSE over all models' out-of-fold predictions, then the geometric mean
over matrices. GENERATED data: it says what is reachable on such a matrix, not how a method does on a real
benchmark. Not part of ``make test``; about a minute per matrix on one core.

    python benchmarks/ceiling_few.py                       # 40x800 seeds 0-3, 30x500 seeds 0-1
    python benchmarks/ceiling_few.py --generated 40x800 --seeds 0
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from essence.data import split_models  # noqa: E402
from essence.methods.base import Selector  # noqa: E402
from essence.reconstructors.simple import LineReconstructor  # noqa: E402
from essence.reconstructors.base import model_folds  # noqa: E402
from essence.search.fitness import LOOLineFitness  # noqa: E402
from essence.search.genetic import GAConfig, genetic_search  # noqa: E402
from essence.search.screen import item_statistics  # noqa: E402
from essence.data.synthetic import generate_mirt, mirt_parameters  # noqa: E402

RHO = 0.6  # the generator's default correlation between ability dimensions (mirt_parameters)


def fresh_abilities(n: int, dims: int, seed: int) -> np.ndarray:
    """``(n, dims)`` abilities from the distribution of :func:`essence.data.synthetic.mirt_parameters` (a skewed
    mixture for the general factor, standardised, plus specific parts; correlation ``RHO``)."""
    rng = np.random.default_rng([seed, 7])
    strong = rng.random(n) < 0.3
    g = np.where(strong, rng.normal(1.0, 0.8, n), rng.normal(-0.45, 0.7, n))
    g = (g - g.mean()) / g.std()
    return np.sqrt(RHO) * g[:, None] + np.sqrt(1 - RHO) * rng.normal(size=(n, dims))


def probabilities(theta: np.ndarray, par: dict) -> np.ndarray:
    """``(n, N)`` true probabilities of a correct answer for abilities ``theta`` ``(n, dims)``."""
    return par["c"] + (1 - par["c"]) / (1 + np.exp(-(theta @ par["a"].T - par["b"])))


def fresh_models(par: dict, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``(R, y)``: 0/1 answers ``(n, N)`` of ``n`` new models on the same items, and their full scores (pp)."""
    P = probabilities(fresh_abilities(n, par["a"].shape[1], seed), par)
    R = (np.random.default_rng([seed, 8]).random(P.shape) < P).astype(np.float64)
    return R, R.mean(axis=1) * 100


def posterior_T(par: dict, X: np.ndarray, idx: np.ndarray, draws: int = 4000, seed: int = 0) -> np.ndarray:
    """``(n,)`` posterior mean (pp) of each model's expected full score given its answers ``X`` ``(n, k)`` on
    items ``idx``, under the true parameters (importance sampling from the ability distribution)."""
    P = probabilities(fresh_abilities(draws, par["a"].shape[1], seed), par)
    T = P.mean(axis=1) * 100
    Pk = np.clip(P[:, idx], 1e-9, 1 - 1e-9)
    ll = X @ np.log(Pk).T + (1 - X) @ np.log(1 - Pk).T  # (n, draws)
    w = np.exp(ll - ll.max(axis=1, keepdims=True))
    return (w @ T) / w.sum(axis=1)


class FixedItems(Selector):
    """Given items; the reconstructor chosen as every method's (5-fold CV over train + val)."""

    name = "fixed"

    def __init__(self, k, seed=0, progress=False, items=None):
        super().__init__(k, seed, progress)
        self.items = items

    def select(self, train, val):
        return np.asarray(self.items)


class TestLineFitness:
    """``-RMSE`` (pp) on the test rows of a line on each mask's subset mean fitted on the training rows."""

    def __init__(self, R_tr, y_tr, R_te, y_te):
        self.Atr, self.Ate = np.ascontiguousarray(R_tr.T * 100.0), np.ascontiguousarray(R_te.T * 100.0)
        self.ytr, self.yte = y_tr, y_te
        self.n_items = R_tr.shape[1]

    def __call__(self, masks):
        masks = np.asarray(masks, dtype=bool)
        k = masks.sum(axis=1, keepdims=True)
        mtr, mte = (masks @ self.Atr) / k, (masks @ self.Ate) / k  # (P, n_tr), (P, n_te)
        mc = mtr - mtr.mean(axis=1, keepdims=True)
        sxx = np.maximum((mc * mc).sum(axis=1), 1e-12)
        b = mc @ (self.ytr - self.ytr.mean()) / sxx
        a = self.ytr.mean() - b * mtr.mean(axis=1)
        pred = np.clip(a[:, None] + b[:, None] * mte, 0, 100)
        return -np.sqrt(np.mean((pred - self.yte[None, :]) ** 2, axis=1))


def true_probabilities(par: dict) -> tuple[np.ndarray, np.ndarray]:
    """``(P, dP)``: each (model, item) true probability of a correct answer ``(n, N)`` and its derivative
    along the general ability ``g`` (every dimension moves by ``sqrt(RHO)``)."""
    z = par["theta"] @ par["a"].T - par["b"]
    s = 1.0 / (1.0 + np.exp(-z))
    c = par["c"]
    P = c + (1 - c) * s
    dP = (1 - c) * s * (1 - s) * np.sqrt(RHO) * par["a"].sum(axis=1)
    return P, dP


def top_per_stratum(score: np.ndarray, level: np.ndarray, k: int) -> np.ndarray:
    """One item per stratum, ``k`` equal-count strata of ``level``: the item of highest ``score`` in each."""
    order = np.argsort(level, kind="stable")
    return np.sort([s[np.argmax(score[s])] for s in np.array_split(order, k)])


def selections(par, R, y, rows, k: int) -> dict[str, np.ndarray]:
    """Item sets of the rules in the module docstring, computed on the models ``rows`` (non-test)."""
    P, dP = true_probabilities(par)
    P, dP = P[rows], dP[rows]
    info = np.mean(dP ** 2 / (P * (1 - P)), axis=0)
    T = P.mean(axis=1)
    Tc = T - T.mean()
    cov = (P - P.mean(axis=0)).T @ Tc / len(T)
    corr = cov / np.sqrt(P.var(axis=0) + np.mean(P * (1 - P), axis=0)) / T.std()
    level = P.mean(axis=0)
    p_est, r_est = item_statistics(R[rows], y[rows])
    top = lambda s: np.sort(np.argsort(-s, kind="stable")[:k])  # noqa: E731
    return {"info": top(info), "info_strat": top_per_stratum(info, level, k), "corr": top(corr),
            "corr_strat": top_per_stratum(corr, level, k), "est_corr": top(r_est),
            "est_corr_strat": top_per_stratum(r_est, p_est, k)}


TRUE_RULES = ("info", "info_strat", "corr", "corr_strat")


def ceiling(n_models: int, n_items: int, seed: int, folds: int = 5, ga: int = 200,
            pop_sizes=(100, 300, 2000), redraws: int = 20) -> dict:
    """Ratios to the baseline of every column for one generated matrix (see the module docstring)."""
    data = generate_mirt(n_models, n_items, seed=seed)
    par = mirt_parameters(n_models, n_items, seed=seed)
    R, y = data.responses, data.target
    k = max(1, int(round(n_items / 20)))
    lab = model_folds(n_models, folds, seed=0)
    T_all = true_probabilities(par)[0].mean(axis=1) * 100
    preds: dict[str, np.ndarray] = {}
    pops = {}  # the population searches are the same for every fold
    for size in pop_sizes:
        Rf, yf = fresh_models(par, size, seed)
        pops[size] = genetic_search(LOOLineFitness(Rf, yf), k, GAConfig(population=ga, generations=ga, elites=ga // 10), seed=seed).best

    def put(col, te, p):
        preds.setdefault(col, np.full(n_models, np.nan))[te] = p

    for f in np.unique(lab):
        te = lab == f
        rows = np.flatnonzero(~te)
        b_idx = np.sort(np.random.default_rng(int(f)).choice(n_items, size=k, replace=False))
        put("baseline", te, LineReconstructor().fit(R[np.ix_(rows, b_idx)], y[rows]).predict(R[np.ix_(te, b_idx)]))
        for r in range(redraws):  # other random items, same line: how far the ratio moves by the draw alone
            o_idx = np.sort(np.random.default_rng([int(f), r + 1]).choice(n_items, size=k, replace=False))
            put(f"_redraw{r}", te, LineReconstructor().fit(R[np.ix_(rows, o_idx)], y[rows]).predict(R[np.ix_(te, o_idx)]))
        put("true_T", te, np.clip(np.polyval(np.polyfit(T_all[rows], y[rows], 1), T_all[te]), 0, 100))
        rest = data.subset(models=~te)
        tr, va, _ = split_models(rest, test=0.0, val=0.1, seed=0)
        chosen = selections(par, R, y, rows, k)
        info_strat = chosen["info_strat"]
        for name, idx in chosen.items():
            put(f"{name}/line", te, LineReconstructor().fit(R[np.ix_(rows, idx)], y[rows]).predict(R[np.ix_(te, idx)]))
            if name in TRUE_RULES:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    sel = FixedItems(k, seed=int(f), items=idx).fit(rest.subset(models=tr), rest.subset(models=va))
                put(f"{name}/cv", te, sel.reconstructor_.predict(R[np.ix_(te, idx)]))
        for name, idx in (("bayes", b_idx), ("bayes_info_strat", info_strat)):
            t = posterior_T(par, R[:, idx], idx, seed=seed)
            put(name, te, np.clip(np.polyval(np.polyfit(t[rows], y[rows], 1), t[te]), 0, 100))
        for size, pop in pops.items():
            put(f"population_ga_{size}/line", te,
                LineReconstructor().fit(R[np.ix_(rows, pop)], y[rows]).predict(R[np.ix_(te, pop)]))
        fit = TestLineFitness(R[rows], y[rows], R[te], y[te])
        best = genetic_search(fit, k, GAConfig(population=ga, generations=ga, elites=ga // 10), seed=int(f)).best
        put("oracle_test/line", te, LineReconstructor().fit(R[np.ix_(rows, best)], y[rows]).predict(R[np.ix_(te, best)]))
    rmse = {c: float(np.sqrt(np.mean((p - y) ** 2))) for c, p in preds.items()}
    ratio = {c: v / rmse["baseline"] for c, v in rmse.items() if c != "baseline" and not c.startswith("_")}
    other = np.array([rmse[f"_redraw{r}"] / rmse["baseline"] for r in range(redraws)])
    if redraws:
        ratio = {"random_redraw_min": float(other.min()), "random_redraw_median": float(np.median(other)),
                 "random_redraw_max": float(other.max()), **ratio}
    return {"name": f"generated-{n_models}x{n_items}-s{seed}", "k": k, "baseline_pp": rmse["baseline"], "ratio": ratio}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--generated", nargs="+", default=["40x800", "30x500"], metavar="MODELSxITEMS")
    p.add_argument("--seeds", nargs="+", type=int, default=None,
                   help="generator seeds (default: 0-3 for 40x800, 0-1 for the others)")
    p.add_argument("--ga", type=int, default=200, help="population = generations of the searches")
    p.add_argument("--pop-sizes", nargs="+", type=int, default=[100, 300, 2000],
                   help="fresh models given to the population searches")
    args = p.parse_args(argv)
    res = []
    for g in args.generated:
        m, n = (int(v) for v in g.split("x"))
        for s in args.seeds if args.seeds is not None else ([0, 1, 2, 3] if g == "40x800" else [0, 1]):
            res.append(ceiling(m, n, s, ga=args.ga, pop_sizes=args.pop_sizes))
            print(f"{res[-1]['name']}: done", file=sys.stderr, flush=True)
    cols = list(res[0]["ratio"])
    print("\n| matrix | k | random + line (pp) | " + " | ".join(cols) + " |")
    print("|---|---|---|" + "---|" * len(cols))
    for r in res:
        print(f"| {r['name']} | {r['k']} | {r['baseline_pp']:.2f} | " + " | ".join(f"{r['ratio'][c]:.2f}" for c in cols) + " |")
    gm = {c: float(np.exp(np.mean([np.log(r["ratio"][c]) for r in res]))) for c in cols}
    print("| geometric mean | | | " + " | ".join(f"{gm[c]:.2f}" for c in cols) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
