"""The ``essence`` command: ``data``, ``compress``, ``estimate`` and ``evaluate`` here; ``sweep`` and the lmeval
subcommands are registered by their modules through ``add_subcommand(subparsers)``. Every user error exits with
status 2 and one line that says what to do; nothing is written on error."""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

from . import DEFAULT_METHOD, compress, lmeval, sweep
from .artifact import commands
from .artifact.base import FIGURE_KEYS, load_artifact
from .artifact.report import answered_counts, context_lines
from .data import DATASETS, METABENCH, POOL_CAVEAT, SPLIT_KINDS, items_from, link_shared_data, load as load_data
from .data._io import check_output, write_atomic
from .data._version import __version__
from .data.checks import cli_whole_number, parse_params
from .data.errors import EssenceWarning, InputError, UsageError, plain
from .data.pinning import ensure, is_pinned
from .suite import load_suite

__all__ = ["main"]

_PACKAGE_DIR = str(Path(__file__).resolve().parent)


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, status 2
        raise UsageError(f"{message} (see `{self.prog} --help`)")


# ----------------------------------------------------------------------------------------------
def cmd_data(args) -> int:
    if args.link:
        for line in link_shared_data():
            print(line)
        return 0
    for name in DATASETS:
        r = load_data(name)
        print(f"{name:13s} {r.n_models:5d} models x {r.n_items:4d} items  binary={r.is_binary!s:5s} "
              f"missing={r.missing_fraction:.2%} target={r.target_source}")
    print(f"note: {', '.join(METABENCH)}: {POOL_CAVEAT}")
    return 0


#: compress() arguments that are not method parameters (the command line keeps their defaults)
_COMPRESS_SETTINGS = {"data", "test", "val", "level", "min_answered"}


def _source(args):
    """DATA as one :class:`~essence.data.Responses` or a :class:`~essence.suite.Suite`, kept to ``--items-from``."""
    if args.items_from and len(args.items_from) != len(args.data):
        raise UsageError(f"--items-from: give it once per benchmark, in the order of DATA ({len(args.data)} here), "
                         f"got {len(args.items_from)}")
    if len(args.data) > 1:
        keep = [lambda m, src=Path(f): items_from(src, m) for f in args.items_from] if args.items_from else None
        return load_suite(args.data, keep=keep)
    if args.per_benchmark is not None:
        raise UsageError("--per-benchmark: only for a suite (several DATA); drop it or name more benchmarks")
    data = load_data(args.data[0])
    return data.subset(items=items_from(Path(args.items_from[0]), data)) if args.items_from else data


def cmd_compress(args) -> int:
    params = parse_params(args.param)
    settings = sorted(set(params) & _COMPRESS_SETTINGS)
    if settings:
        raise UsageError(f"--param {settings[0]}: not a method parameter but a setting of compress(), which the "
                         f"command line keeps at its default; set it in Python: essence.compress(data, k, "
                         f"{settings[0]}=...)")
    source = _source(args)
    if args.per_benchmark:
        params["per_benchmark"] = args.per_benchmark
    stem = "+".join(Path(str(d)).stem for d in args.data)
    out = Path(args.out) if args.out else Path(f"{stem}-{args.method}-k{args.k}-s{args.seed}.json")
    check_output(out, overwrite=args.force, flag="--out")
    art = compress(source, k=args.k, method=args.method, seed=args.seed, split=args.split, progress=not args.quiet,
                   **params)
    art.save(out, overwrite=args.force)
    if len(args.data) > 1:
        dropped = ", ".join(f"{n} {c}" for n, c in source.dropped.items())
        print(f"suite {' + '.join(source.names)}: {source.n_models} models in all (dropped per benchmark: {dropped})")
    print(f"{stem}: {art.method} k={args.k} seed={args.seed} -> {out}")
    print("\n".join(art.summary_lines()))
    return 0


def cmd_estimate(args) -> int:
    art = load_artifact(args.artifact)
    paths = art.inputs(args.responses)
    df = art.estimate(paths, fallback=not args.no_fallback) if hasattr(art, "fallback_items") else art.estimate(paths)
    text = df.to_csv(index=False, float_format="%.4f")
    if args.out:
        write_atomic(Path(args.out), text, overwrite=args.force)
        print(f"{len(df)} model(s) -> {args.out}")
    else:
        sys.stdout.write(text)
    if art.n_inputs == 1 and (args.context or (args.context is None and sys.stdout.isatty())):
        resp = load_data(paths[0], allow_empty_items=True)
        counts = dict(zip(df["model"], df["items_used"])) if "items_used" in df else answered_counts(art, resp)
        print("\n".join(context_lines(art, df, counts)))
    return 0


def cmd_evaluate(args) -> int:
    art = load_artifact(args.artifact)
    data = [load_data(d, allow_empty_items=True) for d in art.inputs(args.data)]
    res = art.evaluate(data)
    if args.json:
        def pick(fig):
            return {key: fig.get(key) for key in FIGURE_KEYS}

        print(json.dumps(pick(res) if art.n_inputs == 1 else
                         {"n_models": res["n_models"], "benchmarks": {n: pick(f) for n, f in res["benchmarks"].items()},
                          "mean": pick(res["mean"])}))
    else:
        print("\n".join(art.evaluation_lines(res, data[0])))
    return 0


# ----------------------------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="essence", description="Compress an LLM benchmark to a few items that keep its verdict.")
    p.add_argument("--version", action="version", version=f"essence {__version__}")
    p.add_argument("--pinned", action="store_true",
                   help="run with the CPU code paths pinned (BLAS kernels, SIMD dispatch, threads: "
                        "essence/data/pinning.py), so the same seed gives the same items and figures on any x86-64 "
                        "machine with AVX2, as make test and make reproduce run; a little slower on AVX-512 machines")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    d = sub.add_parser("data", help="list the shipped datasets, or link and verify them into data/")
    d.add_argument("--link", action="store_true", help="link ../shared/data into data/ and verify checksums")
    d.set_defaults(func=cmd_data)

    c = sub.add_parser("compress", help="choose K items of DATA (or across several: a suite) and write the artifact")
    c.add_argument("data", nargs="+", help="dataset name (arc, gsm8k, ...) or path (.npz, .csv, .parquet); "
                                            "several: a suite, K items chosen across all of them")
    c.add_argument("--k", type=cli_whole_number(1), required=True, help="number of items to keep")
    c.add_argument("--method", default=DEFAULT_METHOD,
                   help=f"selection method (default: {DEFAULT_METHOD}, the same as essence.compress)")
    c.add_argument("--seed", type=cli_whole_number(0), default=0,
                   help="seed for the model split and the method (default 0)")
    c.add_argument("--out", help="artifact path (default: DATA-METHOD-kK-sS.json)")
    c.add_argument("--items-from", metavar="FILE", action="append",
                   help="compress only DATA's items that FILE holds (a responses file such as import-lmeval's "
                        "output, or a text file with one item id per line); for a suite, give it once per "
                        "benchmark, in DATA's order")
    c.add_argument("--param", action="append", metavar="NAME=VALUE", help="a method parameter (repeatable)")
    c.add_argument("--per-benchmark", type=cli_whole_number(0), metavar="N",
                   help="suites only: at least N items of every benchmark (the rest of the split is searched)")
    c.add_argument("--split", choices=SPLIT_KINDS, default="random",
                   help="which models are held out for the artifact's test figures: random (10 %%, stratified, the "
                        "default); top or bottom (the strongest or weakest 20 %%: a model better or worse than every "
                        "reference); far (the strongest 20 %%, references only the weakest 60 %%); chance (the "
                        "strongest 20 %%, references only the models near the benchmark's floor)")
    c.add_argument("--force", action="store_true", help="replace an existing --out file")
    c.add_argument("--quiet", action="store_true", help="no progress bars")
    c.set_defaults(func=cmd_compress)

    e = sub.add_parser("estimate", help="estimate full scores of new models from their results on the chosen items",
                       description="Writes CSV: model, estimate, lower, upper (pp; the artifact's interval, 90 % by "
                                   "default), outside (True: the model lies outside the reference models, where the "
                                   "estimate extrapolates), answered_by (regression: read as the references are; "
                                   "frontier: the factor model's estimate above them; fallback sample: with the "
                                   "fallback sample's answers too).")
    e.add_argument("artifact")
    e.add_argument("responses", nargs="+", help="new models' results: .npz, .csv or .parquet holding every chosen "
                                                 "item (a suite artifact: one file per benchmark, in its order)")
    e.add_argument("--out", help="CSV path (default: print to stdout)")
    e.add_argument("--force", action="store_true", help="replace an existing --out file")
    e.add_argument("--context", action=argparse.BooleanOptionalAction, default=None,
                   help="after the CSV, lines saying what each estimate means (items used, percentile among the "
                        "reference models, chance level, extrapolation); default: on when stdout is a terminal")
    e.add_argument("--no-fallback", action="store_true",
                   help="ignore answers on the artifact's fallback sample (`essence items ARTIFACT --fallback`); by "
                        "default a model outside the references that answered it is estimated from both")
    e.set_defaults(func=cmd_estimate)

    v = sub.add_parser("evaluate", help="compare an artifact's estimates with DATA's true scores")
    v.add_argument("artifact")
    v.add_argument("data", nargs="+", help="dataset name or path with true scores (a suite artifact: one per "
                                            "benchmark, in the order it was compressed)")
    v.add_argument("--json", action="store_true", help="print one JSON object")
    v.set_defaults(func=cmd_evaluate)

    for module in (commands, sweep, lmeval):  # each adds its own subcommands
        module.add_subcommand(sub)
    return p


#: subcommands whose --out is a folder (every other --out is a file)
_FOLDER_OUTPUTS = {"sweep", "export-lmeval", "replay-lmeval"}


def _inputs(args) -> list[Path]:
    """Every existing file a command was given as an input (its positional arguments and path options)."""
    values = [v for name, value in vars(args).items() if name != "out" and value is not None
              for v in (value if isinstance(value, list) else [value])]
    return [Path(v) for v in values if isinstance(v, (str, Path)) and str(v) and Path(v).is_file()]


def _check_out(args) -> None:
    """UsageError for an unusable ``--out`` before any work (one of the command's inputs even with ``--force``)."""
    out = getattr(args, "out", None)
    if out:
        same = [p for p in _inputs(args) if Path(out).exists() and p.resolve() == Path(out).resolve()]
        if same:
            raise UsageError(f"--out {out}: is one of this command's inputs ({same[0]}); choose another path "
                             "(--force never replaces an input)")
        folder = args.command in _FOLDER_OUTPUTS
        check_output(out, overwrite=folder or bool(getattr(args, "force", False)), folder=folder, flag="--out")


def _one_line(message, category, filename) -> str:
    """A warning as one line: ``essence: warning: ...`` (other packages' warnings name their category)."""
    text = " ".join(plain(str(message)).split())
    if not issubclass(category, EssenceWarning) and not str(filename).startswith(_PACKAGE_DIR):
        text = f"{category.__name__}: {text}"
    return f"essence: warning: {text}"


def _pin(in_process: bool) -> None:
    """--pinned: restart this command with the pins (essence.data.pinning.ensure); called in a process that already
    loaded its libraries unpinned (``main(argv)`` from Python), it refuses rather than restart that process."""
    if in_process and not is_pinned():
        raise UsageError("--pinned: the pins must be set before numpy loads; run the command line `essence --pinned "
                         "...`, or `python -m essence.data.pinning run -- python ...` for a Python program")
    ensure()


def main(argv=None) -> int:
    """Run the command: exit status 0 done, 2 the user's mistake, 130 interrupted; warnings only on success."""
    pending: list[str] = []
    try:
        with warnings.catch_warnings():
            warnings.showwarning = lambda message, category, filename, *_a, **_k: pending.append(
                _one_line(message, category, filename))
            args = build_parser().parse_args(argv)
            if args.pinned:
                _pin(in_process=argv is not None)
            _check_out(args)
            status = int(args.func(args) or 0)
        for line in dict.fromkeys(pending):
            print(line, file=sys.stderr)
        return status
    except InputError as exc:  # the user's mistake (UsageError included); anything else is a bug
        print(f"essence: error: {' '.join(plain(str(exc)).split())}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("essence: interrupted; no result file was finished", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
