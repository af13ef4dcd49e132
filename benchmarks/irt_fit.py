"""How long py-irt's 2PL fit takes, and how good it is, as models x items and epochs grow.

Prints two tables and the settings ``essence.features.irt.DEFAULT_FIT`` uses:

1. milliseconds per SVI epoch for training-model counts x item counts of a real dataset (one torch
   thread, as ``essence.features.irt.fit_2pl`` runs it);
2. for (max_models, epochs) pairs: fit seconds and the mean held-out log-likelihood per response of the
   validation models (abilities by MAP from all items) -- higher is better.

    .venv/bin/python benchmarks/irt_fit.py                 # gsm8k, full grid (several minutes)
    .venv/bin/python benchmarks/irt_fit.py --quick         # smaller grid (about a minute)
    .venv/bin/python benchmarks/irt_fit.py --data arc

Timings depend on the machine and its load (other processes on a shared 2-core machine can double
them); compare rows of one run, not runs.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from essence.data import load, split_models
from essence.features.irt import DEFAULT_FIT, _pyirt_svi, binarize, estimate_ability, fit_2pl


def per_epoch_ms(R, n_models, n_items, epochs=20):
    sub = R[:n_models, :n_items]
    keep = (~np.isnan(sub)).any(axis=1)
    t = time.perf_counter()
    _pyirt_svi(sub[keep], epochs=epochs, lr=0.1, lr_decay=0.9999, priors="hierarchical", seed=0, threads=1,
               progress=False)
    return 1000 * (time.perf_counter() - t) / epochs


def heldout_loglik(params, Rv):
    th = estimate_ability(Rv, params.a, params.b)
    P = np.clip(params.prob(th), 1e-9, 1 - 1e-9)
    obs = ~np.isnan(Rv)
    ll = np.where(obs, Rv * np.log(P) + (1 - Rv) * np.log(1 - P), 0.0)
    return float(ll[obs].mean())


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default="gsm8k")
    ap.add_argument("--quick", action="store_true", help="smaller grids")
    args = ap.parse_args(argv)

    d = load(args.data)
    sp = split_models(d, seed=0)
    Rt = binarize(d.responses[sp.train])
    Rv = binarize(d.responses[sp.val])
    print(f"{d.name}: {Rt.shape[0]} training x {Rt.shape[1]} items, {Rv.shape[0]} validation models")
    _pyirt_svi(Rt[:50, :20], epochs=3, lr=0.1, lr_decay=0.9999, priors="hierarchical", seed=0, threads=1,
               progress=False)  # warm-up: torch / pyro imports and first-optimiser costs

    models = [100, 1000, Rt.shape[0]] if args.quick else [100, 300, 1000, 2000, Rt.shape[0]]
    items = sorted({min(50, Rt.shape[1]), Rt.shape[1]})
    print("\n1. ms per epoch (py-irt 2PL, hierarchical priors, 1 torch thread)")
    print("models  " + "".join(f"{m:>12d}" for m in items) + "   items")
    for n in models:
        n = min(n, Rt.shape[0])
        print(f"{n:6d}  " + "".join(f"{per_epoch_ms(Rt, n, m):12.1f}" for m in items), flush=True)

    grid = ([(500, 100), (500, 150), (500, 200), (1000, 200)] if args.quick else
            [(500, 100), (500, 150), (500, 200), (500, 300), (1000, 100), (1000, 200), (1000, 300), (1000, 500),
             (None, 200), (None, 300)])
    print("\n2. fit time and held-out log-likelihood per response (validation models; higher is better)")
    print(f"{'max_models':>10s} {'epochs':>7s} {'seconds':>8s} {'loglik':>8s}")
    for mm, ep in grid:
        t = time.perf_counter()
        p = fit_2pl(Rt, epochs=ep, max_models=mm, seed=0, progress=False)
        print(f"{str(mm):>10s} {ep:7d} {time.perf_counter() - t:8.1f} {heldout_loglik(p, Rv):8.4f}", flush=True)
    print(f"\nchosen defaults (essence.features.irt.DEFAULT_FIT): {DEFAULT_FIT}")
    print("the fit is cached per training split (essence.features.irt.fit_2pl_cached): irt and tinybench, and every k, "
          "share one fit")


if __name__ == "__main__":
    from essence.data.pinning import ensure

    ensure()  # the same numbers on any machine (essence/data/pinning.py)
    main()
