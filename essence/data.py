"""Per-item results of many models: the `Responses` container, loading, validation and splits.

Conventions (see ``docs/architecture.md``):

* ``responses`` is always ``(n_models, n_items)`` float64 in [0, 1]; ``NaN`` marks a missing cell.
* ``target`` is each model's full-benchmark score in percentage points (0-100). For the metabench
  pools it is the genuine accuracy over the *whole* original benchmark (``full_score``); elsewhere it
  is ``100 * nanmean(responses, axis=1)``. Subsetting items never changes ``target``: the job of a
  compressed benchmark is to reconstruct the full score from fewer items.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, NamedTuple

import numpy as np
from .errors import InputError

__all__ = [
    "DATASETS",
    "Responses",
    "Split",
    "load",
    "from_arrays",
    "resolve_dataset",
    "split_models",
    "verify_checksum",
    "link_shared_data",
    "describe",
    "full_benchmark_size",
]

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

PROJECT_ROOT = Path(__file__).resolve().parents[1]
MANIFEST = PROJECT_ROOT / "data" / "MANIFEST.sha256"


# ----------------------------------------------------------------------------------------------
# The container
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class Responses:
    """Per-item results of a set of models on a set of items.

    Attributes
    ----------
    responses : ndarray, shape (n_models, n_items), float64
        Score of each model on each item in [0, 1] (0/1 correctness or a continuous score); NaN = missing.
    models : ndarray, shape (n_models,), str
        Unique model ids.
    items : ndarray, shape (n_items,), str
        Unique item ids.
    target : ndarray, shape (n_models,), float64
        Full-benchmark score of each model, in percentage points.
    texts : ndarray, shape (n_items,), str, or None
        Item texts where the source has them.
    name : str
        Dataset name or file stem, for messages and artifacts.
    item_extras, model_extras : dict of ndarray
        Source-specific per-item ``(n_items,)`` and per-model ``(n_models,)`` arrays (e.g. ``prompts``).
    target_source : str
        ``"full_score"`` when the file provides the full-benchmark score, else ``"row_mean"``.

    Build one with :func:`load` or :func:`from_arrays`; both validate every array.
    """

    responses: np.ndarray
    models: np.ndarray
    items: np.ndarray
    target: np.ndarray
    texts: np.ndarray | None = None
    name: str = "responses"
    item_extras: dict = field(default_factory=dict)
    model_extras: dict = field(default_factory=dict)
    target_source: str = "row_mean"

    def __post_init__(self):
        # shared by reference between subsets and callers: never let anyone write into them
        for arr in (self.responses, self.target):
            arr.setflags(write=False)

    @property
    def n_models(self) -> int:
        return int(self.responses.shape[0])

    @property
    def n_items(self) -> int:
        return int(self.responses.shape[1])

    @property
    def shape(self) -> tuple[int, int]:
        return self.responses.shape  # type: ignore[return-value]

    @property
    def is_binary(self) -> bool:
        """True when every observed cell is exactly 0 or 1."""
        r = self.responses[~np.isnan(self.responses)]
        return bool(np.all((r == 0) | (r == 1)))

    @property
    def missing_fraction(self) -> float:
        return float(np.isnan(self.responses).mean())

    def __repr__(self) -> str:
        return (
            f"Responses(name={self.name!r}, n_models={self.n_models}, n_items={self.n_items}, "
            f"binary={self.is_binary}, missing={self.missing_fraction:.2%}, target={self.target_source})"
        )

    # -- subsetting ------------------------------------------------------------------------------
    def subset(self, models=None, items=None) -> "Responses":
        """A new `Responses` restricted to some models and/or items; ``target`` is kept as is.

        ``models`` / ``items`` may be integer indices, a boolean mask, or ids (str). Order is kept as
        given. Raises ValueError for unknown ids or indices out of range.
        """
        mi = _as_index(models, self.models, "models")
        ii = _as_index(items, self.items, "items")
        return Responses(
            responses=self.responses[np.ix_(mi, ii)],
            models=self.models[mi],
            items=self.items[ii],
            target=self.target[mi],
            texts=None if self.texts is None else self.texts[ii],
            name=self.name,
            item_extras={k: v[ii] for k, v in self.item_extras.items()},
            model_extras={k: v[mi] for k, v in self.model_extras.items()},
            target_source=self.target_source,
        )

    def item_index(self, ids: Iterable[str]) -> np.ndarray:
        """Integer positions of item ids; ValueError naming the ids that are not present."""
        return _as_index(np.asarray(list(ids), dtype=str), self.items, "items")

    def fingerprint(self) -> str:
        """SHA-256 (hex, 16 chars) of responses, ids and target: identifies the data an artifact was fitted on."""
        h = hashlib.sha256()
        h.update(np.ascontiguousarray(self.responses, dtype=np.float64))  # the buffer itself: no copy
        for arr in (self.models, self.items):
            h.update("\x1f".join(map(str, arr)).encode())
        h.update(np.ascontiguousarray(self.target, dtype=np.float64))
        return h.hexdigest()[:16]


def _as_index(sel, ids: np.ndarray, what: str) -> np.ndarray:
    n = len(ids)
    if sel is None:
        return np.arange(n)
    sel = np.asarray(sel)
    if sel.dtype == bool:
        if sel.shape != (n,):
            raise InputError(f"{what}: boolean mask has shape {sel.shape}, expected ({n},)")
        return np.flatnonzero(sel)
    if sel.dtype.kind in "US":
        pos = {m: i for i, m in enumerate(ids)}
        missing = [s for s in sel.tolist() if s not in pos]
        if missing:
            shown = ", ".join(map(repr, missing[:5]))
            raise InputError(
                f"{what}: {len(missing)} id(s) not found, e.g. {shown}; check the ids against `.{what}`"
            )
        return np.array([pos[s] for s in sel.tolist()], dtype=np.intp)
    if sel.dtype.kind in "iu":
        sel = sel.astype(np.intp).ravel()
        if sel.size and (sel.min() < -n or sel.max() >= n):
            raise InputError(f"{what}: index out of range for {n} {what}")
        return sel
    raise InputError(f"{what}: cannot select with an array of dtype {sel.dtype}; pass indices, a mask or ids")


# ----------------------------------------------------------------------------------------------
# Validation
# ----------------------------------------------------------------------------------------------
def from_arrays(
    responses,
    models=None,
    items=None,
    target=None,
    texts=None,
    name: str = "responses",
    item_extras: dict | None = None,
    model_extras: dict | None = None,
) -> Responses:
    """Validate arrays and build a `Responses`.

    ``responses`` is ``(n_models, n_items)``; ``models`` / ``items`` default to ``"m0".."`` / ``"i0"..``;
    ``target`` (percentage points) defaults to ``100 * nanmean(responses, axis=1)``.
    Every problem raises ValueError naming the array, the problem and the fix.
    """
    try:
        r = np.array(responses, dtype=np.float64)
    except (ValueError, TypeError) as exc:
        raise InputError(
            f"responses: cannot be read as a numeric 2-D array ({exc}); rows must all have the same "
            "length and hold numbers in [0, 1] or NaN"
        ) from None
    if r.ndim != 2:
        raise InputError(f"responses: expected a 2-D array (n_models, n_items), got {r.ndim}-D shape {r.shape}")
    n_models, n_items = r.shape
    if n_models == 0:
        raise InputError("responses: no models (0 rows); give at least one model's results")
    if n_items == 0:
        raise InputError("responses: no items (0 columns); give at least one item")
    if np.isinf(r).any():
        i, j = np.argwhere(np.isinf(r))[0]
        raise InputError(f"responses: {int(np.isinf(r).sum())} infinite value(s), first at row {i}, column {j}; "
                         "use NaN for a missing result")
    finite = r[~np.isnan(r)]
    if finite.size and (finite.min() < 0 or finite.max() > 1):
        bad = int(((r < 0) | (r > 1)).sum())
        raise InputError(
            f"responses: {bad} value(s) outside [0, 1] (min {finite.min():g}, max {finite.max():g}); "
            "scores must be fractions in [0, 1], e.g. divide percentages by 100"
        )

    models = _ids(models, n_models, "models", "m")
    items = _ids(items, n_items, "items", "i")

    all_nan_items = np.flatnonzero(np.isnan(r).all(axis=0))
    if all_nan_items.size:
        raise InputError(
            f"responses: {all_nan_items.size} item(s) have no result from any model (all NaN), e.g. "
            f"{', '.join(map(repr, items[all_nan_items[:3]].tolist()))}; drop those items"
        )
    all_nan_models = np.flatnonzero(np.isnan(r).all(axis=1))
    if all_nan_models.size:
        raise InputError(
            f"responses: {all_nan_models.size} model(s) have no result on any item (all NaN), e.g. "
            f"{', '.join(map(repr, models[all_nan_models[:3]].tolist()))}; drop those models"
        )

    if target is None:
        target = 100.0 * np.nanmean(r, axis=1)
        source = "row_mean"
    else:
        source = "full_score"
        try:
            target = np.array(target, dtype=np.float64)
        except (ValueError, TypeError):
            raise InputError("target: cannot be read as numbers; give one full-benchmark score (pp) per model") from None
        if target.shape != (n_models,):
            raise InputError(f"target: shape {target.shape} does not match the {n_models} models of responses")
        if not np.isfinite(target).all():
            bad = np.flatnonzero(~np.isfinite(target))
            raise InputError(
                f"target: {bad.size} missing or non-finite full score(s), e.g. for "
                f"{', '.join(map(repr, models[bad[:3]].tolist()))}; give every model a finite score or drop it"
            )

    if texts is not None:
        texts = np.asarray(texts, dtype=str)
        if texts.shape != (n_items,):
            raise InputError(f"texts: shape {texts.shape} does not match the {n_items} items of responses")
    item_extras = dict(item_extras or {})
    model_extras = dict(model_extras or {})
    for k, v in item_extras.items():
        if np.shape(v) != (n_items,):
            raise InputError(f"item_extras[{k!r}]: shape {np.shape(v)} does not match the {n_items} items")
    for k, v in model_extras.items():
        if np.shape(v) != (n_models,):
            raise InputError(f"model_extras[{k!r}]: shape {np.shape(v)} does not match the {n_models} models")

    return Responses(
        responses=r,
        models=models,
        items=items,
        target=target,
        texts=texts,
        name=name,
        item_extras={k: np.asarray(v) for k, v in item_extras.items()},
        model_extras={k: np.asarray(v) for k, v in model_extras.items()},
        target_source=source,
    )


def _ids(ids, n: int, what: str, prefix: str) -> np.ndarray:
    if ids is None:
        return np.array([f"{prefix}{i}" for i in range(n)])
    ids = np.asarray(ids)
    if ids.ndim != 1:
        raise InputError(f"{what}: expected a 1-D array of ids, got shape {ids.shape}")
    if len(ids) != n:
        axis = "rows" if what == "models" else "columns"
        raise InputError(f"{what}: {len(ids)} ids for {n} {axis} of responses; give one id per {axis[:-1]}")
    ids = ids.astype(str)
    uniq, counts = np.unique(ids, return_counts=True)
    if (counts > 1).any():
        dups = uniq[counts > 1]
        raise InputError(
            f"{what}: {dups.size} duplicate id(s), e.g. {', '.join(map(repr, dups[:3].tolist()))}; "
            f"ids must be unique (merge or rename the duplicates)"
        )
    return ids


# ----------------------------------------------------------------------------------------------
# Loading
# ----------------------------------------------------------------------------------------------
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


def load(name_or_path, *, verify: bool = True, keep_flagged: bool = False) -> Responses:
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

    Raises ValueError for unknown names, unreadable files and every validation problem.
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
        return _load_npz(path, name=path.stem, keep_flagged=keep_flagged)
    if suffix in (".csv", ".parquet", ".pq"):
        from .readers import read_table  # column chunks / record batches: big tables in bounded memory

        return read_table(path)
    raise InputError(f"{path}: unsupported file type {suffix!r}; use .npz, .csv or .parquet")


def _load_npz(path: Path, name: str, keep_flagged: bool = False) -> Responses:
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
                      model_extras=model_extras)
    notes = out.model_extras.get("model_notes")
    if notes is not None and not keep_flagged:
        flagged = np.char.str_len(notes.astype(str)) > 0
        if flagged.any():
            out = out.subset(models=~flagged)
    return out


def _load_table(path: Path) -> Responses:
    import pandas as pd

    try:
        df = pd.read_csv(path) if path.suffix.lower() == ".csv" else pd.read_parquet(path)
    except Exception as exc:
        raise InputError(f"{path}: unreadable table ({type(exc).__name__}: {exc})") from None
    cols = [str(c) for c in df.columns]
    df.columns = cols
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
        return from_arrays(values, models, items, target, name=path.stem)
    # wide format
    if df["model"].duplicated().any():
        d = df.loc[df["model"].duplicated(), "model"].iloc[0]
        raise InputError(f"models: duplicate id {d!r} in {path}; one row per model")
    target = df.pop("full_score").to_numpy() if "full_score" in cols else None
    models = df.pop("model").astype(str).to_numpy()
    if target is not None:
        try:
            target = target.astype(np.float64)
        except (ValueError, TypeError):
            raise InputError(f"target: non-numeric full_score values in {path}") from None
    return from_arrays(_numeric(df, path), models, df.columns.to_numpy(dtype=str), target, name=path.stem)


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


# ----------------------------------------------------------------------------------------------
# Splits
# ----------------------------------------------------------------------------------------------
class Split(NamedTuple):
    """Disjoint model indices: ``train`` fits, ``val`` chooses, ``test`` is touched once for the reported figure."""

    train: np.ndarray
    val: np.ndarray
    test: np.ndarray


def split_models(responses: Responses | np.ndarray, test: float = 0.1, val: float = 0.1, seed: int = 0) -> Split:
    """Split models into train / validation / test, stratified by target quantiles.

    Models are sorted by target (ties broken at random) and cut into ``round(test * n)`` consecutive
    strata of (almost) equal size; one model is drawn at random from each stratum for the test set.
    The validation set is drawn the same way from the remaining models. So both sets follow the
    quantiles of the target distribution. Identical seeds give identical splits.

    ``responses`` may be a `Responses` (its ``target`` is used) or a target vector ``(n_models,)``.
    Returns index arrays (sorted) into the models.
    """
    y = responses.target if isinstance(responses, Responses) else np.asarray(responses, dtype=float)
    n = len(y)
    for nm, f in (("test", test), ("val", val)):
        if not 0 <= f < 1:
            raise InputError(f"{nm}: fraction {f} must be in [0, 1)")
    if test + val >= 1:
        raise InputError(f"test + val = {test + val} leaves no training models; use smaller fractions")
    n_test, n_val = int(round(test * n)), int(round(val * n))
    if (test > 0 and n_test == 0) or (val > 0 and n_val == 0) or n - n_test - n_val < 2:
        raise InputError(
            f"{n} models are too few to split test={test}, val={val} (need at least one test, one validation "
            "and two training models); add models or change the fractions"
        )
    rng = np.random.default_rng(seed)

    def draw(pool: np.ndarray, m: int) -> np.ndarray:
        if m == 0:
            return np.array([], dtype=np.intp)
        order = pool[np.lexsort((rng.random(pool.size), y[pool]))]
        return np.array([rng.choice(chunk) for chunk in np.array_split(order, m)], dtype=np.intp)

    all_idx = np.arange(n)
    te = draw(all_idx, n_test)
    rest = np.setdiff1d(all_idx, te)
    va = draw(rest, n_val)
    tr = np.setdiff1d(rest, va)
    return Split(np.sort(tr), np.sort(va), np.sort(te))
