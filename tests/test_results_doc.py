"""The README's and docs/results.md's numbers are generated from results/ and cannot drift from it; no commit hash,
issue number or timing history in the README, docs/ or docstrings."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pandas as pd

from script_loader import load_script

ROOT = Path(__file__).resolve().parents[1]
rd = load_script("scripts/results_doc.py", "results_doc")


def test_readme_and_docs_match_the_results_tables():
    assert rd.main(["--check"]) == 0, "run .venv/bin/python scripts/results_doc.py"


def test_every_results_table_has_its_metadata_and_command():
    """Every table shown has its metadata and a command that exists; a CSV without metadata holds the raw runs
    behind a shown table (``NAME_runs.csv``)."""
    for csv in sorted((ROOT / "results").glob("*.csv")):
        if not csv.with_suffix(".json").exists():
            assert csv.stem.endswith("_runs"), f"{csv.name}: no {csv.stem}.json (title, command, caption, order)"
            continue
        meta = json.loads(csv.with_suffix(".json").read_text())
        assert {"title", "command", "caption", "order"} <= set(meta), csv.name
        script = next(w for w in meta["command"].split() if w.endswith(".py"))
        assert (ROOT / script).exists(), f"{csv.name}: its command runs {script}, which does not exist"


def test_a_changed_number_in_a_readme_block_is_caught():
    text = (ROOT / "README.md").read_text()
    blocks = list(rd.BLOCK.finditer(text))
    assert blocks, "the README shows no generated results table"
    m = blocks[0]
    body = m.group(3)
    digit = re.search(r"\d", body.split("\n", 3)[-1])  # a digit inside the table, past its title
    assert digit is not None
    changed = body.replace(digit.group(0), str((int(digit.group(0)) + 1) % 10), 1)
    planted = text[: m.start(3)] + changed + text[m.end(3):]
    assert rd.readme_text(planted) != planted  # regenerating restores the table's value
    assert rd.readme_text(text) == text


def test_render_shows_every_row_of_the_csv(tmp_path, monkeypatch):
    (tmp_path / "t.csv").write_text("a,b\nx,1.23456\ny,2\n")
    (tmp_path / "t.json").write_text(json.dumps({"title": "T", "command": "cmd", "caption": "C", "order": 1}))
    monkeypatch.setattr(rd, "RESULTS", tmp_path)
    out = rd.render("t")
    assert "| x | 1.235 |" in out and "| y | 2 |" in out and "Regenerate: `cmd`." in out
    assert len(pd.read_csv(tmp_path / "t.csv")) == 2


_HASH = re.compile(r"\b(?:of|at|commit) [0-9a-f]{7,40}\b")
_ISSUE = re.compile(r"\bissue #?\d+\b", re.I)


def _docstrings(path: Path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc:
                yield doc


def test_no_commit_hash_or_issue_number_in_readme_docs_or_docstrings():
    texts = {p: p.read_text() for p in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]}
    for p in sorted((ROOT / "essence").rglob("*.py")):
        texts[p] = "\n".join(_docstrings(p))
    bad = [f"{p.relative_to(ROOT)}: {m.group(0)!r}" for p, t in texts.items()
           for rx in (_HASH, _ISSUE) for m in rx.finditer(t)]
    assert bad == []


def test_the_readme_is_a_front_door():
    assert len((ROOT / "README.md").read_text().splitlines()) <= 250
