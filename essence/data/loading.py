"""Loading: shipped dataset names, checksums, ``.npz`` / ``.csv`` / ``.parquet`` files, linking the shared data."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import numpy as np

from .errors import InputError, UsageError
from .readers import read_table
from .responses import Responses
from .validation import from_arrays

__all__ = ["DATASETS", "METABENCH", "OPENLLM_V2", "POOL_CAVEAT", "load", "resolve_dataset", "data_roots", "verify_checksum",
           "link_shared_data", "full_benchmark_size", "describe", "items_from"]

#: The metabench pools: pre-selected, informative subsets of their benchmarks (see data/README.md).
METABENCH = ("arc", "gsm8k", "mmlu", "truthfulqa", "winogrande")
#: Whole benchmarks of the Open LLM Leaderboard v2 (every item; Zhang, Dorner & Hardt's data).
OPENLLM_V2 = ("arc_challenge", "ifeval", "musr", "math_hard")
#: Shipped dataset names -> path relative to a data root (:func:`data_roots`).
DATASETS: dict[str, str] = {
    **{n: f"metabench/{n}.npz" for n in METABENCH}, "alpaca_eval2": "alpaca_eval/alpaca_eval2.npz",
    "lcb_codegen": "livecodebench/lcb_codegen.npz", **{n: f"openllm_v2/{n}.npz" for n in OPENLLM_V2[:3]},
    "math_hard": "openllm_v2/openllm_math.npz"}

POOL_CAVEAT = ("metabench pools are pre-selected informative items (102-486 of 817-14,015); "
               "errors on them are optimistic relative to compressing a whole benchmark")

PROJECT_ROOT = Path(__file__).resolve().parents[2]
MANIFEST = PROJECT_ROOT / "data" / "MANIFEST.sha256"


def data_roots() -> list[Path]:
    """Where dataset names resolve, in order: ``$ESSENCE_DATA``, ``data/`` (cwd, then project), ``../shared/data``."""
    env = os.environ.get("ESSENCE_DATA")
    bases = (Path.cwd(), PROJECT_ROOT)
    candidates = [*([Path(env)] if env else []), *(b / "data" for b in bases), *(b / ".." / "shared" / "data" for b in bases)]
    return list(dict.fromkeys(p.resolve() for p in candidates))


def resolve_dataset(name: str) -> Path:
    """Path of a shipped dataset name; InputError listing the known names, or where it was looked for."""
    if name not in DATASETS:
        raise InputError(f"unknown dataset {name!r}; known datasets: {', '.join(DATASETS)} "
                         "(or give a path to a .npz, .csv or .parquet file)")
    rel = DATASETS[name]
    tried = []
    for root in data_roots():
        p = root / rel
        tried.append(str(p))
        if p.is_file():
            return p
    raise InputError(f"dataset {name!r} not found; looked in: {'; '.join(tried)}. Run `make data` or set ESSENCE_DATA "
                     "to the folder that holds metabench/, openllm_v2/, alpaca_eval/ and livecodebench/")


def _manifest() -> dict[str, str]:
    lines = MANIFEST.read_text().splitlines() if MANIFEST.is_file() else []
    return {rel.strip(): digest for digest, rel in (ln.split(maxsplit=1) for ln in map(str.strip, lines)
                                                   if ln and not ln.startswith("#"))}


def sha256_file(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def verify_checksum(path: Path, rel: str) -> None:
    """Refuse a shipped data file whose SHA-256 differs from ``data/MANIFEST.sha256``."""
    expected = _manifest().get(rel)
    got = expected and sha256_file(path)
    if got != expected:
        raise InputError(
            f"{path}: checksum mismatch for {rel} (expected {expected[:12]}..., got {got[:12]}...); the file "
            "is corrupt or a different version. Delete it and run `make data` to link a fresh copy from "
            "../shared/data")


def load(name_or_path, *, verify: bool = True, keep_flagged: bool = False,
         allow_empty_items: bool = False) -> Responses:
    """A `Responses` from a name of :data:`DATASETS`, a ``.npz``, ``.csv`` or ``.parquet`` file. ``keep_flagged``:
    keep rows flagged in ``model_notes``; ``verify``: check shipped files against ``data/MANIFEST.sha256``;
    ``allow_empty_items``: keep items no model answered."""
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
        return read_table(path, allow_empty_items=allow_empty_items)
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
    for k, v in arrays.items():  # a length both could have is a model extra
        if v.ndim == 1 and v.shape[0] in (n_items, n_models):
            (model_extras if v.shape[0] == n_models else item_extras)[k] = v
    out = from_arrays(r, models, items, target, texts, name=name, item_extras=item_extras,
                      model_extras=model_extras, allow_empty_items=allow_empty_items)
    notes = out.model_extras.get("model_notes")
    if notes is not None and not keep_flagged:
        flagged = np.char.str_len(notes.astype(str)) > 0
        if flagged.any():
            out = out.subset(models=~flagged)
    return out


def link_shared_data(dest: Path | None = None, source: Path | None = None, verify: bool = True) -> list[str]:
    """Link (or copy) the shipped datasets from ``../shared/data`` into ``data/``, verified; one line per dataset."""
    dest = Path(dest) if dest else PROJECT_ROOT / "data"
    source = Path(source) if source else (PROJECT_ROOT / ".." / "shared" / "data").resolve()
    lines = []
    for name, rel in DATASETS.items():
        target = dest / rel
        src = source / rel
        if not target.exists():
            if not src.is_file():
                raise InputError(f"{rel}: not in data/ and not found in {source}; put the shared data folder at "
                                 "../shared/data or set ESSENCE_DATA")
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
    return {"dataset": r.name, "models": r.n_models, "items": r.n_items,
            "scores": "0/1" if r.is_binary else "continuous", "missing cells": int(np.isnan(r.responses).sum()),
            "constant items": int((std == 0).sum()), "texts": r.texts is not None, "target": r.target_source,
            "target mean (pp)": float(np.mean(r.target)), "target sd (pp)": float(np.std(r.target)),
            "target min (pp)": float(np.min(r.target)), "target max (pp)": float(np.max(r.target)),
            "pre-selected pool": r.name in METABENCH}


def items_from(src, data) -> list[bool]:
    """``--items-from``: mask ``(n_items,)`` of the ids ``src`` holds (a responses file or one item id per line)."""
    src = Path(src)
    if not src.is_file():
        raise UsageError(f"--items-from {src}: " + ("is a folder" if src.is_dir() else "no such file")
                         + "; give a responses file (.npz, .csv, .parquet) or a text file with one item id per line")
    if src.suffix.lower() in (".npz", ".csv", ".parquet"):
        ids = load(src, allow_empty_items=True).items.tolist()
    else:
        try:
            ids = [ln.strip() for ln in src.read_text(encoding="utf-8").splitlines() if ln.strip()]
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"--items-from {src}: not a readable text file ({exc})") from None
    if not ids:
        raise UsageError(f"--items-from {src}: holds no item ids; give one item id per line")
    known = set(data.items.tolist())
    unknown = [i for i in dict.fromkeys(ids) if i not in known]
    if unknown:
        shown = ", ".join(map(repr, unknown[:5])) + (f" and {len(unknown) - 5} more" if len(unknown) > 5 else "")
        raise UsageError(f"--items-from {src}: {len(unknown)} id(s) are not items of {data.name}: {shown}; "
                         f"remove them or check the ids against the dataset")
    keep = set(ids)
    return [i in keep for i in data.items.tolist()]
