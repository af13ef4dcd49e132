"""How big should the trees be that learn from a suite member's models outside the suite (``boost_pool``)?

For each seed, the joint EssenceBench chooses the suite's items (k = 250 across the five metabench pools, the
test split of ``benchmarks/suite.py``; one search, ``searches=1``, as when this was measured); then, per member, each candidate below is cross-fitted (5 folds over the
training + validation models, as :func:`essence.suite.artifact.fit_members` does) and refitted on those models
to predict the test models. Printed: each candidate's CV and test RMSE (pp) and seconds, and the CV-chosen
average of up to three among the suite's strongest kinds (``kernel``, ``boost``, ``boost_pool``,
``kernel_pool``; ``--with-mlps`` adds the MLPs the full candidate set holds) without and with the extra tree
settings. With ``--boost-pool 300x15 --with-mlps`` (the setting before this one) the base set's averages on seed 0
are those the full candidate set chose then (``benchmarks/suite.py``).

    .venv/bin/python benchmarks/pool_trees.py --seeds 0 --boost-pool 300x15 --trees 600x31 --with-mlps
    .venv/bin/python benchmarks/pool_trees.py --seeds 1 --boost-pool 300x15 --trees 600x31 1200x31 600x63 --shared 600x31

``--boost-pool TxL``: the base set's ``boost_pool`` (default: the suite's, :data:`essence.suite.artifact.POOL_BOOST`;
300x15 was the setting before it); ``--trees TxL``: boost_pool with T rounds of trees of at most L leaves, added;
``--shared TxL``: the same trees on the shared models only (``boost`` with those settings), added. The metabench pools are pre-selected items: optimistic.
One thread; about 10-25 minutes per seed.
"""

from __future__ import annotations

import argparse
import sys
import time
from itertools import combinations
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from essence.data._runtime import single_thread  # noqa: E402
from essence.reconstructors.boost import BoostReconstructor  # noqa: E402
from essence.data import POOL_CAVEAT  # noqa: E402
from essence.data.metrics import rmse  # noqa: E402
from essence.reconstructors.combine import WithExtraModels  # noqa: E402
from essence.reconstructors.choose import oof_predictions  # noqa: E402
from essence.reconstructors.base import fit_reconstructor  # noqa: E402
from essence.suite import load_suite  # noqa: E402
from essence.suite.artifact import _member_blocks, boost_candidates, outside_candidates, own_candidates, suite_candidates
from essence.suite.select import kernel_candidates
from essence.suite.select import select_suite  # noqa: E402
from essence.suite.study import suite_split  # noqa: E402

NAMES = ("arc", "gsm8k", "mmlu", "truthfulqa", "winogrande")


def _size(text: str) -> tuple[int, int]:
    t, leaves = text.lower().split("x")
    return int(t), int(leaves)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--boost-pool", default=None, help="the base set's boost_pool as ROUNDSxLEAVES (default: the suite's)")
    ap.add_argument("--trees", nargs="*", default=["600x31"], help="boost_pool settings to add, as ROUNDSxLEAVES")
    ap.add_argument("--shared", nargs="*", default=[], help="boost settings (shared models only) to add")
    ap.add_argument("--with-mlps", action="store_true", help="also the MLP candidates of the full set")
    ap.add_argument("--members", nargs="*", default=list(NAMES), help="only these members (default: all five)")
    args = ap.parse_args(argv)
    suite = load_suite(NAMES)
    for seed in args.seeds:
        sp = suite_split(suite, seed)
        with single_thread():
            idx, info = select_suite(suite.subset(sp.train), suite.subset(sp.val), 250, seed=seed, progress=False,
                                     searches=1)
            fit, te = suite.subset(np.r_[sp.train, sp.val]), suite.subset(sp.test)
            R = fit.pooled().responses
            X, Xt = R[:, idx], te.pooled().responses[:, idx]
            n = X.shape[0]
            print(f"\nseed {seed}: budget {info['budget']}; {n} training + validation models, {te.n_models} test")
            picks = {"base": [], "more": []}
            for b, name in enumerate(NAMES):
                if name not in args.members:
                    continue
                y, yt = fit.targets[:, b], te.targets[:, b]
                base = {}
                if args.with_mlps:
                    base.update({k: v for k, v in suite_candidates(idx, n, seed=seed).items()
                                 if k in ("mlp_a3", "mlp_a10")})
                base.update(kernel_candidates(idx, fit.member_of, b, n))
                base.update(boost_candidates(idx, fit.member_of, n))
                oc = outside_candidates(fit, idx, b, n)
                base.update({k: oc[k] for k in ("boost_pool", "kernel_pool")})
                if args.with_mlps:
                    base.update(own_candidates(idx, fit.member_of, b, seed))
                X_out, y_out = fit.outside_rows(b, idx)
                blocks = _member_blocks(idx, fit.member_of)

                def trees(size: str, pool: bool = True):
                    t, lv = _size(size)
                    one = lambda: BoostReconstructor(blocks=blocks, trees=t, leaves=lv)  # noqa: E731
                    return (lambda: WithExtraModels(one(), X_out, y_out)) if pool else one

                if args.boost_pool:
                    base["boost_pool"] = trees(args.boost_pool)
                more = {f"boost_pool {s}": trees(s) for s in args.trees}
                more.update({f"boost {s}": trees(s, pool=False) for s in args.shared})
                oof, test, rows = {}, {}, []
                for label, make in {**base, **more}.items():
                    t0 = time.perf_counter()
                    oof[label] = oof_predictions(make, X, y, 5, seed, R)
                    test[label] = fit_reconstructor(make(), X, y, R).predict(Xt)
                    rows.append(f"{label} {rmse(y, oof[label]):.3f} / {rmse(yt, test[label]):.3f} "
                                f"({time.perf_counter() - t0:.0f} s)")
                print(f"{name}: CV / test RMSE (pp): " + "; ".join(rows), flush=True)
                for tag, labels in (("base", list(base)), ("more", list(base) + list(more))):
                    def cv_of(c):
                        return rmse(y, np.mean([oof[x] for x in c], axis=0))

                    best = min((c for m in (1, 2, 3) for c in combinations(labels, m)), key=cv_of)
                    cv = cv_of(best)
                    p = np.mean([test[x] for x in best], axis=0)
                    picks[tag].append(p)
                    print(f"  {tag}: {' + '.join(best)}: CV {cv:.3f}, test {rmse(yt, p):.3f}", flush=True)
            for tag, preds in picks.items():
                if len(preds) < len(NAMES):
                    continue
                per = [rmse(te.targets[:, b], p) for b, p in enumerate(preds)]
                print(f"seed {seed} {tag}: mean per-benchmark test RMSE {np.mean(per):.4f} pp, suite mean "
                      f"{rmse(te.mean_target, np.mean(preds, axis=0)):.4f} pp")
    print(f"note: {POOL_CAVEAT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
