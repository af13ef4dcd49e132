#!/usr/bin/env python
"""Time the README's two commands from a fresh clone: results/commands.csv and results/notebooks.csv (+ .json).

    python scripts/time_commands.py            # clone HEAD into a temporary folder, run both, record
    python scripts/time_commands.py --keep     # leave the clone for inspection

The clone gets its own empty caches (``$ESSENCE_CACHE`` unset, so ``.cache/`` of the clone) and reuses nothing
of this checkout but the pip download cache. Each command's wall time is recorded with its exit status; the
tables are written only when all succeed. The fast loop (``pytest -m "not slow"``) is timed in the same clone.
``make reproduce`` runs every notebook from empty caches, so its per-notebook times (``build/notebook_times.csv``
of the clone) are cold times; ``git status`` of the clone afterwards is printed (clean: the committed notebooks
and figures are what a rerun writes).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = (("make reproduce", ["make", "reproduce"]), ("make test", ["make", "test"]),
            ("fast loop", [".venv/bin/python", "-m", "pytest", "-q", "-m", "not slow"]))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--keep", action="store_true", help="keep the temporary clone")
    args = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="essence-fresh-"))
    clone = tmp / "essence"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    shared = ROOT.parent / "shared"
    if shared.exists() and not (tmp / "shared").exists():
        (tmp / "shared").symlink_to(shared)  # the data the Makefile finds at ../shared/data
    env = {k: v for k, v in os.environ.items() if k not in ("ESSENCE_CACHE", "ESSENCE_MODELS", "VIRTUAL_ENV")}
    rows = []
    for label, cmd in COMMANDS:
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, cwd=clone, env=env)
        secs = time.perf_counter() - t0
        print(f"[time_commands] {label}: exit {proc.returncode} in {secs / 60:.1f} min", flush=True)
        if proc.returncode:
            print(f"[time_commands] {label} failed; nothing recorded (clone: {clone})", file=sys.stderr)
            return 1
        rows.append(f"{label},{secs / 60:.1f}\n")
        if label == "make reproduce":
            status = subprocess.run(["git", "status", "--porcelain"], cwd=clone, capture_output=True, text=True).stdout
            print(f"[time_commands] git status after make reproduce: {'clean' if not status else chr(10) + status}")
            nb = pd.read_csv(clone / "build" / "notebook_times.csv")
    (ROOT / "results" / "commands.csv").write_text("command,minutes from a fresh clone\n" + "".join(rows))
    meta = {"order": 0, "title": "The two commands, timed from a fresh clone",
            "command": ".venv/bin/python scripts/time_commands.py",
            "caption": f"Wall minutes on {os.cpu_count()} cores ({platform.machine()}), one after the other in one "
                       "fresh clone: make reproduce creates the environment and executes every notebook; make test "
                       "reuses the environment; the fast loop is pytest -m \"not slow\"."}
    (ROOT / "results" / "commands.json").write_text(json.dumps(meta, indent=1) + "\n")
    table = pd.DataFrame({"notebook": [f"[{n}](notebooks/{n}.ipynb)" for n in nb["notebook"]], "teaches": nb["title"],
                          "cold minutes": (nb["seconds"] / 60).round(1)})
    table.to_csv(ROOT / "results" / "notebooks.csv", index=False)
    meta = {"order": 1, "title": "The notebooks and their cold rerun times",
            "command": ".venv/bin/python scripts/time_commands.py",
            "caption": f"Wall minutes each notebook took inside make reproduce from a fresh clone (empty caches; the "
                       f"committed item features are data), {os.cpu_count()} cores."}
    (ROOT / "results" / "notebooks.json").write_text(json.dumps(meta, indent=1) + "\n")
    if not args.keep:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    from essence.data.pinning import ensure

    ensure()  # the same numbers on any machine (essence/data/pinning.py)
    sys.exit(main())
