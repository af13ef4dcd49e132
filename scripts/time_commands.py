#!/usr/bin/env python
"""Time the README's two commands from a fresh clone and write results/commands.csv (+ .json).

    python scripts/time_commands.py            # clone HEAD into a temporary folder, run both, record
    python scripts/time_commands.py --keep     # leave the clone for inspection

The clone gets its own empty caches (``$ESSENCE_CACHE`` unset, so ``.cache/`` of the clone) and reuses nothing
of this checkout but the pip download cache. Each command's wall time is recorded with its exit status; the
table is written only when both succeed. The fast loop (``pytest -m "not slow"``) is timed in the same clone.
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
    (ROOT / "results" / "commands.csv").write_text("command,minutes from a fresh clone\n" + "".join(rows))
    meta = {"order": 0, "title": "The two commands, timed from a fresh clone",
            "command": ".venv/bin/python scripts/time_commands.py",
            "caption": f"Wall minutes on {os.cpu_count()} cores ({platform.machine()}), one after the other in one "
                       "fresh clone: make reproduce creates the environment and executes every notebook; make test "
                       "reuses the environment; the fast loop is pytest -m \"not slow\"."}
    (ROOT / "results" / "commands.json").write_text(json.dumps(meta, indent=1) + "\n")
    if not args.keep:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
