#!/usr/bin/env python
"""Write the committed fixture artifacts of the current schema under ``tests/artifacts/current/``.

    python scripts/make_fixture_artifacts.py --force            # every fixture
    python scripts/make_fixture_artifacts.py --force NAME ...   # some of them (NAME in FIXTURES)

For each fixture of :data:`FIXTURES` (one benchmark with the default method, a suite, an adaptive item bank; small k,
seed 0, from the shared data) it writes the artifact ``NAME.json``, the answers of a handful of models on what the
artifact reads (``NAME.answers.csv``; a suite: ``NAME.MEMBER.answers.csv``, one per member, in its order), the
estimates today's code gives them (``NAME.estimates.csv``, read back from those files through the public loader) and
``MANIFEST.json`` (how each was made, its schema, the files' SHA-256). ``tests/test_fixture_artifacts.py`` loads each
artifact with ``essence.load`` and checks that it still gives the recorded estimates (to 1e-6 pp).

Refreshing them is a deliberate act, never a way to make that test pass: run this script only when the artifact
schema (or what an estimate is) changes on purpose, read the diff of the ``*.estimates.csv`` files, say why in the
commit, and keep the older artifacts of ``tests/test_saved_artifacts.py`` loading. Without ``--force`` it refuses to
replace a committed fixture.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "artifacts" / "current"
#: models whose estimates are recorded: spread over the reference models' full scores, weakest to strongest
N_MODELS = 8

#: name -> (kind, the call that makes it); every call takes a fixed seed and a small k, and runs in seconds
FIXTURES = {
    "musr-auto-k15": ("single", "essence.compress('musr', k=15, seed=0, progress=False)"),
    "musr+ifeval-essence-k20": ("suite", "essence.compress(['musr', 'ifeval'], k=20, seed=0, progress=False, "
                                         "reconstructors='basic')"),
    "arc_challenge-adaptive-k12": ("adaptive", "essence.compress('arc_challenge', k=12, method='adaptive', seed=0, "
                                               "progress=False)"),
}


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def answer_files(name: str, art) -> list[Path]:
    """The answers file(s) of fixture ``name``: one, or one per member of a suite (in the suite's order)."""
    members = getattr(art, "names", None)
    if isinstance(members, list):
        return [OUT / f"{name}.{m}.answers.csv" for m in members]
    return [OUT / f"{name}.answers.csv"]


def estimate_from_files(art, files: list[Path]):
    """The estimates of the stored answers, read as a user's would be (a wide table; a suite: its files' paths)."""
    import pandas as pd

    if len(files) > 1:
        return art.estimate([str(f) for f in files])
    return art.estimate(pd.read_csv(files[0], dtype={"model": str}))


def _spread(target, n: int):
    """Positions of ``n`` models spread over ``target``'s order, weakest to strongest."""
    import numpy as np

    order = np.argsort(np.asarray(target), kind="stable")
    return order[np.unique(np.linspace(0, len(order) - 1, n).round().astype(int))]


def _write_answers(art, files: list[Path]) -> list[str]:
    """Write the answers of :data:`N_MODELS` models on the items the artifact reads; returns their ids."""
    import pandas as pd

    import essence
    from essence.suite import load_suite

    def wide(data, items):
        df = pd.DataFrame(data.subset(items=list(items)).responses, columns=list(items))
        df.insert(0, "model", data.models)
        return df

    if len(files) > 1:  # a suite: each member's chosen items
        suite = load_suite(list(art.names))
        part = suite.subset(_spread(suite.mean_target, N_MODELS))
        for member, name, f in zip(part.members, art.names, files):
            wide(member, art.items[name]).to_csv(f, index=False)
        return part.models.tolist()
    data = essence.load_data(art.dataset["name"])
    part = data.subset(models=_spread(data.target, N_MODELS))
    wide(part, art.items).to_csv(files[0], index=False)  # the chosen items (adaptive: the whole bank)
    return part.models.tolist()


def make(name: str, force: bool) -> dict:
    """Write fixture ``name``'s files; its manifest entry."""
    import essence  # noqa: F401  (the calls of FIXTURES)

    kind, call = FIXTURES[name]
    path = OUT / f"{name}.json"
    if path.exists() and not force:
        raise SystemExit(f"{path.relative_to(ROOT)} exists; refreshing a committed fixture is deliberate: pass --force "
                         "(and read this script's docstring first)")
    eval(call).save(path, overwrite=True)  # noqa: S307 - our own fixed expressions
    art = essence.load(path)  # what the test reads: the file, not the object in memory
    files = answer_files(name, art)
    models = _write_answers(art, files)
    est = estimate_from_files(art, files)
    est.to_csv(OUT / f"{name}.estimates.csv", index=False)
    written = [path, *files, OUT / f"{name}.estimates.csv"]
    raw = json.loads(path.read_text())
    return {"kind": kind, "made_by": call, "schema": raw["schema"], "schema_version": raw["schema_version"],
            "essence_version": raw["essence_version"], "models": models,
            "answers": [f.name for f in files], "sha256": {f.name: sha256(f) for f in written}}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("names", nargs="*", help=f"fixtures to write (default: all of {', '.join(FIXTURES)})")
    p.add_argument("--force", action="store_true", help="replace committed fixtures (a deliberate act)")
    args = p.parse_args(argv)
    unknown = sorted(set(args.names) - set(FIXTURES))
    if unknown:
        p.error(f"unknown fixture(s) {unknown}; known: {', '.join(FIXTURES)}")
    OUT.mkdir(parents=True, exist_ok=True)
    manifest_path = OUT / "MANIFEST.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    for name in args.names or list(FIXTURES):
        manifest[name] = make(name, args.force)
        print(f"{name}: {', '.join(sorted(manifest[name]['sha256']))}")
    manifest = {n: manifest[n] for n in FIXTURES if n in manifest}
    manifest_path.write_text(json.dumps(manifest, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    from essence.data.pinning import ensure

    ensure()  # the same numbers on any machine (essence/data/pinning.py)
    sys.exit(main())
