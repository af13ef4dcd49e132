"""Load a script of the repository (``benchmarks/*.py``, ``scripts/*.py``) or a generated file (a harness hook)
as a module, for the tests that call its functions. Not a test module (pytest collects ``test_*.py`` only)."""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def load_script(path: str | Path, name: str | None = None) -> ModuleType:
    """The module executed from ``path`` (relative to the repository root, or absolute). ``name`` defaults to
    the file's stem for a repository script and to a name unique to the path for a file elsewhere (so two
    generated hooks of the same file name in two folders stay apart)."""
    path = Path(path)
    if not path.is_absolute():
        path = ROOT / path
    if name is None:
        inside = path.resolve().is_relative_to(ROOT)
        name = path.stem if inside else f"{path.stem}_{hashlib.sha1(str(path).encode()).hexdigest()}"
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
