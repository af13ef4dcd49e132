"""What makes a cached run stale: a hash of a method's source (its module and every ``essence`` module it
imports, transitively, found by reading the files) and of the shared core that turns items into figures."""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib.util
import os
from pathlib import Path

from ..data.pinning import MARK
from ..methods import get_method

__all__ = ["code_version", "module_version"]

#: the ``essence`` package folder (this file is essence/sweep/signatures.py)
_PACKAGE = Path(__file__).resolve().parents[1]

#: modules whose changes are reported by the core-code note instead of making cached runs stale
_CORE_MODULES = frozenset({"essence", "essence.data", "essence.artifact.compressed", "essence.reconstructors.simple",
                           "essence.reconstructors.intervals", "essence.data.metrics", "essence.methods",
                           "essence.methods.base", "essence.cli", "essence.sweep", "essence.reconstructors.tables",
                           "essence.data.errors", "essence.data.checks"})


def _module_file(name: str) -> Path | None:
    """Source file of an ``essence.*`` module, found without importing it; None if there is none."""
    parts = name.split(".")
    if parts[0] != "essence":
        return None
    base = _PACKAGE.joinpath(*parts[1:])
    for cand in ((base.with_suffix(".py"),) if len(parts) > 1 else ()) + (base / "__init__.py",):
        if cand.is_file():
            return cand
    return None


def _essence_imports(name: str, path: Path) -> set[str]:
    """``essence.*`` modules that a source file imports anywhere (including imports inside functions)."""
    try:
        tree = ast.parse(path.read_text())
    except (OSError, SyntaxError, UnicodeDecodeError):
        return set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            try:
                mod = (importlib.util.resolve_name("." * node.level + (node.module or ""), package)
                       if node.level else node.module)
            except (ImportError, ValueError):
                continue
            found.add(mod)
            found.update(f"{mod}.{a.name}" for a in node.names)  # `from pkg import submodule`
    return {m for m in found if m == "essence" or m.startswith("essence.")}


def _source_hash(module_name: str) -> str | None:
    """SHA-256 (16 hex) of a method's code: its module and every ``essence`` module it imports, transitively,
    except the shared core (:data:`_CORE_MODULES`). None when the module has no source file here."""
    if _module_file(module_name) is None:
        return None
    seen: set[str] = set()
    stack, files = [module_name], []
    while stack:
        m = stack.pop()
        if m in seen or (m in _CORE_MODULES and m != module_name):
            continue
        seen.add(m)
        f = _module_file(m)
        if f is None:
            continue
        files.append((m, f))
        stack.extend(_essence_imports(m, f))
        stack.extend(m.rsplit(".", i)[0] for i in range(1, m.count(".")))  # parent packages run too
    h = hashlib.sha256()
    for m, f in sorted(files):
        h.update(m.encode())
        try:
            h.update(f.read_bytes())
        except OSError:
            pass
    return h.hexdigest()[:16]


def _core_hash() -> str:
    """Hash of the shared code that turns chosen items into figures (the artifact, the reconstructors' contract,
    choice, forward pass and intervals, the metrics, the selectors' base), and of the CPU code paths the process
    runs (essence.data.pinning: a run made with other BLAS kernels may have chosen other items)."""
    h = hashlib.sha256(os.environ.get(MARK, "native").encode())
    for name in ("artifact/compressed.py", "reconstructors/base.py", "reconstructors/choose.py",
                 "reconstructors/forward.py", "reconstructors/simple.py", "reconstructors/tables.py",
                 "reconstructors/intervals.py", "data/metrics.py", "methods/base.py"):
        h.update((_PACKAGE / name).read_bytes())  # a file moved away fails here, not silently
    return h.hexdigest()[:16]


@functools.lru_cache(maxsize=None)
def code_version(method: str) -> str:
    """Hash of the code behind a run of ``method``: :func:`_source_hash` of its module and :func:`_core_hash`
    (a method that does not import: its name). Computed once per process."""
    try:
        mod = get_method(method).__module__
    except Exception:  # noqa: BLE001 - the run itself reports why the method cannot be made
        return f"{method}:unavailable:{_core_hash()}"
    return module_version(mod)


def module_version(module_name: str) -> str:
    """Hash of the code behind a module that is not a method (e.g. ``essence.artifact.adaptive``): as
    :func:`code_version`, from the module's own source and its ``essence`` imports, and the shared core."""
    return f"{_source_hash(module_name)}:{_core_hash()}"
