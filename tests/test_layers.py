"""The package's layers point one way: no import cycle and no upward import, imports inside functions included.

Every ``essence`` module is parsed (not imported); each ``import`` / ``from ... import`` anywhere in its
tree (module level, functions, methods, ``if TYPE_CHECKING`` blocks) is resolved, relative ones included,
to the ``essence`` modules it names. A module may import a module of a *lower* layer, or one of its own
group (the files of one package, e.g. ``essence.lessons.plots.*``). The layers are read from docs/architecture.md, so
the picture and the check cannot drift apart.
"""

from __future__ import annotations

import ast
import importlib.util
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "essence"

DOC = ROOT.parent / "docs" / "architecture.md"


def documented_layers(doc: Path = DOC) -> list[list[str]]:
    """The layer table of docs/architecture.md (the code block after ``<!-- layers``): lowest first, one line per
    layer, ``N  room [room ...]  what it holds``. An entry is a module prefix (the module and everything under
    it is one group); an entry ending in ``.*`` makes every direct child its own group (method modules must not
    import each other). Within a layer, different groups must not import each other either."""
    text = doc.read_text()
    block = text[text.index("<!-- layers"):].split("```")[1]
    layers = []
    for line in block.strip().splitlines():
        number, *words = line.split()
        assert int(number) == len(layers) + 1, f"docs/architecture.md: layer {number} out of order"
        layers.append([w for w in words if w.startswith("essence.")])
    return layers


#: Lowest layer first, as docs/architecture.md draws them.
LAYERS: list[list[str]] = documented_layers()


def test_the_documented_layers_cover_the_rooms():
    rooms = {p.stem if p.suffix == ".py" else p.name for p in ROOT.iterdir()
             if p.name != "__pycache__" and (p.suffix == ".py" or p.is_dir())}
    assert len(rooms) <= 12, sorted(rooms)
    named = {e.split(".")[1] for layer in LAYERS for e in layer}
    assert rooms <= named, sorted(rooms - named)


def module_files(root: Path = ROOT) -> dict[str, Path]:
    """``{module name: source file}`` for every ``.py`` under ``root`` (packages by their ``__init__``)."""
    out = {}
    for f in sorted(root.rglob("*.py")):
        parts = list(f.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = f
    return out


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """The ``essence`` modules (members of ``known``) that ``path`` imports anywhere in its tree."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                found.add(a.name)
                found.update(a.name.rsplit(".", i)[0] for i in range(1, a.name.count(".") + 1))
        elif isinstance(node, ast.ImportFrom):
            mod = importlib.util.resolve_name("." * node.level + (node.module or ""), package) if node.level \
                else node.module
            subs = {f"{mod}.{a.name}" for a in node.names} & known  # `from pkg import submodule`
            found.update(subs)
            if len(subs) < len(node.names):  # something of the package itself (not only its submodules)
                found.add(mod)
    return {m for m in found if m in known and m != name}


def layer_of(name: str) -> tuple[int, str]:
    """``(layer index, group)`` of a module; KeyError when no entry of :data:`LAYERS` covers it."""
    best = None
    for i, layer in enumerate(LAYERS):
        for entry in layer:
            if entry.endswith(".__init__"):
                pkg = entry[: -len(".__init__")]
                if name == pkg:
                    cand = (len(pkg) + 1, i, entry)
                else:
                    continue
            elif entry.endswith(".*"):
                pkg = entry[:-2]
                if name.startswith(pkg + "."):
                    child = pkg + "." + name[len(pkg) + 1:].split(".")[0]
                    cand = (len(pkg), i, child)
                else:
                    continue
            elif name == entry or name.startswith(entry + "."):
                cand = (len(entry) + 2, i, entry)
            else:
                continue
            if best is None or cand[0] > best[0]:
                best = cand
    if best is None:
        raise KeyError(name)
    return best[1], best[2]


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    files = module_files(root)
    known = set(files)
    return {name: imports_of(name, f, known) for name, f in files.items()}


def violations(graph: dict[str, set[str]]) -> list[str]:
    """Every import that is not to a lower layer or the importer's own group, and every module no layer covers."""
    bad = []
    for name, deps in sorted(graph.items()):
        try:
            li, gi = layer_of(name)
        except KeyError:
            bad.append(f"{name}: in no layer of tests/test_layers.py LAYERS; add it")
            continue
        for d in sorted(deps):
            ld, gd = layer_of(d)
            if ld > li:
                bad.append(f"{name} (layer {li}) imports {d} (layer {ld}): an upward import")
            elif ld == li and gd != gi:
                bad.append(f"{name} imports {d}: two groups of the same layer ({gi}, {gd})")
    return bad


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a list of modules (first == last), or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(n):
        state[n] = 1
        stack.append(n)
        for d in sorted(graph.get(n, ())):
            if state.get(d) == 1:
                return stack[stack.index(d):] + [d]
            if d not in state:
                found = visit(d)
                if found:
                    return found
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state:
            found = visit(n)
            if found:
                return found
    return None


def test_every_module_is_in_a_layer_and_imports_point_down():
    graph = import_graph()
    assert len(graph) > 30  # the walk found the package
    assert violations(graph) == []


def test_no_import_cycle():
    assert find_cycle(import_graph()) is None


def test_function_level_imports_are_seen():
    graph = import_graph()
    # essence.lessons.stages imports essence.sweep only inside functions; the walk must see it
    assert "essence.sweep" in graph["essence.lessons.stages"]
    assert "essence.search.genetic" in graph["essence.methods.essence"]


@pytest.mark.parametrize("planted, expected", [
    # an upward import hidden inside a function, as the reconstructor registry once had
    ("essence/reconstructors/simple.py", "essence.reconstructors.simple (layer 2) imports essence.methods"),
    # one method module importing another (same layer, different groups)
    ("essence/methods/ppl.py", "essence.methods.ppl imports essence.methods.herding"),
])
def test_the_check_fails_on_a_planted_import(tmp_path, planted, expected):
    copy = tmp_path / "essence"
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns("__pycache__"))
    target = tmp_path / planted
    line = ("\n\ndef _planted():\n    from ..methods import METHODS\n    return METHODS\n"
            if planted.endswith("simple.py") else
            "\n\ndef _planted():\n    from .herding import kernel_herding\n    return kernel_herding\n")
    target.write_text(target.read_text() + line)
    found = violations(import_graph(copy))
    assert any(v.startswith(expected) for v in found), found


def test_a_planted_cycle_is_found(tmp_path):
    copy = tmp_path / "essence"
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns("__pycache__"))
    tables = copy / "reconstructors" / "tables.py"
    tables.write_text(tables.read_text() + "\n\ndef _p():\n    from . import intervals\n")
    cycle = find_cycle(import_graph(copy))
    assert cycle is not None and "essence.reconstructors.tables" in cycle and "essence.reconstructors.intervals" in cycle
