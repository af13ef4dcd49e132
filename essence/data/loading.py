"""Loading: shipped dataset names (through ``$ESSENCE_DATA``, ``data/``, ``../shared/data``), checksums,
``.npz`` and wide / long ``.csv`` / ``.parquet`` files, linking the shared data, and ``describe``."""

from __future__ import annotations

import csv
import hashlib
import os
from collections import Counter
from pathlib import Path

import numpy as np

from ..errors import InputError
from .responses import Responses
from .validation import from_arrays

__all__ = ["DATASETS", "METABENCH", "POOL_CAVEAT", "load", "resolve_dataset", "data_roots", "verify_checksum",
           "sha256_file", "link_shared_data", "full_benchmark_size", "describe"]

#: Shipped dataset names -> path relative to a data root (``$ESSENCE_DATA``, ``data/`` or ``../shared/data``).
DATASETS: dict[str, str] = {
    "arc": "metabench/arc.npz",
    "gsm8k": "metabench/gsm8k.npz",
    "mmlu": "metabench/mmlu.npz",
    "truthfulqa": "metabench/truthfulqa.npz",
    "winogrande": "metabench/winogrande.npz",
    "alpaca_eval2": "alpaca_eval/alpaca_eval2.npz",
    "lcb_codegen": "livecodebench/lcb_codegen.npz",
}

#: The metabench pools are pre-selected, informative subsets of their benchmarks (see data/README.md).
METABENCH = ("arc", "gsm8k", "mmlu", "truthfulqa", "winogrande")

POOL_CAVEAT = (
    "metabench pools are pre-selected informative items (100-486 of 817-14015); "
    "errors on them are optimistic relative to compressing a whole benchmark"
)

PROJECT_ROOT = Path(__file__).resolve().parents[2]
MANIFEST = PROJECT_ROOT / "data" / "MANIFEST.sha256"


def data_roots() -> list[Path]:
    """Where dataset names resolve, in order: ``$ESSENCE_DATA``, ``data/`` (cwd, then project), ``../shared/data``."""
    env = os.environ.get("ESSENCE_DATA")
    candidates = [Path(env)] if env else []
    candidates += [base / "data" for base in (Path.cwd(), PROJECT_ROOT)]
    candidates += [base / ".." / "shared" / "data" for base in (Path.cwd(), PROJECT_ROOT)]
    roots: list[Path] = []
    for p in candidates:
        p = p.resolve()
        if p not in roots:
            roots.append(p)
    return roots


def resolve_dataset(name: str) -> Path:
    """Path of a shipped dataset name; ValueError listing the known names, or where it was looked for."""
    if name not in DATASETS:
        raise InputError(
            f"unknown dataset {name!r}; known datasets: {', '.join(DATASETS)} "
            "(or give a path to a .npz, .csv or .parquet file)"
        )
    rel = DATASETS[name]
    tried = []
    for root in data_roots():
        p = root / rel
        tried.append(str(p))
        if p.is_file():
            return p
    raise InputError(
        f"dataset {name!r} not found; looked in: {'; '.join(tried)}. Run `make data` or set ESSENCE_DATA "
        "to the folder that holds metabench/, alpaca_eval/ and livecodebench/"
    )


def _manifest() -> dict[str, str]:
    if not MANIFEST.is_file():
        return {}
    out = {}
    for line in MANIFEST.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            digest, rel = line.split(maxsplit=1)
            out[rel.strip()] = digest
    return out


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def verify_checksum(path: Path, rel: str) -> None:
    """Refuse a shipped data file whose SHA-256 differs from ``data/MANIFEST.sha256``."""
    expected = _manifest().get(rel)
    if expected is None:
        return
    got = sha256_file(path)
    if got != expected:
        raise InputError(
            f"{path}: checksum mismatch for {rel} (expected {expected[:12]}..., got {got[:12]}...); the file "
            "is corrupt or a different version. Delete it and run `make data` to link a fresh copy from "
            "../shared/data"
        )


def load(name_or_path, *, verify: bool = True, keep_flagged: bool = False,
         allow_empty_items: bool = False) -> Responses:
    """Load a shipped dataset by name, or a file in one of the supported formats.

    * names: ``arc, gsm8k, mmlu, truthfulqa, winogrande`` (Open LLM Leaderboard v1 via metabench; the
      item pools are pre-selected, see ``POOL_CAVEAT``), ``alpaca_eval2``, ``lcb_codegen``.
    * ``.npz`` in the canonical format (``responses``, ``models``, ``items``, optional ``texts`` and
      ``full_score``; other arrays become extras).
    * ``.csv`` / ``.parquet``: *wide* (a ``model`` column and one column per item, optional
      ``full_score`` column) or *long* (columns ``model, item, score``, optional ``full_score``).
      Empty cells are missing (NaN).

    Rows flagged in a ``model_notes`` array (AlpacaEval 2: ``NullModel``, an adversarial constant-output
    cheating entry; ``gpt4_1106_preview``, the baseline judged against itself, 0.5 on every item;
    ``gpt4_gamed``, an adversarial probe) are not real evaluations of a model and are dropped unless
    ``keep_flagged=True``. ``verify`` checks shipped files against ``data/MANIFEST.sha256``.

    ``allow_empty_items`` keeps items no model has a result for (new models' results for ``estimate``,
    where a missing cell is allowed); otherwise they are refused.

    Raises InputError for unknown names, unreadable files and every validation problem.
    """
    if isinstance(name_or_path, str) and name_or_path in DATASETS:
        path = resolve_dataset(name_or_path)
        if verify:
            verify_checksum(path, DATASETS[name_or_path])
        return _load_npz(path, name=name_or_path, keep_flagged=keep_flagged)
    path = Path(name_or_path)
    if not path.exists():
        if isinstance(name_or_path, str) and not any(c in name_or_path for c in "/.\\"):
            resolve_dataset(name_or_path)  # raises the unknown-name message
        raise InputError(f"{path}: no such file; give a dataset name ({', '.join(DATASETS)}) or an existing path")
    if not path.is_file():
        raise InputError(f"{path}: not a file")
    suffix = path.suffix.lower()
    if suffix == ".npz":
        return _load_npz(path, name=path.stem, keep_flagged=keep_flagged, allow_empty_items=allow_empty_items)
    if suffix in (".csv", ".parquet", ".pq"):
        return _load_table(path, allow_empty_items=allow_empty_items)
    raise InputError(f"{path}: unsupported file type {suffix!r}; use .npz, .csv or .parquet")


def _load_npz(path: Path, name: str, keep_flagged: bool = False, allow_empty_items: bool = False) -> Responses:
    try:
        with np.load(path, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    except Exception as exc:  # zipfile errors, pickle refusals, truncated files
        raise InputError(f"{path}: unreadable .npz file ({type(exc).__name__}: {exc})") from None
    if "responses" not in arrays:
        raise InputError(f"{path}: no 'responses' array; the canonical format needs responses, models, items")
    r = arrays.pop("responses")
    if r.ndim != 2:
        raise InputError(f"responses: expected a 2-D array (n_models, n_items) in {path}, got shape {r.shape}")
    n_models, n_items = r.shape
    models = arrays.pop("models", None)
    items = arrays.pop("items", None)
    texts = arrays.pop("texts", None)
    target = arrays.pop("full_score", None)
    item_extras, model_extras = {}, {}
    for k, v in arrays.items():
        if v.ndim == 1 and v.shape[0] == n_items and n_items != n_models:
            item_extras[k] = v
        elif v.ndim == 1 and v.shape[0] == n_models:
            model_extras[k] = v
        elif v.ndim == 1 and v.shape[0] == n_items:
            item_extras[k] = v
    out = from_arrays(r, models, items, target, texts, name=name, item_extras=item_extras,
                      model_extras=model_extras, allow_empty_items=allow_empty_items)
    notes = out.model_extras.get("model_notes")
    if notes is not None and not keep_flagged:
        flagged = np.char.str_len(notes.astype(str)) > 0
        if flagged.any():
            out = out.subset(models=~flagged)
    return out


def _load_table(path: Path, allow_empty_items: bool = False) -> Responses:
    import pandas as pd

    try:
        df = _read_csv(path) if path.suffix.lower() == ".csv" else pd.read_parquet(path)
    except InputError:
        raise
    except Exception as exc:
        raise InputError(f"{path}: unreadable table ({type(exc).__name__}: {exc})") from None
    cols = [str(c) for c in df.columns]
    df.columns = cols
    for col in ("model", "item"):
        if col in cols:
            _check_names(df[col], col, path)
    if "model" not in cols:
        raise InputError(
            f"{path}: no 'model' column; a wide table needs a 'model' column plus one column per item, "
            "a long table needs columns model, item, score"
        )
    if {"item", "score"} <= set(cols):  # long format
        extra = set(cols) - {"model", "item", "score", "full_score"}
        if extra:
            raise InputError(f"{path}: long table has unexpected column(s) {sorted(extra)}; expected model, item, "
                             "score and optionally full_score")
        dup = df.duplicated(["model", "item"])
        if dup.any():
            row = df[dup].iloc[0]
            raise InputError(f"{path}: {int(dup.sum())} duplicate (model, item) row(s), e.g. "
                             f"({row['model']!r}, {row['item']!r}); keep one score per model and item")
        df["model"] = df["model"].astype(str)
        df["item"] = df["item"].astype(str)
        wide = df.pivot(index="model", columns="item", values="score")
        models = wide.index.to_numpy(dtype=str)
        items = wide.columns.to_numpy(dtype=str)
        target = None
        if "full_score" in cols:
            fs = df.groupby("model")["full_score"]
            if (fs.nunique(dropna=False) > 1).any():
                raise InputError(f"{path}: full_score differs between rows of the same model; give one value per model")
            target = fs.first().reindex(models).to_numpy()
        values = _numeric(wide, path)
        return from_arrays(values, models, items, target, name=path.stem, allow_empty_items=allow_empty_items)
    # wide format
    if df["model"].duplicated().any():
        d = df.loc[df["model"].duplicated(), "model"].iloc[0]
        raise InputError(f"models: duplicate id {d!r} in {path}; one row per model")
    target = df.pop("full_score").to_numpy() if "full_score" in cols else None
    models = df.pop("model").to_numpy()
    if target is not None:
        try:
            target = target.astype(np.float64)
        except (ValueError, TypeError):
            raise InputError(f"target: non-numeric full_score values in {path}") from None
    return from_arrays(_numeric(df, path), models, df.columns.to_numpy(dtype=str), target, name=path.stem,
                       allow_empty_items=allow_empty_items)


#: cell texts read as a missing score (pandas' defaults); model and item names are never read as missing
#: (a reader passes ``keep_default_na=False, na_values={score column: NA_TEXTS}``)
NA_TEXTS = ["", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN", "<NA>", "N/A",
             "NA", "NULL", "NaN", "None", "n/a", "nan", "null"]


def _read_csv(path: Path):
    """A CSV with the ``model`` / ``item`` columns read as text as written (a model named ``NA`` stays
    ``"NA"``, an empty name stays empty and is refused) and empty or NA-like score cells read as missing."""
    import pandas as pd

    cols = pd.read_csv(path, nrows=0).columns
    with open(path, newline="", encoding="utf-8", errors="replace") as f:  # pandas renames a repeat to 'a.1'
        header = next(csv.reader(f), [])
    repeated = sorted((c, n) for c, n in Counter(header).items() if n > 1)
    if repeated:
        raise InputError(f"{path}: column {repeated[0][0]!r} appears {repeated[0][1]} times in the header; "
                         "give each item (and model, full_score) one column")
    names = [c for c in cols if str(c) in ("model", "item")]
    return pd.read_csv(path, dtype={c: str for c in names}, keep_default_na=False,
                       na_values={c: NA_TEXTS for c in cols if c not in names})


def _check_names(col, what: str, path: Path) -> None:
    """Refuse a missing (None / NaN) or blank model or item name in a table, naming its row."""
    blank = col.isna().to_numpy() | (col.astype(str).str.strip() == "").to_numpy()
    if blank.any():
        row = int(np.flatnonzero(blank)[0])
        raise InputError(f"{path}: {int(blank.sum())} row(s) with an empty or missing {what} name, first at data "
                         f"row {row + 1}; give every {what} a name")


def _numeric(df, path: Path) -> np.ndarray:
    import pandas as pd

    num = df.apply(pd.to_numeric, errors="coerce")
    bad = num.isna() & df.notna()
    if bad.to_numpy().any():
        r, c = np.argwhere(bad.to_numpy())[0]
        raise InputError(
            f"responses: non-numeric value {df.iat[r, c]!r} in {path} (row {r}, column {df.columns[c]!r}); "
            "scores must be numbers in [0, 1] or empty"
        )
    return num.to_numpy(dtype=np.float64)


def link_shared_data(dest: Path | None = None, source: Path | None = None, verify: bool = True) -> list[str]:
    """Link (symlink, or copy where links fail) the shipped datasets from ``../shared/data`` into ``data/``.

    Verifies every file against ``data/MANIFEST.sha256``; returns one status line per dataset.
    Never overwrites a regular file the user put in ``data/`` that differs from the source.
    """
    import shutil

    dest = Path(dest) if dest else PROJECT_ROOT / "data"
    source = Path(source) if source else (PROJECT_ROOT / ".." / "shared" / "data").resolve()
    lines = []
    for name, rel in DATASETS.items():
        target = dest / rel
        src = source / rel
        if not target.exists():
            if not src.is_file():
                raise InputError(
                    f"{rel}: not in data/ and not found in {source}; put the shared data folder at "
                    "../shared/data or set ESSENCE_DATA"
                )
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.is_symlink():  # dangling link
                target.unlink()
            try:
                target.symlink_to(os.path.relpath(src, target.parent))
            except OSError:
                shutil.copyfile(src, target)
        if verify:
            verify_checksum(target, rel)
        lines.append(f"{name:13s} {rel}  ok")
    lm = source / "lm_eval"
    if lm.is_dir() and not (dest / "lm_eval").exists():
        try:
            (dest / "lm_eval").symlink_to(os.path.relpath(lm, dest))
        except OSError:
            shutil.copytree(lm, dest / "lm_eval")
    return lines


def full_benchmark_size(name: str) -> int | None:
    """Number of items of the whole original benchmark behind a shipped metabench pool (None otherwise)."""
    if name not in METABENCH:
        return None
    with np.load(resolve_dataset(name), allow_pickle=False) as z:
        return int(z["full_score_n_items"]) if "full_score_n_items" in z.files else None


def describe(r: Responses) -> dict:
    """One row of facts about a dataset: sizes, score type, missing cells, constant items, target (pp)."""
    std = np.nanstd(r.responses, axis=0)
    return {
        "dataset": r.name,
        "models": r.n_models,
        "items": r.n_items,
        "scores": "0/1" if r.is_binary else "continuous",
        "missing cells": int(np.isnan(r.responses).sum()),
        "constant items": int((std == 0).sum()),
        "texts": r.texts is not None,
        "target": r.target_source,
        "target mean (pp)": float(np.mean(r.target)),
        "target sd (pp)": float(np.std(r.target)),
        "target min (pp)": float(np.min(r.target)),
        "target max (pp)": float(np.max(r.target)),
        "pre-selected pool": r.name in METABENCH,
    }
