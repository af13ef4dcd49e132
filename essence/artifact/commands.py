"""The ``compare``, ``refit`` and ``items`` subcommands (registered by :func:`add_subcommand`)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..data._io import write_atomic

__all__ = ["add_subcommand", "compare_lines", "item_lines"]


def _load_compressed(path, what: str = "ARTIFACT", suite: bool = False):
    from ..data.errors import InputError
    from .base import load_artifact
    from .compressed import Compressed

    art = load_artifact(path)
    if not isinstance(art, Compressed) and not (suite and hasattr(art, "names")):
        raise InputError(f"{what} {path}: a {type(art).__name__} artifact; "
                         + ("compare takes a compressed benchmark or suite" if suite else
                            "refit takes one benchmark's compressed artifact (a suite: compress it again)"))
    return art


def compare_lines(df, margin: float, level: float, art=None) -> list[str]:
    """What ``essence compare`` prints for :func:`~essence.artifact.compare.compare`'s table ``df``."""
    lines = []
    for r in df.itertuples():
        on = f" on {r.benchmark}" if df["benchmark"].nunique() > 1 else ""
        line = (f"{r.b} vs {r.a}{on}: {r.difference:+.2f} pp ({level:.0%} interval {r.lower:+.2f} to {r.upper:+.2f}; "
                f"{r.estimate_b:.1f} vs {r.estimate_a:.1f}): {r.verdict}")
        if r.verdict == "undecided" and r.items_needed:
            line += f"; about {r.items_needed} chosen items would decide it at +-{margin:g} pp"
        lines.append(line)
    counts = df["verdict"].value_counts()
    lines.append(f"{len(df)} pair(s): " + ", ".join(f"{counts.get(v, 0)} {v}" for v in
                                                     ("better", "worse", "equivalent", "undecided"))
                 + f" (b - a; equivalent: the interval inside +-{margin:g} pp)")
    fixed = [k for k, pi in (getattr(art, "pairs", None) or {}).items()
             if pi.residuals == "fixed-items" and (df["calibration"] == k).any()]
    if fixed:
        lines.append(f"note: this artifact's method ({art.method}) chose its items on the same reference models its "
                     "pair calibration was fitted on (cross-fitted on fixed items), so its intervals may be too "
                     "narrow; the default (auto) calibrates on folds that choose their own items")
    n_ind = int((df["calibration"] == "independent").sum())
    if n_ind:
        why = ("a suite artifact holds no pair calibration" if hasattr(art, "names") else "a model the regression "
               "reads outside the references, or an artifact without a pair calibration (`essence refit` adds one)")
        lines.append(f"note: {n_ind} pair(s) combine the two models' own intervals as independent errors (wider): "
                     f"{why}")
    return lines


def cmd_compare(args) -> int:
    from ..data import load as load_data
    from .compare import compare, gate_failures

    art = _load_compressed(args.artifact, suite=True)
    baseline = (_load_compressed(args.baseline_artifact, "--baseline-artifact", suite=True)
                if args.baseline_artifact else None)
    if hasattr(art, "names"):  # a suite: one results file per benchmark, in its order (it reads them itself)
        data = art.inputs(args.responses)
    else:
        data = [load_data(p, allow_empty_items=True) for p in args.responses]
    df = compare(art, data, a=args.a, b=args.b, margin=args.margin, baseline=baseline, fallback=not args.no_fallback)
    level = (art.interval if hasattr(art, "interval") else art.mean_interval).level
    if args.out:
        write_atomic(Path(args.out), df.to_csv(index=False, float_format="%.4f"), overwrite=args.force)
    if args.json:
        rows = json.loads(df.to_json(orient="records", double_precision=4))
        print(json.dumps(rows, indent=1))
    else:
        print("\n".join(compare_lines(df, args.margin, level, art)))
    if args.fail_if:
        failed = gate_failures(df, args.fail_if, level)
        for line in failed:
            print(line, file=sys.stderr)
        return 1 if failed else 0
    return 0


def cmd_refit(args) -> int:
    from ..data import load as load_data
    from ..data._io import check_output
    from .base import items_hash
    from .refit import refit

    art = _load_compressed(args.artifact)
    out = Path(args.out) if args.out else Path(args.artifact).with_name(Path(args.artifact).stem + "-refit.json")
    check_output(out, overwrite=args.force, flag="--out")
    new = refit(art, load_data(args.data), seed=args.seed)
    new.save(out, overwrite=args.force)
    print(f"{args.artifact} refitted on {new.dataset['n_models']} models of {new.dataset['name']} -> {out} "
          f"(the same {new.k} items: {items_hash(new.items)}; refit {len(new.lineage)} of its lineage)")
    print("\n".join(new.summary_lines()))
    return 0


def item_lines(art, fallback: bool = False) -> list[str]:
    """What ``essence items`` prints: the item ids a new model answers, one per line, in the artifact's order (a
    suite: ``BENCHMARK<TAB>ID``; an adaptive test: its whole bank); ``fallback``: the fallback sample's instead."""
    from ..data.errors import InputError

    if fallback:
        ids = list(getattr(art, "fallback_items", None) or [])
        if not ids:
            raise InputError("this artifact holds no fallback sample (compress with the default method, auto, for "
                             "one; an artifact from before it has none: `essence compress` again)")
        return ids
    if isinstance(art.items, dict):  # a suite
        return [f"{name}\t{i}" for name in art.names for i in art.items[name]]
    return list(art.items)


def cmd_items(args) -> int:
    from .base import load_artifact

    print("\n".join(item_lines(load_artifact(args.artifact), args.fallback)))
    return 0


def add_subcommand(sub) -> None:
    from .compare import GATES

    c = sub.add_parser("compare", help="is model b better than model a? their full-score difference from the chosen "
                                       "items, with an interval and a verdict")
    c.add_argument("artifact")
    c.add_argument("responses", nargs="+", help="results on the chosen items (.npz, .csv, .parquet); several files "
                                                 "are read together (e.g. the baseline's and the new model's); a "
                                                 "suite artifact: one file per benchmark, in its order")
    c.add_argument("--a", metavar="MODEL", help="the baseline: compare every other model with it")
    c.add_argument("--b", metavar="MODEL", help="the candidate: compare it with every other model (with --a: one pair)")
    c.add_argument("--margin", type=float, default=1.0, metavar="PP",
                   help="equivalence margin in pp: 'equivalent' when the interval of b - a lies inside +-PP "
                        "(default 1)")
    c.add_argument("--json", action="store_true", help="print a JSON list, one object per pair")
    c.add_argument("--fail-if", choices=list(GATES),
                   help="a gate for CI: exit 1 when a pair's verdict is worse / not better / not equivalent / "
                        "undecided")
    c.add_argument("--baseline-artifact", metavar="FILE",
                   help="the artifact the baseline's results were run with (e.g. before a refit): refused unless "
                        "it asks the same items")
    c.add_argument("--no-fallback", action="store_true",
                   help="ignore answers on the artifact's fallback sample (by default a model outside the references "
                        "that answered it is estimated from both, as `essence estimate` does)")
    c.add_argument("--out", help="also write the table as CSV")
    c.add_argument("--force", action="store_true", help="replace an existing --out file")
    c.set_defaults(func=cmd_compare)

    r = sub.add_parser("refit", help="fit an artifact again on more reference models, keeping its items")
    r.add_argument("artifact")
    r.add_argument("data", help="dataset name or path: the references, every chosen item answered (newer models "
                                "evaluated in full)")
    r.add_argument("--out", help="the refitted artifact (default: ARTIFACT-refit.json; never ARTIFACT itself)")
    r.add_argument("--seed", type=int, help="seed of the calibration folds (default: the artifact's)")
    r.add_argument("--force", action="store_true", help="replace an existing --out file")
    r.set_defaults(func=cmd_refit)

    i = sub.add_parser("items", help="list the item ids a new model answers (or the fallback sample's)")
    i.add_argument("artifact")
    i.add_argument("--fallback", action="store_true",
                   help="the fallback sample: items drawn at random, for a model the estimate places outside the "
                        "references (answer them too and estimate again)")
    i.set_defaults(func=cmd_items)
