"""How a suite member's candidates are combined: the best unweighted average of up to three, or a weighted greedy
ensemble of any of them, on the same chosen items and the same models.

For each seed the default joint search (:func:`essence.suite.select.select_suite`: three searches and the CV
pick) chooses k = 250 items across the five metabench pools on the split of ``benchmarks/suite.py`` (the test
split, or with ``--holdout`` the models held out of everything). Every candidate that
:func:`essence.suite.artifact.fit_members` weighs for a member (:func:`essence.suite.artifact.member_candidates`)
is cross-fitted on the training + validation models (the 5 folds of the artifact) and fitted on all of them to
predict the evaluation models; both are cached (``build/suite/combine-*.npz``). Each way of combining
(:func:`essence.reconstructors.combine.combine_oof`: ``equal``, the default before ``greedy`` replaced it, and ``greedy`` with
``--steps``) then picks its weights on the out-of-fold predictions alone, exactly as ``compress_suite`` does,
and is scored on the evaluation models: per-benchmark RMSE, their mean, its ratio to the five separate
artifacts trained on whole pools (``benchmarks/suite.py --separate-pool``'s baseline, computed and cached under
``build/suite`` when missing; ``--no-baseline`` skips it) and the suite mean's RMSE, pp.

    .venv/bin/python benchmarks/suite_combine.py --seeds 0 1 2 3 4 --holdout
    .venv/bin/python benchmarks/suite_combine.py --seeds 0 1 2 3 4

The metabench pools are pre-selected items: optimistic. One thread per process; about 12 minutes per seed
(the selection 4-6, the candidates 6-7), plus the baseline's five artifacts when they are not cached.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from essence.data._runtime import single_thread  # noqa: E402
from essence.data import POOL_CAVEAT  # noqa: E402
from essence.data.metrics import rmse  # noqa: E402
from essence.reconstructors.combine import GREEDY_STEPS, combine_oof  # noqa: E402
from essence.reconstructors.base import fit_reconstructor  # noqa: E402
from essence.reconstructors.choose import oof_predictions  # noqa: E402
from essence.suite import load_suite  # noqa: E402
from essence.suite.artifact import member_candidates  # noqa: E402
from essence.suite.select import budget_split, select_suite  # noqa: E402
from essence.suite.study import leave_out_models, run_pair, suite_split  # noqa: E402

NAMES = ("arc", "gsm8k", "mmlu", "truthfulqa", "winogrande")


def candidate_predictions(fit, evald, idx, seed: int, progress: bool = False) -> dict:
    """Per member ``b``: ``labels_b`` (the candidates that fitted), ``oof_b`` ``(c, n_fit)`` their out-of-fold
    predictions on ``fit``'s models (the artifact's 5 folds) and ``test_b`` ``(c, n_eval)`` their predictions,
    fitted on all of ``fit``, of ``evald``'s models (as the artifact's reconstructors predict them), pp; at the
    pooled items ``idx`` ``(k,)``."""
    R = fit.pooled().responses
    X, Xe = R[:, idx], evald.pooled().responses[:, idx]
    out = {}
    for b, name in enumerate(fit.names):
        y = fit.targets[:, b]
        labels, oofs, tests = [], [], []
        for label, make in member_candidates(fit, idx, b, seed=seed).items():
            t0 = time.perf_counter()
            try:
                p = oof_predictions(make, X, y, 5, seed, R)
                q = np.asarray(fit_reconstructor(make(), X, y, R).predict(Xe), dtype=np.float64)
            except (ValueError, np.linalg.LinAlgError) as exc:  # as choose_average_by_cv: a failed candidate
                print(f"  {name} {label}: failed ({exc})", flush=True)
                continue
            if not np.isfinite(p).all():
                continue
            labels.append(label), oofs.append(p), tests.append(q)
            if progress:
                print(f"  {name} {label}: CV {rmse(y, p):.3f} pp ({time.perf_counter() - t0:.0f} s)", flush=True)
        out.update({f"labels_{b}": np.array(labels), f"oof_{b}": np.array(oofs), f"test_{b}": np.array(tests)})
    return out


def combined(preds: dict, Y, b: int, combine: str, steps: int) -> tuple[dict, np.ndarray]:
    """``(weights, estimate (n_eval,))`` of member ``b`` combined by ``combine`` (weights chosen on the
    out-of-fold predictions against ``Y`` ``(n_fit, B)``)."""
    labels = [str(c) for c in preds[f"labels_{b}"]]
    oof = dict(zip(labels, preds[f"oof_{b}"]))
    w = combine_oof(oof, Y[:, b], combine, 3, steps)
    test = dict(zip(labels, preds[f"test_{b}"]))
    if combine == "equal":
        return w, np.mean([test[c] for c in w], axis=0)
    return w, np.sum([v * test[c] for c, v in w.items()], axis=0)


def run_seed(suite, seed: int, args) -> dict:
    """The cached candidate predictions of one seed (computed when missing) and the baseline's mean
    per-benchmark RMSE (None with ``--no-baseline``)."""
    if args.holdout:
        kept, evald = leave_out_models(suite, 0.2, seed)
        sp = suite_split(kept, seed, 0.1, 0.1)
    else:
        kept = suite
        sp = suite_split(kept, seed)
        evald = kept.subset(sp.test)
    tag = "holdout-" if args.holdout else ""
    path = Path(args.cache) / f"combine-{tag}{'+'.join(NAMES)}-n{kept.n_models}-s{seed}.npz"
    if path.exists():
        preds = dict(np.load(path))
    else:
        train, valid = kept.subset(sp.train), kept.subset(sp.val)
        fit = kept.subset(np.r_[sp.train, sp.val])
        with single_thread():
            idx, _ = select_suite(train, valid, 250, seed=seed, progress=False)
            preds = candidate_predictions(fit, evald, idx, seed, args.progress)
        preds.update(idx=np.asarray(idx), Y=fit.targets, Ye=evald.targets)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp.npz")
        np.savez(tmp, **preds)
        tmp.replace(path)
    preds["budget"] = " ".join(str(c) for c in budget_split(kept, preds["idx"]).values())
    base = None
    if not args.no_baseline:
        kw = dict(test=0.1, val=0.1, evaluate_on=evald, tag="holdout-") if args.holdout else {}
        res = run_pair(kept, seed=seed, cache=Path(args.cache), approaches=("separate_pool",), **kw)["separate_pool"]
        base = {n: rmse(np.asarray(res["truth"][n]), np.asarray(res["estimate"][n])) for n in NAMES}
    preds["baseline"] = base
    return preds


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--holdout", action="store_true", help="score on 20%% of the models held out of everything")
    ap.add_argument("--steps", type=int, nargs="+", default=[GREEDY_STEPS], help="the greedy ensemble's steps")
    ap.add_argument("--no-baseline", action="store_true", help="skip the separate artifacts (no ratio)")
    ap.add_argument("--progress", action="store_true", help="print each candidate's CV as it is fitted")
    ap.add_argument("--cache", default="build/suite")
    args = ap.parse_args(argv)
    suite = load_suite(NAMES)
    ways = [("equal", "equal", 0)] + [(f"greedy {s}", "greedy", s) for s in args.steps]
    rows = []
    for seed in args.seeds:
        preds = run_seed(suite, seed, args)
        Y, Ye = preds["Y"], preds["Ye"]
        base = preds["baseline"]
        for label, combine, steps in ways:
            est, parts = [], []
            for b in range(len(NAMES)):
                w, e = combined(preds, Y, b, combine, steps)
                est.append(e)
                parts.append(len(w))
            per = {n: rmse(Ye[:, b], est[b]) for b, n in enumerate(NAMES)}
            avg = float(np.mean(list(per.values())))
            rows.append({"seed": seed, "combination": label, **per, "avg": avg,
                         "separate avg": np.mean(list(base.values())) if base else np.nan,
                         "suite mean": rmse(Ye.mean(axis=1), np.mean(est, axis=0)),
                         "parts": " ".join(map(str, parts)), "budget": preds["budget"]})
        print(pd.DataFrame([r for r in rows if r["seed"] == seed]).round(3).to_markdown(index=False), flush=True)
    df = pd.DataFrame(rows)
    mean = df.drop(columns=["seed", "parts", "budget"]).groupby("combination", sort=False).mean()
    mean["ratio to pool"] = mean["avg"] / mean["separate avg"]
    where = "models held out of everything" if args.holdout else "the test split (20%)"
    print(f"\nMean over seeds {args.seeds}, {where}; RMSE in pp (avg = mean of the five; separate avg = the five "
          f"separate artifacts trained on whole pools; ratio = avg / separate avg):")
    print(mean.round(4).to_markdown())
    print(f"note: {POOL_CAVEAT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
