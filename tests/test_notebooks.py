"""Every notebook executes headlessly with quick parameters (papermill) and renders to HTML, with no error cell."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


@pytest.mark.slow
@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs_quick_without_error(quick_build, nb):
    build, proc = quick_build
    executed = build / "notebooks" / nb.name
    assert executed.exists(), proc.stderr[-3000:]
    cells = json.loads(executed.read_text())["cells"]
    errors = [o for c in cells if c["cell_type"] == "code" for o in c.get("outputs", []) if o["output_type"] == "error"]
    assert not errors, f"{nb.name}: {errors[0]['ename']}: {errors[0]['evalue']}"
    assert (build / "html" / f"{nb.stem}.html").exists()


@pytest.mark.slow
@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_key_numbers_lie_in_their_ranges(quick_build, nb):
    """Each notebook records its key numbers (essence.lessons.keys.key) and tests/notebook_keys/NN.json gives the
    range a working method keeps them in on the quick run; a number missing or outside fails."""
    build, proc = quick_build
    ranges = json.loads((ROOT / "tests" / "notebook_keys" / f"{nb.stem}.json").read_text())
    assert ranges, f"{nb.stem}: give at least one key number a range"
    got_path = build / "keys" / f"{nb.stem}.json"
    got = json.loads(got_path.read_text()) if got_path.exists() else {}
    for name, (lo, hi) in ranges.items():
        assert name in got, f"{nb.stem}: key number {name!r} was not recorded (recorded: {sorted(got)})"
        assert lo <= got[name] <= hi, f"{nb.stem}: {name} = {got[name]} outside [{lo}, {hi}]"


def test_every_notebook_has_key_number_ranges():
    for nb in NOTEBOOKS:
        path = ROOT / "tests" / "notebook_keys" / f"{nb.stem}.json"
        assert path.is_file(), f"{nb.stem}: add {path.relative_to(ROOT)} with the ranges of its key numbers"


@pytest.mark.slow
def test_reproduce_exit_status_and_index(quick_build):
    build, proc = quick_build
    assert proc.returncode == 0, proc.stderr[-3000:]
    index = (build / "html" / "index.html").read_text()
    for nb in NOTEBOOKS:
        assert f'href="{nb.stem}.html"' in index


def test_every_notebook_has_a_quick_parameter():
    for nb in NOTEBOOKS:
        cells = json.loads(nb.read_text())["cells"]
        params = [c for c in cells if "parameters" in c.get("metadata", {}).get("tags", [])]
        assert len(params) == 1, f"{nb.name}: needs exactly one cell tagged 'parameters'"
        src = "".join(params[0]["source"])
        assert "quick" in src and "figures_dir" in src, nb.name


def test_every_numbered_notebook_ends_with_exercises():
    for nb in NOTEBOOKS:
        cells = json.loads(nb.read_text())["cells"]
        last = "".join(cells[-1]["source"])
        assert cells[-1]["cell_type"] == "markdown" and last.startswith("## Exercises"), nb.name
        assert "\n1. " in last, nb.name  # at least one numbered task


def test_the_glossary_is_linked_from_the_first_notebook():
    first = "".join("".join(c["source"]) for c in json.loads(NOTEBOOKS[0].read_text())["cells"])
    assert "../docs/glossary.md" in first and (ROOT / "docs" / "glossary.md").is_file()
