"""The notebooks are committed executed, and their outputs read the same on every machine.

``make reproduce`` writes each executed notebook back into ``notebooks/`` (scripts/reproduce.py's
``clean_outputs``). This checks what is committed: every code cell ran (an execution count), the notebook
shows results, no cell failed, and no output names a machine (paths), a moment (timing metadata), a
memory address or a progress bar; each file stays under 2 MB.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from script_loader import load_script

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))

MACHINE_PATH = re.compile(r"(?<![\w.])(?:/work/|/home/|/root/|/tmp/|/Users/|/var/folders/|[A-Z]:\\\\)")
PROGRESS_BAR = re.compile(r"\d+%\|[^|\n]*\||\d+(?:\.\d+)?\s?(?:it|batch|run)s?/s\b|[█▏▎▍▌▋▊▉]")
ADDRESS = re.compile(r" at 0x[0-9a-fA-F]{6,}")


def output_texts(cell) -> list[str]:
    texts = []
    for out in cell.get("outputs", []):
        if "text" in out:
            texts.append("".join(out["text"]))
        for mime, value in out.get("data", {}).items():
            if mime.startswith("text/") or mime == "application/json":
                texts.append("".join(value) if isinstance(value, list) else str(value))
    return texts


def problems(nb: dict) -> list[str]:
    """What is wrong with one committed notebook (an empty list when nothing is)."""
    bad = []
    if "papermill" in nb.get("metadata", {}):
        bad.append("notebook metadata holds papermill's run record (paths, times)")
    code = [c for c in nb["cells"] if c["cell_type"] == "code" and "".join(c["source"]).strip()]
    if not any(c.get("outputs") for c in code):
        bad.append("no outputs: the notebook was committed without being executed")
    for i, c in enumerate(nb["cells"]):
        if c["cell_type"] != "code" or not "".join(c["source"]).strip():
            continue
        if c.get("execution_count") is None:
            bad.append(f"cell {i}: not executed")
        if "papermill" in c.get("metadata", {}) or "execution" in c.get("metadata", {}):
            bad.append(f"cell {i}: timing metadata")
        for out in c.get("outputs", []):
            if out.get("output_type") == "error":
                bad.append(f"cell {i}: error output {out.get('ename')}: {out.get('evalue')}")
            if out.get("output_type") == "stream" and out.get("name") == "stderr":
                bad.append(f"cell {i}: stderr stream (progress and warnings belong in the log)")
        for text in output_texts(c):
            for name, pat in (("a machine path", MACHINE_PATH), ("a progress bar", PROGRESS_BAR),
                              ("a memory address", ADDRESS)):
                m = pat.search(text)
                if m:
                    bad.append(f"cell {i}: {name}: {text[max(0, m.start() - 30):m.end() + 30]!r}")
    return bad


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_committed_notebook_is_executed_and_machine_free(path):
    assert path.stat().st_size < 2 * 1024 * 1024, f"{path.name}: {path.stat().st_size} bytes (keep it under 2 MB)"
    bad = problems(json.loads(path.read_text()))
    assert not bad, f"{path.name}:\n" + "\n".join(bad[:10])


def test_the_check_catches_each_problem():
    ok_cell = {"cell_type": "code", "source": ["x = 1\nx"], "execution_count": 1, "metadata": {},
               "outputs": [{"output_type": "execute_result", "data": {"text/plain": ["1"]}, "metadata": {}}]}
    assert problems({"metadata": {}, "cells": [ok_cell]}) == []
    cases = {
        "not executed": {**ok_cell, "execution_count": None, "outputs": []},
        "error output": {**ok_cell, "outputs": [{"output_type": "error", "ename": "E", "evalue": "v"}]},
        "stderr": {**ok_cell, "outputs": [{"output_type": "stream", "name": "stderr", "text": "warn"}]},
        "machine path": {**ok_cell, "outputs": [{"output_type": "stream", "name": "stdout",
                                                "text": "saved /work/main/figures/x.png"}]},
        "progress bar": {**ok_cell, "outputs": [{"output_type": "stream", "name": "stdout",
                                                "text": " 45%|████      | 9/20 [00:03<00:04, 2.51it/s]"}]},
        "memory address": {**ok_cell, "outputs": [{"output_type": "execute_result", "metadata": {},
                                                  "data": {"text/plain": "<Foo object at 0x7f3a2b1c4d50>"}}]},
        "timing metadata": {**ok_cell, "metadata": {"papermill": {"duration": 1.2}}},
    }
    for what, cell in cases.items():
        found = problems({"metadata": {}, "cells": [cell]})
        assert any(what.split()[0] in p for p in found), (what, found)
    assert problems({"metadata": {}, "cells": [{**ok_cell, "outputs": []}]}) == [
        "no outputs: the notebook was committed without being executed"]


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_injected_parameters_cell_has_a_stable_id(nb):
    """papermill gives its injected cell a random id on every run; reproduce names it by its tag, so a
    second ``make reproduce`` does not rewrite every notebook."""
    cells = json.loads(nb.read_text())["cells"]
    injected = [c for c in cells if "injected-parameters" in c.get("metadata", {}).get("tags", [])]
    assert injected, f"{nb.name}: no injected-parameters cell (not executed by scripts/reproduce.py?)"
    assert [c.get("id") for c in injected] == ["injected-parameters"], (
        f"{nb.name}: the injected-parameters cell has id {injected[0].get('id')!r}; run scripts/reproduce.py")


def test_clean_outputs_names_the_injected_cell():
    import nbformat

    mod = load_script("scripts/reproduce.py")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("x = 1"), nbformat.v4.new_code_cell("quick = True")]
    nb.cells[1].metadata["tags"] = ["injected-parameters"]
    nb.cells[0].metadata["tags"] = []
    ids_before = nb.cells[1].id
    mod.clean_outputs(nb)
    assert nb.cells[1].id == "injected-parameters" != ids_before
    assert "tags" not in nb.cells[0].metadata


def stale_tables(nb: dict, results: Path = ROOT / "results") -> list[str]:
    """What a committed notebook shows from ``results/`` that is no longer the committed table: every file it read
    when ``make reproduce`` executed it is recorded with its hash (scripts/reproduce.py's ``record_results``)."""
    record = nb.get("metadata", {}).get("essence", {}).get("results")
    if record is None:
        return ["no record of the tables it read: it was not executed by scripts/reproduce.py with the current "
                "tables"]
    hash_of = load_script("scripts/reproduce.py").table_hash
    bad = []
    for name, recorded in sorted(record.items()):
        path = results / name
        if not path.is_file():
            bad.append(f"results/{name} (read when executed) no longer exists")
        elif hash_of(path) != recorded:
            bad.append(f"results/{name} changed after the notebook was executed: it shows the older table")
    return bad


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_committed_notebook_shows_the_current_tables(path):
    """A notebook that reads a table under results/ was executed against the table committed now, so every number
    it shows from that table is the table's current value (cheap: no rerun)."""
    bad = stale_tables(json.loads(path.read_text()))
    assert not bad, (f"{path.name}: " + "; ".join(bad) +
                     f". Rerun it: .venv/bin/python scripts/reproduce.py --only {path.stem[:2]}")


def test_the_staleness_check_catches_a_changed_or_missing_table(tmp_path):
    (tmp_path / "t.csv").write_text("a\n1\n")
    recorded = load_script("scripts/reproduce.py").table_hash(tmp_path / "t.csv")
    nb = {"metadata": {"essence": {"results": {"t.csv": recorded}}}, "cells": []}
    assert stale_tables(nb, tmp_path) == []
    (tmp_path / "t.csv").write_text("a\n2\n")
    assert "changed after" in stale_tables(nb, tmp_path)[0]
    (tmp_path / "t.csv").unlink()
    assert "no longer exists" in stale_tables(nb, tmp_path)[0]
    assert "no record" in stale_tables({"metadata": {}, "cells": []}, tmp_path)[0]


@pytest.mark.slow
def test_a_run_records_the_tables_the_kernel_opened(tmp_path):
    """The kernels' audit hook (scripts/reproduce.py's RESULTS_HOOK) logs the files opened under the results folder
    and nothing else; record_results writes their hashes into the executed notebook."""
    import nbformat

    mod = load_script("scripts/reproduce.py")
    results = tmp_path / "results"
    results.mkdir()
    (results / "t.csv").write_text("a\n1\n")
    (tmp_path / "other.csv").write_text("b\n")
    nb = nbformat.v4.new_notebook()
    read_both = f"open({str(results / 't.csv')!r}).read(); open({str(tmp_path / 'other.csv')!r}).read()"
    nb.cells = [nbformat.v4.new_code_cell(read_both)]
    src, out, log = tmp_path / "n.ipynb", tmp_path / "out.ipynb", tmp_path / "read.txt"
    nbformat.write(nb, str(src))
    import os

    env = {"IPYTHONDIR": str(mod.results_hook_dir(tmp_path)), "ESSENCE_RESULTS_DIR": str(results),
           "ESSENCE_RESULTS_READ": str(log)}
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        mod.run_notebook(src, out, {}, 120)
    finally:
        for k, v in old.items():
            os.environ.pop(k) if v is None else os.environ.__setitem__(k, v)
    assert log.read_text().split() == ["t.csv"]
    want = {"t.csv": mod.table_hash(results / "t.csv")}
    assert mod.record_results(out, log, results) == want
    assert nbformat.read(str(out), as_version=4).metadata["essence"]["results"] == want
