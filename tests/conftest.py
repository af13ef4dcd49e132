"""Shared fixtures: small slices of the real data (never simulated where real data exists)."""

from __future__ import annotations

import os

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
