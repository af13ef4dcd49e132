"""Every reconstructor kind's forward pass on its fitted state (``to_dict()``); standard library + numpy only, as
``export-lmeval`` copies this file next to an exported harness task (``essence_NAME_estimator.py``)."""

import math

import numpy as np

THETA_MAX = 6.0  # abilities are clipped to +-THETA_MAX (essence.methods.irt)


def _table(d, v):
    v = np.asarray(v, dtype=np.float64)
    return np.interp(v.ravel(), np.asarray(d["x"], float), np.asarray(d["y"], float)).reshape(v.shape)


def _subset_score(X, weights=None):
    w = np.ones(X.shape[1]) if weights is None else np.asarray(weights, dtype=np.float64)
    obs = ~np.isnan(X)
    den = obs.astype(np.float64) @ w
    if (den <= 0).any():
        raise ValueError("no result on any chosen item")
    return 100.0 * (np.where(obs, X, 0.0) @ w) / den


def _sigmoid(z):
    return 0.5 * (1.0 + np.tanh(0.5 * z))


def _binarize(X, threshold):
    return np.where(np.isnan(X), np.nan, (X >= float(threshold)).astype(np.float64))


def _ability(X, a, b, prior_sd=1.0, max_iter=100, tol=1e-10):
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    obs = ~np.isnan(X)
    Xo = np.where(obs, X, 0.0)
    W = obs.astype(np.float64)
    prec = 1.0 / prior_sd**2
    theta = np.zeros(X.shape[0])
    for _ in range(max_iter):
        p = _sigmoid(a[None, :] * (theta[:, None] - b[None, :]))
        grad = ((Xo - p) * W) @ a - theta * prec
        hess = (p * (1.0 - p) * W) @ (a**2) + prec
        step = np.clip(grad / hess, -1.0, 1.0)
        theta = theta + step
        if np.max(np.abs(step), initial=0.0) < tol:
            break
    return theta


def _filled(d, X):
    fill = np.asarray(d["fill"], dtype=np.float64)
    return np.where(np.isnan(X), fill[None, :], X)


def _ridge_index(d, X):
    return _filled(d, X) @ np.asarray(d["coef"], dtype=np.float64) + float(d["intercept"])


def _gpirt(d, X):
    p = d["params"]
    anchors = np.asarray(p["anchors"], dtype=np.intp)
    w = np.asarray(p["weights"], dtype=np.float64)
    obs = ~np.isnan(X)
    anchor_est = (np.where(obs, X, 0.0) @ w) / (obs @ w)
    pa = np.asarray(p["pool_a"], dtype=np.float64)
    pb = np.asarray(p["pool_b"], dtype=np.float64)
    fixed = np.array([np.nan if v is None else float(v) for v in p["pool_p_fixed"]], dtype=np.float64)
    theta = _ability(_binarize(X, p["threshold"]), pa[anchors], pb[anchors], p["prior_sd"])
    P = _sigmoid(pa[None, :] * (theta[:, None] - pb[None, :]))
    isfixed = ~np.isnan(fixed)
    if isfixed.any():
        P[:, isfixed] = fixed[isfixed]
    unseen = np.ones_like(P, dtype=bool)
    unseen[:, anchors] = ~obs
    pirt = (np.where(obs, X, 0.0).sum(axis=1) + np.where(unseen, P, 0.0).sum(axis=1)) / pa.size
    g = p["gp_lambda"] * 100.0 * anchor_est + (1.0 - p["gp_lambda"]) * 100.0 * pirt
    return _table(d["table"], g) if d.get("table") is not None else g


def _knn(d, X):
    fill = np.asarray(d["fill"], dtype=np.float64)
    comps = np.asarray(d["components"], dtype=np.float64).reshape(-1, fill.size)
    T = np.asarray(d["train_z"], dtype=np.float64).reshape(-1, comps.shape[0])
    ty = np.asarray(d["train_y"], dtype=np.float64)
    Z = (np.where(np.isnan(X), fill[None, :], X) - np.asarray(d["mean"], dtype=np.float64)) @ comps.T
    dist = np.sqrt(np.maximum((Z**2).sum(axis=1)[:, None] + (T**2).sum(axis=1)[None, :] - 2.0 * Z @ T.T, 0.0))
    K = min(int(d["params"]["n_neighbors"]), T.shape[0])
    nn = np.argpartition(dist, K - 1, axis=1)[:, :K]
    dn = np.take_along_axis(dist, nn, axis=1)
    exact = dn <= 1e-4
    with np.errstate(divide="ignore"):
        w = np.where(exact.any(axis=1, keepdims=True), exact.astype(float), 1.0 / dn)
    return (w * ty[nn]).sum(axis=1) / w.sum(axis=1)


def _irt_gam(d, X):
    p = d["params"]
    theta = np.clip(_ability(_binarize(X, p["threshold"]), p["a"], p["b"], p["prior_sd"]), -THETA_MAX, THETA_MAX)
    out = float(d["intercept"]) + _table(d["t_theta"], theta)
    if d.get("t_score") is not None:
        out = out + _table(d["t_score"], _subset_score(X))
    return out


def _line(d, X):
    return float(d["intercept"]) + float(d["slope"]) * _subset_score(X)


def _mean_ridge(d, X):
    return _line(d["line"], X) + _ridge_index(d, X)


def _mlp(d, X):
    f = lambda v: np.asarray(v, dtype=np.float64)  # noqa: E731
    W1 = f(d["W1"]).reshape(X.shape[1], -1)
    h = np.tanh(_filled(d, X) @ W1 + f(d["b1"]))
    return float(d["y_mean"]) + float(d["y_sd"]) * (h @ f(d["W2"]) + float(d["b2"]))


def answers(stored, k):
    """The ``(n, k)`` answers of ``essence.reconstructors.base.encode_answers``' output."""
    rows = stored["rows"]
    if stored.get("binary"):
        return np.array([[c == "1" for c in r] for r in rows], dtype=np.float64).reshape(-1, k)
    if stored.get("levels") is not None:
        levels = int(stored["levels"])
        return np.array([[(ord(c) - ord("a")) / levels for c in r] for r in rows], dtype=np.float64).reshape(-1, k)
    return np.asarray(rows, dtype=np.float64).reshape(-1, k)


def _kernel(d, X):
    f = lambda v: np.asarray(v, dtype=np.float64)  # noqa: E731
    k = int(d["k"])
    T = answers(d["train"], k)
    s = np.ones(k)
    s[[int(c) for c in d["params"]["own"]]] = 1.0 + float(d["own_weight"])
    A, B = _filled(d, X) * np.sqrt(s), T * np.sqrt(s)
    D = np.maximum((A * A).sum(axis=1)[:, None] + (B * B).sum(axis=1)[None, :] - 2.0 * (A @ B.T), 0.0)
    return float(d["y_mean"]) + float(d["y_sd"]) * (np.exp(-float(d["gamma"]) * D) @ f(d["beta"]))


def _boost(d, X):
    k = int(d["k"])
    blocks = [[int(c) for c in b] for b in d["params"]["blocks"]] or [list(range(k))]
    obs = ~np.isnan(X)
    means = []
    for cols in blocks:
        cnt = obs[:, cols].sum(axis=1)
        tot = np.where(obs[:, cols], X[:, cols], 0.0).sum(axis=1)
        means.append(np.where(cnt > 0, tot / np.maximum(cnt, 1), np.nan))
    F = np.column_stack(means + [X])
    feat, val = np.asarray(d["feature"], dtype=np.intp), np.asarray(d["value"], dtype=np.float64)
    left, right = np.asarray(d["left"], dtype=np.intp), np.asarray(d["right"], dtype=np.intp)
    miss = np.array([c == "1" for c in d["missing_left"]], dtype=bool)
    node = np.tile(np.asarray(d["roots"], dtype=np.intp), (F.shape[0], 1))
    rows = np.arange(F.shape[0])[:, None]
    while (feat[node] >= 0).any():
        f = feat[node]
        x = F[rows, np.maximum(f, 0)]
        go_left = np.where(np.isnan(x), miss[node], x <= val[node])
        node = np.where(f >= 0, np.where(go_left, left[node], right[node]), node)
    return float(d["baseline"]) + val[node].sum(axis=1)


_PREDICT = {
    "gam": lambda d, X: _table(d["table"], _subset_score(X, d["params"].get("weights"))),
    "ridge": _ridge_index,
    "ridge_gam": lambda d, X: _table(d["table"], _ridge_index(d, X)),
    "weighted_mean": lambda d, X: _subset_score(X, d["params"].get("weights")),
    "irt_gam": _irt_gam,
    "gpirt": _gpirt,
    "signature_knn": _knn,
    "line": _line,
    "mean_ridge": _mean_ridge,
    "weighted_line": lambda d, X: float(d["intercept"]) + float(d["slope"]) * _subset_score(X, d["params"].get("weights")),
    "aipw": lambda d, X: float(d["intercept"]) + float(d["slope"]) * _subset_score(X, d["params"]["weights"]),
    "mlp": _mlp,
    "kernel": _kernel,
    "boost": _boost,
}


_erf = np.vectorize(math.erf, otypes=[float])


def _ncdf(z):
    return 0.5 * (1.0 + _erf(np.asarray(z, dtype=np.float64) / math.sqrt(2.0)))


def _factor_ability(X, A, b, prior_prec, iters=30):
    n, dd = X.shape[0], A.shape[1]
    theta = np.zeros((n, dd))
    if dd == 0:
        return theta
    obs = ~np.isnan(X)
    Xf = np.where(obs, X, 0.0)
    for _ in range(iters):
        P = _sigmoid(theta @ A.T + b)
        g = np.where(obs, Xf - P, 0.0) @ A - theta * prior_prec
        H = np.einsum("nk,kd,ke->nde", np.where(obs, P * (1 - P), 0.0), A, A) + prior_prec * np.eye(dd)
        step = np.linalg.solve(H, g[..., None])[..., 0]
        step = step * np.minimum(1.0, 2.0 / np.maximum(np.linalg.norm(step, axis=1, keepdims=True), 1e-12))
        theta = theta + step
        if np.max(np.abs(step)) < 1e-6:
            break
    return theta


def frontier_d(d, X):
    """The shrinkage-free estimate ``D`` (pp) and its standard error times ``c_d`` (pp), ``(n,)`` each."""
    A = np.asarray(d["loadings"], dtype=np.float64)
    b = np.asarray(d["easiness"], dtype=np.float64)
    A = A.reshape(b.size, -1)
    items = np.asarray(d["items"], dtype=np.intp)
    n_all = b.size
    theta = _factor_ability(X, A[items], b[items], float(d["prior_prec"]))
    P = _sigmoid(theta @ A.T + b)
    Ps = P[:, items]
    obs = ~np.isnan(X)
    k = np.maximum(obs.sum(axis=1), 1)
    e = np.where(obs, X - Ps, 0.0)
    e_mean = e.sum(axis=1) / k
    var = np.where(obs, (e - e_mean[:, None]) ** 2, 0.0).sum(axis=1) / np.maximum(k - 1, 1)
    bern = np.where(obs, Ps * (1 - Ps), 0.0).sum(axis=1) / k
    v = np.maximum(np.maximum(var, bern), 1.0 / (k + 2))
    se = np.sqrt(np.maximum(1.0 - k / n_all, 0.0) * v / k)
    a0, b0, s0 = (float(x) for x in d["map"])
    D = a0 + b0 * 100.0 * np.clip(P.mean(axis=1) + e_mean, 0.0, 1.0)
    return D, np.sqrt((b0 * 100.0 * se) ** 2 + s0 ** 2 + 1e-6) * float(d["c_d"])


def _mixture_quantile(q, w, m0, s0, m1, s1, iters=60):
    lo = np.minimum(m0 - 8 * s0, m1 - 8 * s1)
    hi = np.maximum(m0 + 8 * s0, m1 + 8 * s1)
    for _ in range(iters):
        mid = (lo + hi) / 2
        below = (1 - w) * _ncdf((mid - m0) / s0) + w * _ncdf((mid - m1) / s1) < q
        lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
    return (lo + hi) / 2


def frontier(d, X, Xf=None):
    """essence.reconstructors.frontier: ``{"estimate", "lower", "upper", "weight", "outside", "fallback"}``, each
    ``(n,)``; ``Xf`` ``(n, m)``: answers on the fallback sample (NaN: not run), used for the models outside."""
    G = np.clip(_PREDICT[d["inner"]["kind"]](d["inner"], X), 0.0, 100.0)
    D, sD = frontier_d(d, X)
    yq = np.asarray(d["y_quantiles"], dtype=np.float64)
    p_above = _ncdf((D - yq[-1]) / sD)
    p_out = np.clip(p_above + _ncdf((yq[0] - D) / sD), 0.0, 1.0)
    dq = np.asarray(d.get("d_quantiles", yq), dtype=np.float64)  # what D reads for the references (absent: scores)
    f_in = np.mean(np.exp(-0.5 * ((D[:, None] - dq[None, :]) / sD[:, None]) ** 2), axis=1) / (sD * math.sqrt(2 * math.pi))
    pi = float(d["pi_out"])
    post = lambda p: pi * p / 100.0 / np.maximum(pi * p / 100.0 + (1 - pi) * f_in, 1e-300)  # noqa: E731
    w_out = post(p_out)  # outside the references, either side
    w = post(p_above) if d.get("side", "both") == "above" else w_out  # the side(s) where D may answer
    # G's sd: one number, or a table over G (a refit's, where the references' errors grow with the score)
    sG = _table(d["s_inner_table"], G) if d.get("s_inner_table") else np.full(G.shape, float(d["s_inner"]))
    level = float(d["level"])
    lo = _mixture_quantile((1 - level) / 2, p_out, G, sG, D, sD)
    hi = _mixture_quantile((1 + level) / 2, p_out, G, sG, D, sD)
    est = np.clip((1 - w) * G + w * D, 0.0, 100.0)
    # outside: the answers place the model outside the references (two-sided posterior), or the estimate itself
    # lies beyond their scores (then it extrapolates, whatever the posterior says)
    outside = (w_out > 0.5) | (est < yq[0]) | (est > yq[-1])
    lo, hi = np.minimum(lo, est), np.maximum(hi, est)
    used = np.zeros(est.shape, dtype=bool)
    if Xf is not None and d.get("fallback"):  # outside the references: with the item sample's estimate, if answered
        F, sF = frontier_fallback(d, X, Xf)
        used = outside & np.isfinite(F)
        z = float(_mixture_quantile((1 + level) / 2, 0.0, 0.0, 1.0, 0.0, 1.0))  # the normal quantile
        s1 = np.maximum((hi - lo) / (2 * z), 1e-6)  # stage one's sd, from its interval
        F, sF = np.where(used, F, est), np.where(used, sF, 1.0)
        lam = sF ** 2 / (s1 ** 2 + sF ** 2)  # precision weights; where F shows stage one biased, a wider interval
        both = lam * est + (1 - lam) * F
        sd = np.sqrt(s1 ** 2 * sF ** 2 / (s1 ** 2 + sF ** 2)
                     + lam ** 2 * np.maximum((est - F) ** 2 - s1 ** 2 - sF ** 2, 0.0))
        est, lo, hi = (np.where(used, np.clip(both + c * z * sd, 0.0, 100.0), v)
                       for c, v in ((0, est), (-1, lo), (1, hi)))
    return {"estimate": est, "lower": np.clip(lo, 0.0, 100.0), "upper": np.clip(hi, 0.0, 100.0), "weight": w,
            "outside": outside, "fallback": used}


def frontier_fallback(d, X, Xf):
    """The fallback sample's estimate and its standard error (pp), ``(n,)`` each (NaN where a model answered none of
    it): answers ``X`` ``(n, k)`` on the chosen items and ``Xf`` ``(n, m)`` on ``d["fallback"]``, a uniformly random
    sample of the other items. The chosen items are counted as they are; the others' mean is the factor model's
    prediction (ability from every answer) plus the mean residual on the answered fallback items (GREG; design-based:
    unbiased whatever the model, as the sample is random), standard error ``sqrt((1 - m / (N - k)) v / m)`` of that
    part (``v`` at least the Bernoulli variance), both scaled by ``(N - k) / N`` and mapped to the target."""
    A = np.asarray(d["loadings"], dtype=np.float64)
    b = np.asarray(d["easiness"], dtype=np.float64)
    A = A.reshape(b.size, -1)
    items, fb = np.asarray(d["items"], dtype=np.intp), np.asarray(d.get("fallback", []), dtype=np.intp)
    N, k = b.size, items.size
    X, Xf = np.atleast_2d(np.asarray(X, dtype=np.float64)), np.atleast_2d(np.asarray(Xf, dtype=np.float64))
    if fb.size == 0 or Xf.shape != (X.shape[0], fb.size):
        raise ValueError(f"fallback answers: expected ({X.shape[0]}, {fb.size}), got {Xf.shape}")
    both = np.r_[items, fb]
    theta = _factor_ability(np.c_[X, Xf], A[both], b[both], float(d["prior_prec"]))
    P = _sigmoid(theta @ A.T + b)
    rest = np.ones(N, dtype=bool)
    rest[items] = False
    obs, obs_k = ~np.isnan(Xf), ~np.isnan(X)
    m = obs.sum(axis=1)
    Pf = P[:, fb]
    e = np.where(obs, Xf - Pf, 0.0)
    e_mean = e.sum(axis=1) / np.maximum(m, 1)
    var = np.where(obs, (e - e_mean[:, None]) ** 2, 0.0).sum(axis=1) / np.maximum(m - 1, 1)
    bern = np.where(obs, Pf * (1 - Pf), 0.0).sum(axis=1) / np.maximum(m, 1)
    v = np.maximum(np.maximum(var, bern), 1.0 / (m + 2))
    n_rest = N - k
    chosen = np.where(obs_k, X, P[:, items]).sum(axis=1)  # a chosen item left unanswered: its prediction
    pool = (chosen + P[:, rest].sum(axis=1) + n_rest * e_mean) / N
    se = n_rest / N * np.sqrt(np.maximum(1.0 - m / max(n_rest, 1), 0.0) * v / np.maximum(m, 1))
    a0, b0, s0 = (float(x) for x in d["map"])
    est = a0 + b0 * 100.0 * np.clip(pool, 0.0, 1.0)
    sd = np.sqrt((b0 * 100.0 * se) ** 2 + s0 ** 2 + 1e-6)
    none = m == 0
    return np.where(none, np.nan, est), np.where(none, np.nan, sd)


def _average(d, X):
    preds = np.array([np.clip(_PREDICT[p["kind"]](p, X), 0.0, 100.0) for p in d["fitted"]])
    w = d["params"].get("part_weights")
    return preds.mean(axis=0) if w is None else np.asarray(w, dtype=np.float64) @ preds


_PREDICT["average"] = _average
_PREDICT["frontier"] = lambda d, X: frontier(d, X)["estimate"]
KINDS = tuple(_PREDICT)


def predict(reconstructor: dict, X) -> np.ndarray:
    """Full-score estimates ``(n,)`` in pp, clipped to [0, 100], of responses ``X`` ``(n, k)`` (NaN = missing)."""
    kind = reconstructor.get("kind")
    if kind not in _PREDICT:
        raise ValueError(f"reconstructor kind {kind!r} is not one this estimator knows ({', '.join(KINDS)})")
    X = np.atleast_2d(np.asarray(X, dtype=np.float64))
    return np.clip(_PREDICT[kind](reconstructor, X), 0.0, 100.0)


def interval(model: dict, est) -> tuple:
    """Bounds (pp, clipped to [0, 100]) of the normalised split-conformal interval around ``est`` ``(n,)``."""
    est = np.asarray(est, dtype=np.float64)
    half = float(model["q"]) * _table(model["scale"], est)
    return np.clip(est - half, 0.0, 100.0), np.clip(est + half, 0.0, 100.0)


def estimate(spec: dict, scores: dict) -> tuple:
    """``(estimate, lower, upper)`` in pp from ``scores`` ``{item id: score in [0, 1]}`` on ``spec["items"]``."""
    x = np.array([[scores.get(i, math.nan) for i in spec["items"]]], dtype=np.float64)
    if np.isnan(x).all():
        return math.nan, math.nan, math.nan
    rec = spec["reconstructor"]
    if rec.get("kind") == "frontier":  # its own interval
        out = frontier(rec, x)
        return float(out["estimate"][0]), float(out["lower"][0]), float(out["upper"][0])
    est = predict(rec, x)
    lo, hi = interval(spec["interval"], est)
    return float(est[0]), float(lo[0]), float(hi[0])
