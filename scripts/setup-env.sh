#!/usr/bin/env bash
# Create or update .venv (Python 3.11) with the pinned dependencies.
# Idempotent: a second run reuses .venv and reinstalls only when the dependency lists changed.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3.11}
VENV=.venv

if ! command -v "$PYTHON" >/dev/null 2>&1; then
    echo "error: $PYTHON not found; install Python 3.11 or run: make PYTHON=/path/to/python3.11 ..." >&2
    exit 2
fi

# The dependency lists only (not the whole pyproject.toml): editing code or docs never reinstalls.
deps_hash=$(
    {
        "$PYTHON" - <<'PY'
import tomllib
p = tomllib.load(open("pyproject.toml", "rb"))["project"]
print(p["dependencies"], p.get("optional-dependencies"), p.get("requires-python"))
PY
        cat requirements/constraints.txt requirements/nodeps.txt
    } | sha256sum | cut -d' ' -f1
)

# the notebooks' kernel (papermill's and JupyterLab's) runs with the CPU code paths pinned (essence/data/pinning.py)
pin_kernel() {
    grep -q ESSENCE_PINNED "$VENV/share/jupyter/kernels/python3/kernel.json" 2>/dev/null ||
        "$VENV/bin/python" -m essence.data.pinning kernelspec >/dev/null
}

if [ -x "$VENV/bin/python" ] && [ "$(cat "$VENV/.deps-hash" 2>/dev/null)" = "$deps_hash" ]; then
    pin_kernel
    echo "environment up to date ($VENV)"
    exit 0
fi

[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
rm -f "$VENV/.deps-hash"
"$VENV/bin/python" -m pip install --quiet --upgrade pip
# torch first and alone, pinned: an unpinned torch pulls a multi-GB CUDA build.
"$VENV/bin/pip" install --quiet torch==2.13.0
"$VENV/bin/pip" install --quiet -c requirements/constraints.txt -e ".[test]"
"$VENV/bin/pip" install --quiet --no-deps -r requirements/nodeps.txt
pin_kernel
echo "$deps_hash" > "$VENV/.deps-hash"
echo "environment ready ($VENV)"
