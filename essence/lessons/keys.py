"""Key numbers a notebook reports for the tests: ``key("name", value)`` returns ``value`` unchanged and, when
``$ESSENCE_KEY_NUMBERS`` names a JSON file (``scripts/reproduce.py`` sets one per notebook under
``build/keys/``), records it there. ``tests/test_notebooks.py`` checks every number against the range its
notebook's ``tests/notebook_keys/NN.json`` gives (a broken method moves it out), so a quick build checks more
than "no error cell"."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

__all__ = ["key", "ENV"]

ENV = "ESSENCE_KEY_NUMBERS"


def key(name: str, value):
    """Record the finite number ``value`` (int or float) under ``name`` and return it; without
    ``$ESSENCE_KEY_NUMBERS`` only returns it. ValueError on a name recorded twice or a value that is not a
    finite number (a key number that is NaN is a broken run)."""
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
