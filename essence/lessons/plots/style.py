"""The figures' shared style and primitives: colours, ``use_style``, ``savefig`` (PNG + SVG with stable
names and deterministic metadata), the metabench caveat note and labels."""

from __future__ import annotations

from pathlib import Path

from ...data import METABENCH, POOL_CAVEAT
from ...methods import METHOD_INFO, METHOD_TABLE

__all__ = ["use_style", "savefig", "caveat_note", "METHOD_COLORS", "MIN_FONT_PT", "REFERENCE_STYLES"]

#: the smallest text size (points) any figure uses, so that text stays readable where a page scales a
#: figure down to its width (tests/test_plots_fonts.py renders every figure function and checks it)
MIN_FONT_PT = 9.0

#: one line style per kind of horizontal reference, the same in every figure (notebook 03's prose
#: names them): the ruler (a reconstructor on the whole pool) dash-dotted, random subsets dotted
REFERENCE_STYLES = {"whole pool": "-.", "random": ":"}

#: one colour per method (from :data:`essence.methods.METHOD_TABLE`), and ``full`` for the whole item set
METHOD_COLORS = {"full": "#222222", **{m.name: m.color for m in METHOD_TABLE}}


def use_style() -> None:
    """Seaborn whitegrid, readable font sizes, deterministic SVG output."""
    import matplotlib as mpl
    import seaborn as sns

    # no backend is forced: a notebook draws inline, a headless script gets Agg by itself
    sns.set_theme(style="whitegrid", context="notebook")
    mpl.rcParams.update({
        "figure.dpi": 100,
        "savefig.dpi": 150,
        "savefig.bbox": "tight",
        "svg.hashsalt": "essence",
        "axes.titlesize": 12,
        "axes.titleweight": "bold",
        "figure.titlesize": 13,
        "legend.frameon": True,
    })


def savefig(fig, name: str, figures_dir="figures", dpi: float | None = None) -> list[Path]:
    """Write ``fig`` as ``<figures_dir>/<name>.png`` and ``.svg``; returns the paths.

    ``dpi`` overrides the style's 150 dpi for both files (the resolution of the PNG and of the images
    embedded in the SVG): large pixel-level heatmaps use a lower one to stay small on disk.
    """
    d = Path(figures_dir)
    d.mkdir(parents=True, exist_ok=True)
    paths = [d / f"{name}.png", d / f"{name}.svg"]
    # dense scatter clouds are embedded as images in the SVG (keeps files small; text stays vector)
    for ax in fig.axes:
        for coll in ax.collections:
            if len(coll.get_offsets()) > 500:
                coll.set_rasterized(True)
    kw = {} if dpi is None else {"dpi": dpi}
    fig.savefig(paths[0], metadata={"Software": None}, **kw)
    fig.savefig(paths[1], metadata={"Date": None, "Creator": None}, **kw)
    return paths


def caveat_note(fig, text: str | None = None, y: float = -0.02, wrap: bool = True) -> None:
    """Print the metabench pre-selected-pool caveat (or ``text``) at the bottom of a figure.

    ``y``: height in figure coordinates (lower it for figures with a legend below the axes).
    """
    fig.text(0.01, y, f"Note: {text or POOL_CAVEAT}.", fontsize=9, style="italic", ha="left", va="top",
             color="#444444", wrap=wrap)


def _starred_caveat(fig, names, y: float = -0.02, wrap: bool = True) -> None:
    """The caveat, starred like the titles, when one of the dataset ``names`` is a metabench pool."""
    if any(name in METABENCH for name in names):
        caveat_note(fig, f"* {POOL_CAVEAT}", y=y, wrap=wrap)


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
