"""Shared fixtures: small slices of the real data (never simulated where real data exists)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("TQDM_DISABLE", "1")


@pytest.fixture(scope="session")
def gsm8k():
    from essence.data import load

    return load("gsm8k")


@pytest.fixture(scope="session")
def small(gsm8k):
    """A real slice: 600 gsm8k models (every 6th, keeps the score range) x the first 80 items."""
    return gsm8k.subset(models=np.arange(0, gsm8k.n_models, 6)[:600], items=np.arange(80))


@pytest.fixture(scope="session")
def alpaca():
    from essence.data import load

    return load("alpaca_eval2")


@pytest.fixture(scope="session")
def quick_build(tmp_path_factory):
    """Run scripts/reproduce.py --quick once for all notebooks into a temporary build folder.

    Returns ``(build_dir, completed_process)``; figures go to ``build_dir/quick-figures`` (never figures/).
    """
    root = Path(__file__).resolve().parents[1]
    build = tmp_path_factory.mktemp("build")
    proc = subprocess.run(
        [sys.executable, str(root / "scripts" / "reproduce.py"), "--quick", "--build", str(build)],
        capture_output=True, text=True, timeout=1200, cwd=root,
    )
    return build, proc
