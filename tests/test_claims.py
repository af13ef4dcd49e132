"""The published-numbers table: one row per claim, each with a source, in the units it says."""

from __future__ import annotations

import math
from pathlib import Path

from essence.lessons.claims import CLAIMS, claims_table

KINDS = {"rmse", "mae", "kendall", "spearman", "share_within_5pct_rank", "ratio", "share_items"}


def test_keys_unique_and_sources_named():
    keys = [c.key for c in CLAIMS]
    assert len(keys) == len(set(keys))
    # both unit checks below have claims to check
    assert {"kendall", "spearman", "share_within_5pct_rank", "share_items"} & {c.kind for c in CLAIMS}
    assert {"rmse", "mae"} & {c.kind for c in CLAIMS}
    for c in CLAIMS:
        assert c.kind in KINDS, c
        assert c.source.split(":")[0] in {"refs", "seed"}, c
        assert math.isfinite(c.value), c
        if c.kind in {"kendall", "spearman", "share_within_5pct_rank", "share_items"}:
            assert 0 <= c.value <= 1, c
        if c.kind in {"rmse", "mae"}:
            assert 0 < c.value < 20, c  # pp, not fractions
        assert c.k is None or c.k >= 1


def test_table_and_references_page_agree():
    df = claims_table()
    assert list(df.columns)[:3] == ["key", "method", "benchmark"] and len(df) == len(CLAIMS)
    page = (Path(__file__).resolve().parents[1] / "docs" / "references.md").read_text()
    # every published number the page quotes is one the table holds (typed once, in the table)
    quoted = [c for c in CLAIMS if c.kind == "rmse" and c.method == "essence" and c.k in (200, 300, 500)]
    assert len(quoted) >= 3  # the page's EssenceBench RMSE at k = 200, 300, 500
    for c in quoted:
        assert f"{c.value:g}" in page, c.key
    assert "http" not in page  # no link points outside the repository
