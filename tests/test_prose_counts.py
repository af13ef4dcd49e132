"""Counts typed in the notebooks' prose agree with the data.

A number written in a Markdown cell before "models", "systems", "items", "problems" or "questions"
(up to two words between, e.g. "44 training systems", "3,469 models", "245 pool items"), or as
"N-dimensional" (a profile over N models), must be a count
the data give: a dataset's models, a side of its model splits (training, validation, test, and their
unions, seeds 0-4) or its items, or a number of the notebook's own code or displayed by it (a budget k, a window,
a table's cell). A count that is none of these is a typed number the run does not back; state it from the run
instead.

The committed outputs must also read the same on every machine: generated Markdown states no wall-clock
duration ("24.2 ms", "58.8 s") and no displayed table has a column of seconds or of timing ratios. Even a
ratio of two timings rounded to a cost class ("~1×" against "2-10×" random's time) moved between two runs
of the same notebook on one machine under different loads; count the work instead (subsets scored, fits).
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
COUNT = re.compile(r"(?<![\w.,])(\d{1,3}(?:,\d{3})+|\d+)(?:\s+(?:[A-Za-z-]+\s+){0,2}?(models|systems|items|problems|questions)\b"
                   r"|-(dimensional))")


@lru_cache(maxsize=1)
def data_counts() -> tuple[frozenset, frozenset]:
    """(model counts, item counts) the shipped data give."""
    from essence.data import DATASETS, load, split_models

    models, items = set(), set()
    for name in DATASETS:
        r = load(name)
        models.add(r.n_models)
        items.add(r.n_items)
        for seed in range(5):
            s = split_models(r, seed=seed)
            tr, va, te = len(s.train), len(s.val), len(s.test)
            models.update({tr, va, te, va + te, tr + va})
    return frozenset(models), frozenset(items)


def code_literals(cells) -> set[int]:
    """Whole numbers in the notebook's code and in what its code cells display (a table the prose reads)."""
    parts = []
    for c in cells:
        if c["cell_type"] != "code":
            continue
        parts.append("".join(c["source"]))
        for o in c.get("outputs", []):
            parts.append("".join(o.get("text", "")))
            data = o.get("data", {})
            parts.append("".join(data.get("text/plain", "")) + "".join(data.get("text/markdown", "")))
    src = "\n".join(parts)
    return {int(x.replace(",", "")) for x in re.findall(r"(?<![\w.])\d{1,3}(?:,\d{3})+(?![\w.])|(?<![\w.])\d+(?![\w.])", src)}


def typed_counts(cells):
    """``(cell index, number, noun, context)`` for every count stated in a Markdown cell."""
    for i, c in enumerate(cells):
        if c["cell_type"] != "markdown":
            continue
        text = "".join(c["source"])
        for m in COUNT.finditer(text):
            if re.search(r"(?:notebooks?|cell|section|step)\s+$", text[max(0, m.start() - 12):m.start()], re.I):
                continue  # "notebook 13 on models" names a notebook, not a count
            noun = m.group(2) or "models"  # "43-dimensional": a profile over models
            yield i, int(m.group(1).replace(",", "")), noun, text[max(0, m.start() - 40):m.end()]


def wrong_counts(cells) -> list[str]:
    models, items = data_counts()
    literals = code_literals(cells)
    bad = []
    for i, n, noun, ctx in typed_counts(cells):
        allowed = (items if noun in ("items", "problems", "questions") else models) | literals
        if n not in allowed:
            bad.append(f"cell {i}: {n} {noun} ({' '.join(ctx.split())!r})")
    return bad


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_counts_in_prose_match_the_data(nb):
    bad = wrong_counts(json.loads(nb.read_text())["cells"])
    assert not bad, f"{nb.name}: counts the data do not give:\n" + "\n".join(bad)


def test_a_planted_wrong_count_is_caught():
    models, _ = data_counts()
    wrong = max(models) + 7
    cells = [{"cell_type": "markdown", "source": [f"AlpacaEval 2 has {wrong:,} systems and 805 items."]},
             {"cell_type": "code", "source": ["k = 50"]}]
    assert wrong_counts(cells) == [f"cell 0: {wrong} systems ('AlpacaEval 2 has {wrong:,} systems')"]
    cells[0]["source"] = ["AlpacaEval 2 has 55 systems, 43 training systems and 805 items."]
    assert wrong_counts(cells) == []


# ----------------------------------------------------------------------------------------------
# Generated prose and tables must read the same on every machine: no wall-clock durations
# ----------------------------------------------------------------------------------------------
DURATION = re.compile(r"(?<![\w.])\d+(?:\.\d+)?\s?(?:ms|s|secs?|seconds?|minutes?|min|hours?|h)\b(?![-\w])")
SECONDS_HEADER = re.compile(r"<th[^>]*>[^<]*\b(?:seconds?|time per run)\b[^<]*</th>", re.IGNORECASE)
TIMING_RATIO = re.compile(r"(?:time per run|'s time\b|times (?:as (?:much|long)|cheaper|faster|slower)\b)", re.IGNORECASE)


def machine_timings(cells) -> list[str]:
    """``"cell i: ..."`` for every duration in a cell's generated Markdown and every table column of seconds.

    Durations in the data itself (e.g. an item's text in a displayed table) are not outputs of the run's
    clock, so only Markdown outputs (the generated prose) and HTML table headers are read.
    """
    bad = []
    for i, c in enumerate(cells):
        if c["cell_type"] != "code":
            continue
        for out in c.get("outputs", []):
            data = out.get("data", {})
            md = "".join(data.get("text/markdown", ""))
            bad += [f"cell {i}: {md[max(0, m.start() - 40):m.end()]!r}" for m in DURATION.finditer(md)]
            bad += [f"cell {i}: timing ratio {md[max(0, m.start() - 40):m.end()]!r}" for m in TIMING_RATIO.finditer(md)]
            html = "".join(data.get("text/html", ""))
            bad += [f"cell {i}: table column {m.group(0)!r}" for m in SECONDS_HEADER.finditer(html)]
    return bad


#: notebooks whose source no longer prints seconds but whose committed outputs predate that change: the
#: sweep behind 08 must be recomputed (main's method changes make its cache stale). strict: once 08 is
#: re-executed the test passes, the xfail turns into a failure, and this entry must go.
AWAITING_REEXECUTION: set[str] = set()  # notebooks whose committed outputs predate a source change


@pytest.mark.parametrize("nb", [pytest.param(p, marks=pytest.mark.xfail(
    strict=True, reason="outputs predate the source: re-execute with scripts/reproduce.py --only 08"))
    if p.stem in AWAITING_REEXECUTION else p for p in NOTEBOOKS], ids=lambda p: p.stem)
def test_outputs_state_no_machine_timings(nb):
    bad = machine_timings(json.loads(nb.read_text())["cells"])
    assert not bad, (f"{nb.name}: wall-clock times or timing ratios in outputs (they differ between machines "
                     "and loads; count the work instead):\n" + "\n".join(bad))


def test_a_planted_timing_is_caught():
    md = {"output_type": "display_data", "metadata": {},
          "data": {"text/markdown": ["Scoring took **24.2 ms** per generation, 58.8 s in all."]}}
    html = {"output_type": "execute_result", "metadata": {}, "execution_count": 1,
            "data": {"text/html": ["<table><tr><th>k = 25: seconds per run</th></tr></table>"]}}
    cells = [{"cell_type": "code", "source": [], "outputs": [md, html]}]
    assert len(machine_timings(cells)) == 3
    md["data"]["text/markdown"] = ["One GAM per candidate costs over 1,000 times as much; Random ~1× random's time."]
    html["data"]["text/html"] = ["<table><tr><th>k = 25: time per run vs neither</th></tr></table>"]
    assert len(machine_timings(cells)) == 3  # a timing ratio, even as a power of ten or a class, moves with the load
    md["data"]["text/markdown"] = ["Refinement scores 4.8 times as many subsets as the GA and adds 6 EBM fits."]
    html["data"]["text/html"] = ["<table><tr><th>subsets scored (GA)</th></tr></table>"]
    assert machine_timings(cells) == []
