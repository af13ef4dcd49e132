"""Few-model candidates of ``auto`` (alone, or auto with other settings) on the cells issue 12 names.

Each argument is ``METHOD`` or ``METHOD:PARAMS`` (a Python dict literal), e.g. ``random``,
``ruler_strat``, ``screened:{'keep':0.75}`` or ``auto:{'fallback_draws':8}``: a registered method or a name
of :data:`essence.methods.auto.FEW_MODEL_SELECTORS` (measured alone, with auto's line rule), run with
:func:`essence.lessons.regimes.run_one` (the regime map's protocol and cache; ``--out``, default
``build/few_candidates``) on the cells: gsm8k 35 / 50 / 100 models and winogrande 35 (``--draws``, default
2), lcb_codegen (all 45), arc 35 / 50 (``min(draws, 2)``), GENERATED 40 x 800 seeds 0-3 and 30 x 500 seeds
0-1 (``--generated-seeds`` replaces both lists: ``40x800=4,5,6,7 30x500=2,3``; ``--cells gsm8k=100 arc=100``
replaces the real cells). Prints the map's wide
table; with ``--pool-generated`` the generated seeds of one shape are one row (each seed a "draw").

    python benchmarks/few_candidates.py random ruler_best_of ruler_strat ruler_bagged "screened:{'keep':0.75}"
    python benchmarks/few_candidates.py random auto "auto:{'fallback_draws':8}"
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from essence.lessons.regimes import default_k, run_one, summarise, wide_table  # noqa: E402


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("methods", nargs="+", help="METHOD or METHOD:{'param': value}")
    p.add_argument("--draws", type=int, default=2)
    p.add_argument("--generated-seeds", nargs="*", default=["40x800=0,1,2,3", "30x500=0,1"], metavar="SHAPE=SEEDS")
    p.add_argument("--pool-generated", action="store_true", help="one row per generated shape")
    p.add_argument("--no-real", action="store_true", help="only the generated matrices")
    p.add_argument("--cells", nargs="*", default=None, metavar="NAME=MODELS",
                   help="real cells instead of the default list, e.g. gsm8k=100 arc=100 (draws: --draws)")
    p.add_argument("--out", default="build/few_candidates")
    args = p.parse_args(argv)
    from essence.data import load
    from essence.data.synthetic import generate_mirt

    d = args.draws
    cells = [] if args.no_real else (
        [("gsm8k", m, i) for m in (35, 50, 100) for i in range(d)] + [("winogrande", 35, i) for i in range(d)]
        + [("lcb_codegen", "all", 0)] + [("arc", m, i) for m in (35, 50) for i in range(min(d, 2))])
    if args.cells is not None and not args.no_real:
        cells = [(c.split("=")[0], c.split("=")[1] if c.split("=")[1] == "all" else int(c.split("=")[1]), i)
                 for c in args.cells for i in range(d if c.split("=")[1] != "all" else 1)]
    for spec in args.generated_seeds:
        shape, seeds = spec.split("=")
        cells += [(f"generated-{shape}-s{s}", "all", 0) for s in seeds.split(",")]
    methods = [(m.split(":", 1)[0], ast.literal_eval(m.split(":", 1)[1]) if ":" in m else {}) for m in args.methods]
    data, rows = {}, []
    for name, m, draw in cells:
        if name not in data:
            if name.startswith("generated"):
                shape, s = name[len("generated-"):].rsplit("-s", 1)
                data[name] = generate_mirt(*(int(v) for v in shape.split("x")), seed=int(s))
            else:
                data[name] = load(name)
        k = default_k(name, data[name].n_items)
        for meth, params in methods:
            r = run_one(data[name], name, m, draw, meth, k, 5, Path(args.out), params or None)
            label = meth + "".join(f"_{a}{b}" for a, b in sorted(params.items()))
            print(f"{name} m={m} draw={draw} {label}: {r.get('refused') or round(r['ratio'], 3)} "
                  f"{r.get('choices')}", file=sys.stderr, flush=True)
            if args.pool_generated and name.startswith("generated"):
                shape, s = name.rsplit("-s", 1)
                r = {**r, "dataset": f"{shape} (seeds pooled)", "draw": int(s)}
            rows.append({**r, "method": label})
    labels = list(dict.fromkeys(r["method"] for r in rows))
    print("\n| dataset | models | draws | random + line (pp) | " + " | ".join(labels) + " |")
    print("|---|---|---|---|" + "---|" * len(labels))
    for row in wide_table(summarise(rows), labels):
        print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
