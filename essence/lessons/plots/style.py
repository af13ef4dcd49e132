"""The figures' shared style and primitives: colours, ``use_style``, ``savefig``, the metabench caveat note."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt

from ...data import METABENCH, POOL_CAVEAT
from ...methods import METHOD_INFO, METHOD_TABLE

__all__ = ["use_style", "savefig", "caveat_note", "METHOD_COLORS", "MIN_FONT_PT", "REFERENCE_STYLES"]

#: the smallest text size (points) any figure uses (tests/test_plots_fonts.py checks every figure function)
MIN_FONT_PT = 9.0

#: one line style per kind of horizontal reference: the ruler on the whole pool dash-dotted, random subsets dotted
REFERENCE_STYLES = {"whole pool": "-.", "random": ":"}

#: one colour per method (from :data:`essence.methods.METHOD_TABLE`), and ``full`` for the whole item set
METHOD_COLORS = {"full": "#222222", **{m.name: m.color for m in METHOD_TABLE}}


def use_style() -> None:
    """Seaborn whitegrid, readable font sizes, deterministic SVG output."""
    import matplotlib as mpl
    import seaborn as sns

    sns.set_theme(style="whitegrid", context="notebook")
    mpl.rcParams.update({"figure.dpi": 100, "savefig.dpi": 150, "savefig.bbox": "tight", "svg.hashsalt": "essence",
                         "axes.titlesize": 12, "axes.titleweight": "bold", "figure.titlesize": 13,
                         "legend.frameon": True})


def savefig(fig, name: str, figures_dir="figures", dpi: float | None = None) -> list[Path]:
    """Write ``fig`` as ``<figures_dir>/<name>.png`` and ``.svg`` (deterministic metadata; scatter collections of
    over 500 points rasterised); returns the paths. ``dpi`` overrides the style's 150 dpi for both files."""
    d = Path(figures_dir)
    d.mkdir(parents=True, exist_ok=True)
    paths = [d / f"{name}.png", d / f"{name}.svg"]
    for ax in fig.axes:
        for coll in ax.collections:
            if len(coll.get_offsets()) > 500:
                coll.set_rasterized(True)
    kw = {} if dpi is None else {"dpi": dpi}
    fig.savefig(paths[0], metadata={"Software": None}, **kw)
    fig.savefig(paths[1], metadata={"Date": None, "Creator": None}, **kw)
    return paths


def caveat_note(fig, text: str | None = None, y: float = -0.02, wrap: bool = True, prefix: str = "Note: ") -> None:
    """Print the metabench pre-selected-pool caveat (or ``text``) at height ``y`` (figure coordinates) under a
    figure."""
    fig.text(0.01, y, f"{prefix}{text or POOL_CAVEAT}.", fontsize=9, style="italic", ha="left", va="top",
             color="#444444", wrap=wrap)


def _starred_caveat(fig, names, y: float = -0.02, wrap: bool = True) -> None:
    """The caveat, starred like the titles, when one of the dataset ``names`` is a metabench pool."""
    if any(name in METABENCH for name in names):
        caveat_note(fig, f"* {POOL_CAVEAT}", y=y, wrap=wrap)


def _star_note(fig, titles, prefix: str = "Note: ") -> None:
    """The starred caveat when one of ``titles`` carries a star."""
    if any("*" in t for t in titles):
        caveat_note(fig, f"* {POOL_CAVEAT}", prefix=prefix)


def _finish(fig, names, y: float = -0.02, wrap: bool = True):
    """``fig`` after ``tight_layout`` and :func:`_starred_caveat` for the dataset ``names``."""
    fig.tight_layout()
    _starred_caveat(fig, names, y=y, wrap=wrap)
    return fig


def _panels(rows: int, cols: int, figsize, n: int | None = None, **kw):
    """``plt.subplots(rows, cols, figsize=figsize, squeeze=False, **kw)``, the panels after the first ``n`` (None:
    all in use) switched off."""
    fig, axes = plt.subplots(rows, cols, figsize=figsize, squeeze=False, **kw)
    for ax in axes.ravel()[rows * cols if n is None else n:]:
        ax.axis("off")
    return fig, axes


def _reference_style(label: str, fallback: str = "--") -> str:
    """The line style of a horizontal reference by its label (:data:`REFERENCE_STYLES`), else ``fallback``."""
    low = label.lower()
    return next((ls for key, ls in REFERENCE_STYLES.items() if key in low), fallback)


def _grid(n: int, max_cols: int = 3) -> tuple[int, int]:
    """``(rows, cols)`` for ``n`` panels wrapped into rows of at most ``max_cols``, as even as possible."""
    rows = max(1, -(-n // max_cols))
    return rows, max(1, -(-n // rows))


def _method_label(m: str) -> str:
    """A method's display name (:data:`essence.methods.METHOD_INFO`), or ``m`` itself for other names."""
    return METHOD_INFO[m].label if m in METHOD_INFO else m


def _star(name: str) -> str:
    return f"{name} *" if name in METABENCH else name
