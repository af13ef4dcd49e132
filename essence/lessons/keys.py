"""Key numbers a notebook reports for the tests: ``key("name", value)`` returns ``value`` and, when
``$ESSENCE_KEY_NUMBERS`` names a JSON file (``scripts/reproduce.py`` sets one per notebook), records it there for
``tests/test_notebooks.py`` to check against ``tests/notebook_keys/NN.json``."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

__all__ = ["key", "below", "ENV"]

ENV = "ESSENCE_KEY_NUMBERS"


def key(name: str, value):
    """Record the finite number ``value`` under ``name`` (when ``$ESSENCE_KEY_NUMBERS`` is set) and return it;
    ValueError on a name recorded twice or a value that is not finite."""
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"key number {name!r}: {value!r} is not finite")
    path = os.environ.get(ENV)
    if path:
        p = Path(path)
        got = json.loads(p.read_text()) if p.exists() else {}
        if name in got:
            raise ValueError(f"key number {name!r} recorded twice; give each number its own name")
        got[name] = v
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_suffix(".tmp")
        tmp.write_text(json.dumps(got, indent=1, sort_keys=True))
        tmp.replace(p)
    return value


def below(value, bound: float) -> str:
    """How a difference that only proves two computations agree is shown: ``"below 1e-06"`` when ``|value| <
    bound`` (the same text on every machine, whatever its last bits), else ``"3.2e-05: NOT below 1e-06"``."""
    v = abs(float(value))
    return f"below {bound:.0e}" if v < bound else f"{v:.1e}: NOT below {bound:.0e}"
