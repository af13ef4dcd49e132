"""The HTML companion renders in a real headless Chromium: title, links that resolve, a non-blank page."""

from __future__ import annotations

import re
import shutil
import subprocess
from html.parser import HTMLParser

import numpy as np
import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-extensions", "--hide-scrollbars"]

pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="Chromium is not installed and could not be installed here (`make test` installs Debian's "
           "chromium package when apt-get is available); the browser check needs it",
)


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.refs = []

    def handle_starttag(self, tag, attrs):
        for k, v in attrs:
            if (tag, k) in (("a", "href"), ("img", "src")) and v:
                self.refs.append(v)


def _chromium(tmp_path, *args):
    return subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", *args],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.slow
def test_index_renders_in_headless_chromium(quick_build, tmp_path):
    from PIL import Image

    build, proc = quick_build
    index = build / "html" / "index.html"
    assert index.exists(), proc.stderr[-2000:]
    url = index.resolve().as_uri()

    # the DOM Chromium built: the title is present and every notebook is linked
    dom = _chromium(tmp_path, "--dump-dom", url).stdout
    assert re.search(r"<title>essence: the literate companion</title>", dom)
    assert "00_data.html" in dom

    # every link and image resolves to a file of the build
    parser = _Links()
    parser.feed(index.read_text())
    local = [r for r in parser.refs if not r.startswith(("http:", "https:", "#"))]
    assert local, "index.html links nothing"
    for ref in local:
        assert (index.parent / ref).is_file(), f"broken link in index.html: {ref}"

    # a screenshot that is not blank: many distinct colours and real contrast
    shot = tmp_path / "shot.png"
    r = _chromium(tmp_path, f"--screenshot={shot}", "--window-size=1200,900", url)
    assert shot.exists(), r.stderr[-2000:]
    img = np.asarray(Image.open(shot).convert("L"), dtype=float)
    assert img.shape == (900, 1200)
    assert img.std() > 10 and (img < 100).mean() > 0.002, "the screenshot looks blank"

    # an executed notebook page renders too
    nb_html = build / "html" / "00_data.html"
    dom_nb = _chromium(tmp_path, "--dump-dom", nb_html.resolve().as_uri()).stdout
    assert "The data: per-item results" in dom_nb


@pytest.mark.slow
def test_formulas_render_offline(quick_build, tmp_path):
    """MathJax ships with the build: no page shows raw TeX delimiters once its scripts have run."""
    build, proc = quick_build
    html_dir = build / "html"
    assert (html_dir / "mathjax" / "MathJax.js").is_file(), "MathJax was not copied next to the pages"
    page = html_dir / "03_genetic_search.html"
    assert page.exists(), proc.stderr[-2000:]
    source = page.read_text()
    assert "mathjax/MathJax.js" in source and "cdnjs" not in source.split("MathJax.js")[0][-300:]
    assert r"\binom{M}{k}" in source  # the TeX is there before rendering
    dom = _chromium(tmp_path, "--virtual-time-budget=30000", "--dump-dom", page.resolve().as_uri()).stdout
    assert "MathJax" in dom, "MathJax did not run"
    visible = re.sub(r"<script.*?</script>", "", dom, flags=re.S)  # MathJax keeps the TeX in script tags
    visible = re.sub(r"<style.*?</style>", "", visible, flags=re.S)
    raw = re.findall(r"\$[^$<>]{0,80}\\(?:binom|in|sum|frac)[^$<>]{0,80}\$", visible)
    assert not raw, f"raw TeX shown on the page: {raw[:3]}"
