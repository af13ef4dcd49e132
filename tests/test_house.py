"""House rules no other test guards: the package's size.

``essence/`` should hold at most :data:`MAX_PACKAGE_LINES` lines of Python, counted as
``find essence -name '*.py' | xargs cat | wc -l`` counts them. It holds more today: that test is a strict xfail (it
fails the suite once the package fits, so the mark must go then), and :data:`NO_GROWTH_LINES` is the ceiling that
holds meanwhile. Over a bound, cut duplicated logic, dead code or docstrings that repeat another one
(docs/architecture.md); do not move code out of the package.
"""

from __future__ import annotations

from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "essence"
#: the most lines of Python ``essence/`` may hold
MAX_PACKAGE_LINES = 15_000
#: the ceiling while the package is above the bound: no growth beyond its size today (about 16,300 lines)
NO_GROWTH_LINES = 16_500


def package_lines(root: Path = PACKAGE) -> int:
    """Lines of every ``.py`` file under ``root``, as ``wc -l`` counts them (newline characters)."""
    return sum(p.read_bytes().count(b"\n") for p in root.rglob("*.py"))


def test_line_count_is_wc_l_of_every_python_file(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.py").write_text("x = 1\ny = 2\n")
    (tmp_path / "sub" / "b.py").write_text("z = 3")  # no final newline: wc -l does not count the line
    (tmp_path / "notes.txt").write_text("not python\n")
    assert package_lines(tmp_path) == 2


def test_package_does_not_grow_while_above_the_bound():
    n = package_lines()
    assert n <= NO_GROWTH_LINES, (f"essence/ holds {n:,} lines of Python, above {NO_GROWTH_LINES:,}: it may not grow "
                                  "while it is above the house bound; cut before adding")


@pytest.mark.xfail(strict=True, reason="essence/ is above the house bound; a cut below it must remove this mark")
def test_package_stays_within_the_line_bound():
    n = package_lines()
    assert n <= MAX_PACKAGE_LINES, (
        f"essence/ holds {n:,} lines of Python, above the house bound of {MAX_PACKAGE_LINES:,} "
        f"(by {n - MAX_PACKAGE_LINES:,}); cut duplicated logic, dead code or repeated docstrings rather than moving "
        "code out of the package")
