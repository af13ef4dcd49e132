#!/usr/bin/env python
"""Execute every notebook headlessly with papermill, regenerate figures/, render build/html/.

    python scripts/reproduce.py                 # all notebooks, default parameters -> figures/
    python scripts/reproduce.py --quick         # quick parameters, figures to build/quick-figures/
    python scripts/reproduce.py --only 00_data  # one notebook (name or prefix)

Executed copies go to build/notebooks/, HTML to build/html/ (index.html links every notebook and
figure; formulas render offline with the MathJax that ships in jupyter-server-mathjax). A full run
(not --quick) also writes each executed notebook back in place, outputs included, so the repository
shows every table and figure; outputs are made to read the same on every machine (see
``clean_outputs``): no timings, progress bars, stderr, machine paths or memory addresses. Exits
non-zero if any notebook fails (a failed notebook is not written back).
"""

from __future__ import annotations

import argparse
import html
import json
import os
import re
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


#: MathJax 2 config shipped in jupyter-server-mathjax (TeX + MathML input, HTML-CSS output)
MATHJAX_CONFIG = "TeX-AMS-MML_HTMLorMML-full,Safe"

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def declared_parameters(nb_path: Path) -> set[str]:
    """Names the notebook's ``parameters`` cell declares (read by papermill)."""
    import papermill as pm

    return set(pm.inspect_notebook(str(nb_path)))


def _relative(path: Path, start: Path) -> str:
    """``path`` relative to ``start`` (the notebook folder), POSIX style, so no executed copy names a machine."""
    return Path(os.path.relpath(path, start)).as_posix()


def clean_outputs(nb, root: Path = ROOT) -> None:
    """Make an executed notebook read the same on every machine and run (in place).

    Drops papermill's and nbclient's timing metadata and input/output paths, every stderr stream
    (and names papermill's injected-parameters cell by that tag instead of a random id;
    progress bars and warnings go to the log, not to cells), and memory addresses in reprs; replaces
    any remaining mention of ``root`` by ``.``.
    """
    nb.metadata.pop("papermill", None)
    for key in ("widgets",):
        nb.metadata.pop(key, None)
    for cell in nb.cells:
        cell.metadata.pop("papermill", None)
        cell.metadata.pop("execution", None)
        if "injected-parameters" in cell.metadata.get("tags", []):
            cell["id"] = "injected-parameters"  # papermill gives it a random id on every run
        if cell.metadata.get("tags") == []:
            cell.metadata.pop("tags")
        if cell.cell_type != "code":
            continue
        kept = []
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream" and out.get("name") == "stderr":
                continue
            for field in ("text",):
                if field in out:
                    out[field] = _scrub(out[field], root)
            for mime, value in out.get("data", {}).items():
                if mime.startswith("text/") and isinstance(value, str):
                    out["data"][mime] = _scrub(value, root)
            out.get("metadata", {}).pop("execution", None)
            kept.append(out)
        cell.outputs = kept


def _scrub(text, root: Path):
    if isinstance(text, list):
        text = "".join(text)
    return _ADDRESS.sub("", text).replace(str(root) + "/", "").replace(str(root), ".")


#: an IPython startup file for the kernels: an audit hook that logs every file opened under results/ to the file
#: ``$ESSENCE_RESULTS_READ`` names (one path per line), so a notebook records which committed tables it showed
RESULTS_HOOK = """\
import os as _os, sys as _sys
def _essence_results_hook():
    log, root = _os.environ.get("ESSENCE_RESULTS_READ"), _os.environ.get("ESSENCE_RESULTS_DIR")
    if not log or not root:
        return
    fd = _os.open(log, _os.O_WRONLY | _os.O_APPEND | _os.O_CREAT, 0o644)
    def hook(event, args):
        if event == "open" and isinstance(args[0], (str, bytes, _os.PathLike)):
            path = _os.path.abspath(_os.fsdecode(args[0]))
            if path.startswith(root + _os.sep):
                _os.write(fd, (_os.path.relpath(path, root) + "\\n").encode())
    _sys.addaudithook(hook)
_essence_results_hook()
del _essence_results_hook
"""


def results_hook_dir(build: Path) -> Path:
    """An ``IPYTHONDIR`` under ``build`` whose startup file installs :data:`RESULTS_HOOK` in every kernel."""
    ipython = build / "ipython"
    startup = ipython / "profile_default" / "startup"
    startup.mkdir(parents=True, exist_ok=True)
    (startup / "00-essence-results.py").write_text(RESULTS_HOOK)
    return ipython


def table_hash(path: Path) -> str:
    """SHA-256 (16 hex) of a file's bytes: what a notebook records of each table it read."""
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def record_results(executed: Path, log: Path, results: Path = ROOT / "results") -> dict:
    """Write ``{table: hash}`` of every file under ``results`` that the run of ``executed`` opened (``log``, from
    :data:`RESULTS_HOOK`) into its metadata (``metadata.essence.results``): tests/test_committed_notebooks.py checks
    that each still equals the committed table, so a notebook executed against older tables cannot land."""
    import nbformat

    names = sorted(set(log.read_text().split())) if log.exists() else []
    record = {n: table_hash(results / n) for n in names if (results / n).is_file()}
    nb = nbformat.read(str(executed), as_version=4)
    nb.metadata.setdefault("essence", {})["results"] = record
    nbformat.write(nb, str(executed))
    return record


def run_notebook(src: Path, out: Path, params: dict, timeout: int) -> float:
    import papermill as pm

    t0 = time.perf_counter()
    pm.execute_notebook(
        str(src), str(out), parameters=params, cwd=str(src.parent), kernel_name="python3",
        progress_bar=False, request_save_on_cell_execute=False, execution_timeout=timeout,
    )
    return time.perf_counter() - t0


def ship_mathjax(html_dir: Path) -> None:
    """Copy the MathJax of jupyter-server-mathjax next to the HTML pages (once), so formulas render offline."""
    import jupyter_server_mathjax

    target = html_dir / "mathjax"
    if not (target / "MathJax.js").is_file():
        shutil.copytree(Path(jupyter_server_mathjax.__file__).parent / "static", target, dirs_exist_ok=True)


def render_html(executed: Path, html_dir: Path) -> Path:
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(mathjax_url=f"mathjax/MathJax.js?config={MATHJAX_CONFIG}")
    body, _ = exporter.from_filename(str(executed))
    target = html_dir / f"{executed.stem}.html"
    target.write_text(body, encoding="utf-8")
    return target


def write_clean(executed: Path, target: Path) -> None:
    """Clean ``executed`` (see :func:`clean_outputs`) and write it to ``target`` atomically."""
    import nbformat

    nb = nbformat.read(str(executed), as_version=4)
    clean_outputs(nb)
    tmp = target.with_name(f".{target.name}.tmp")
    nbformat.write(nb, str(tmp))
    os.replace(tmp, target)


def _title(nb_path: Path) -> str:
    nb = json.loads(nb_path.read_text())
    for c in nb["cells"]:
        if c["cell_type"] == "markdown":
            for line in "".join(c["source"]).splitlines():
                if line.startswith("#"):
                    return line.lstrip("#").strip()
    return nb_path.stem


def write_index(html_dir: Path, entries: list[dict], figures: list[Path]) -> Path:
    rows = []
    for e in entries:
        status = "ok" if e["ok"] else "FAILED"
        rows.append(
            f'<li><a href="{html.escape(e["html"])}">{html.escape(e["name"])}</a> — {html.escape(e["title"])} '
            f'<span class="meta">({status}, {e["seconds"]:.0f} s)</span></li>'
        )
    figs = []
    for f in figures:
        figs.append(
            f'<figure><a href="figures/{html.escape(f.name)}"><img src="figures/{html.escape(f.name)}" '
            f'alt="{html.escape(f.stem)}" loading="lazy"></a><figcaption>{html.escape(f.stem)}</figcaption></figure>'
        )
    page = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>essence: the literate companion</title>
<style>
body {{ font-family: system-ui, sans-serif; max-width: 1100px; margin: 2em auto; padding: 0 1em; color: #222; }}
li {{ margin: .4em 0; }} .meta {{ color: #777; font-size: .9em; }}
.figs {{ display: grid; grid-template-columns: repeat(auto-fill, minmax(320px, 1fr)); gap: 1em; }}
figure {{ margin: 0; border: 1px solid #ddd; padding: .5em; }} img {{ width: 100%; }}
figcaption {{ font-size: .85em; color: #555; }}
</style></head><body>
<h1>essence: the literate companion</h1>
<p>Executed notebooks, in reading order. Regenerate with <code>make reproduce</code>.
Numbers on the metabench pools (arc, gsm8k, mmlu, truthfulqa, winogrande) come from pre-selected,
informative items and are optimistic relative to compressing a whole benchmark.</p>
<h2>Notebooks</h2>
<ol>
{chr(10).join(rows)}
</ol>
<h2>Figures</h2>
<div class="figs">
{chr(10).join(figs)}
</div>
</body></html>
"""
    index = html_dir / "index.html"
    index.write_text(page, encoding="utf-8")
    return index


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="quick parameters (for tests); figures to build/quick-figures")
    ap.add_argument("--only", nargs="*", help="notebook names or prefixes to run")
    ap.add_argument("--build", default=str(ROOT / "build"), help="build folder (default build/)")
    ap.add_argument("--figures", help="figures folder (default figures/, or build/quick-figures with --quick)")
    ap.add_argument("--timeout", type=int, default=3600, help="per-cell timeout in seconds")
    ap.add_argument("--no-write-back", action="store_true",
                    help="leave notebooks/ untouched (a full run otherwise writes the executed notebooks back)")
    ap.add_argument("--cold", action="store_true",
                    help="run on an empty feature/IRT cache ($ESSENCE_CACHE set to a new temporary folder)")
    args = ap.parse_args(argv)
    if args.cold:
        import tempfile

        os.environ["ESSENCE_CACHE"] = tempfile.mkdtemp(prefix="essence-cold-")

    # the kernels draw figures inline (they are saved to figures/ by the notebooks themselves too), so the
    # committed notebooks show them; a user's MPLBACKEND=Agg would leave every figure out of the notebook
    os.environ["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"
    build = Path(args.build).resolve()
    figures = Path(args.figures).resolve() if args.figures else (
        build / "quick-figures" if args.quick else ROOT / "figures")
    nb_dir, html_dir = build / "notebooks", build / "html"
    for d in (nb_dir, html_dir / "figures", figures):
        d.mkdir(parents=True, exist_ok=True)
    ship_mathjax(html_dir)
    os.environ["IPYTHONDIR"] = str(results_hook_dir(build))
    os.environ["ESSENCE_RESULTS_DIR"] = str(ROOT / "results")

    notebooks = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    if args.only:
        notebooks = [n for n in notebooks if any(n.stem.startswith(o) or n.stem == o for o in args.only)]
        if not notebooks:
            print(f"reproduce: no notebook matches {args.only}", file=sys.stderr)
            return 2

    entries, failed = [], []
    t_all = time.perf_counter()
    for src in notebooks:
        out = nb_dir / src.name
        offered = {"quick": bool(args.quick), "figures_dir": _relative(figures, src.parent),
                   "build_dir": _relative(build, src.parent)}
        params = {k: v for k, v in offered.items() if k in declared_parameters(src)}
        print(f"[reproduce] {src.name} ...", flush=True)
        keys = build / "keys" / f"{src.stem}.json"
        keys.unlink(missing_ok=True)
        os.environ["ESSENCE_KEY_NUMBERS"] = str(keys)  # essence.lessons.keys: the kernel inherits it
        read = build / "results-read" / f"{src.stem}.txt"
        read.parent.mkdir(parents=True, exist_ok=True)
        read.unlink(missing_ok=True)
        os.environ["ESSENCE_RESULTS_READ"] = str(read)  # RESULTS_HOOK: the kernel inherits it
        t0 = time.perf_counter()
        ok = True
        try:
            run_notebook(src, out, params, args.timeout)
        except Exception as exc:  # papermill raises PapermillExecutionError with the failing cell
            ok = False
            failed.append(src.name)
            print(f"[reproduce] {src.name} FAILED: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}",
                  file=sys.stderr)
        secs = time.perf_counter() - t0
        if out.exists():
            if ok:
                record_results(out, read)
            write_clean(out, out)
            if ok and not args.quick and not args.no_write_back:
                write_clean(out, src)
        page = render_html(out, html_dir) if out.exists() else None
        entries.append({"name": src.stem, "title": _title(src), "ok": ok, "seconds": secs,
                        "html": page.name if page else ""})
        print(f"[reproduce] {src.name} {'ok' if ok else 'FAILED'} in {secs:.1f} s", flush=True)

    figs = sorted(figures.glob("*.png"))
    for f in figs:
        shutil.copy2(f, html_dir / "figures" / f.name)
    index = write_index(html_dir, entries, figs)
    total = time.perf_counter() - t_all
    times = build / ("notebook_times_quick.csv" if args.quick else "notebook_times.csv")
    times.write_text("notebook,title,seconds,ok\n" + "".join(f"{e['name']},\"{e['title']}\",{e['seconds']:.0f},{e['ok']}\n"
                                                              for e in entries))
    print(f"[reproduce] {len(notebooks) - len(failed)}/{len(notebooks)} notebooks ok in {total:.0f} s; "
          f"{len(figs)} figures in {figures}; HTML index: {index}")
    if failed:
        print(f"[reproduce] failed: {', '.join(failed)} (executed copies with the error are in {nb_dir})",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    from essence.data.pinning import ensure

    ensure()  # the same numbers on any machine (essence/data/pinning.py)
    sys.exit(main())
