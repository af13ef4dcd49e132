"""Every ``:mod:``, ``:func:``, ``:class:``, ``:data:``, ``:meth:`` and ``:attr:`` reference in the package's
docstrings names something that exists: qualified references (``essence.x.y``) are imported, unqualified ones
are looked up in the module that writes them (its globals, then its classes' members and instance attributes)."""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "essence"
ROLE = re.compile(r":(mod|func|class|data|meth|attr):`~?\.?([A-Za-z_][\w.]*)`")


def modules() -> list[str]:
    out = []
    for f in sorted(ROOT.rglob("*.py")):
        parts = list(f.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out.append(".".join(parts))
    return out


def _getattr_path(obj, path: list[str]) -> bool:
    for p in path:
        if isinstance(obj, type) and p in _instance_attributes(obj):
            return True
        if not hasattr(obj, p):
            return False
        obj = getattr(obj, p)
    return True


def _instance_attributes(cls: type) -> set[str]:
    """Names a class's instances get: dataclass fields, annotations and ``self.NAME = ...`` in its methods."""
    names = set(getattr(cls, "__dataclass_fields__", {})) | set(getattr(cls, "__annotations__", {}))
    for klass in cls.__mro__:
        try:
            tree = ast.parse(inspect.getsource(klass).lstrip()) if klass.__module__.startswith("essence") else None
        except (OSError, TypeError, IndentationError):
            tree = None
        for node in ast.walk(tree) if tree else ():
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self" \
                    and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
    return names


def resolves(module, target: str) -> bool:
    if target.startswith("essence"):
        parts = target.split(".")
        for i in range(len(parts), 0, -1):
            try:
                obj = importlib.import_module(".".join(parts[:i]))
            except ImportError:
                continue
            return _getattr_path(obj, parts[i:])
        return False
    parts = target.split(".")
    if _getattr_path(module, parts):
        return True
    classes = [c for c in vars(module).values() if isinstance(c, type) and c.__module__ == module.__name__]
    return any(_getattr_path(c, parts) for c in classes)


def references():
    for name in modules():
        text = (ROOT.parent / (name.replace(".", "/") + ".py")).read_text()
        if not (ROOT.parent / (name.replace(".", "/") + ".py")).exists():
            text = (ROOT.parent / name.replace(".", "/") / "__init__.py").read_text()
        for m in ROLE.finditer(text):
            yield name, m.group(1), m.group(2)


def _source(name: str) -> Path:
    f = ROOT.parent / (name.replace(".", "/") + ".py")
    return f if f.exists() else ROOT.parent / name.replace(".", "/") / "__init__.py"


def test_every_docstring_reference_resolves():
    bad = []
    for name in modules():
        module = importlib.import_module(name)
        for m in ROLE.finditer(_source(name).read_text()):
            if not resolves(module, m.group(2)):
                bad.append(f"{name}: :{m.group(1)}:`{m.group(2)}`")
    assert bad == []


@pytest.mark.parametrize("ref, ok", [("essence.reconstructors.simple.GAMReconstructor", True),
                                     ("essence.reconstructors.simple.NoSuchThing", False),
                                     ("essence.no_such_room.thing", False)])
def test_the_check_tells_a_missing_name(ref, ok):
    import essence.methods.base as module

    assert resolves(module, ref) is ok
