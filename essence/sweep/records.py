"""The sweep's on-disk records (file names, schema, the cache) and table rows."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import numpy as np

from .. import data as _data
from ..data._io import atomic_path
from .suites import suite_rows

__all__ = ["RUN_SCHEMA", "RUN_SCHEMA_VERSION", "COLUMNS", "SUMMARY_COLUMNS", "run_path", "load_runs"]

RUN_SCHEMA = "essence.sweep.run"
RUN_SCHEMA_VERSION = 1

_METRICS = ("rmse", "mae", "kendall", "spearman", "pearson", "rank_err_5", "rank_err_10", "coverage")
#: Columns of the results table: the metrics are test figures (:func:`essence.data.metrics.summary`; ``rmse``,
#: ``mae`` pp, the correlations in [-1, 1], the rest shares in [0, 1]), ``seconds`` wall-clock; ``split`` ``random``
#: or ``top``; ``benchmark`` the dataset, or a suite's member or ``"mean"``; ``error`` ``""`` or ``"Type: message"``;
#: ``reconstructor`` chosen on validation; ``pool_preselected`` / ``caveat``: :data:`essence.data.POOL_CAVEAT`.
COLUMNS = ["dataset", "split", "benchmark", "method", "k", "seed", *_METRICS, "seconds", "n_test", "error",
           "reconstructor", "split_id", "pool_preselected", "caveat"]

#: Columns of :func:`essence.sweep.tables.summarise`.
SUMMARY_COLUMNS = ["dataset", "split", "benchmark", "method", "k", "n_runs", "n_failed", "rmse_mean", "rmse_sd",
                   "kendall_mean", "kendall_sd", "pool_preselected", "error", "ratio_to_random"]


def _key_name(dataset: str, method: str, k: int, seed: int) -> str:
    dataset, method = (re.sub(r"[^A-Za-z0-9_.+-]", "-", str(x)) for x in (dataset, method))
    return f"{dataset}__{method}__k{int(k)}__s{int(seed)}"


def run_path(out, dataset: str, method: str, k: int, seed: int) -> Path:
    """Cache file of one run: ``out/runs/<dataset>__<method>__k<k>__s<seed>.json``."""
    return Path(out) / "runs" / f"{_key_name(dataset, method, k, seed)}.json"


def _split_id(split) -> str:
    h = hashlib.sha256()
    for part in split:
        h.update(np.asarray(part, dtype=np.int64).tobytes())
        h.update(b"|")
    return h.hexdigest()[:12]


def _read_record(path: Path) -> dict | None:
    try:
        rec = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    ok = isinstance(rec, dict) and rec.get("schema") == RUN_SCHEMA and rec.get("schema_version") == RUN_SCHEMA_VERSION
    return rec if ok else None


def load_runs(out) -> dict:
    """Every cached run under ``out/runs``: ``{(dataset, method, k, seed): record}``; a record holds ``figures``
    (``{"test": ..., "validation": ...}``), ``items``, ``seconds``, ``signature`` and (if kept) ``artifact``."""
    recs = [r for r in map(_read_record, sorted((Path(out) / "runs").glob("*.json"))) if r is not None]
    return {(r["dataset"], r["method"], int(r["k"]), int(r["seed"])): r for r in recs}


def _stale_reason(rec: dict, signature: dict) -> str:
    old = rec.get("signature", {})
    return ", ".join(name for name in signature if old.get(name) != signature[name]) or "signature"


def _error_rows(key: tuple, meta: dict, error: str, members=None) -> list[dict]:
    """The rows of a run that did not run: one, or for a suite (``members``) one per member and the mean."""
    return _rows({"dataset": key[0], "method": key[1], "k": key[2], "seed": key[3], "error": error, "seconds": 0.0,
                  **({"members": list(members)} if members else {})}, meta)


def _rows(rec: dict, meta: dict) -> list[dict]:
    """Table rows of a run record: one, or a suite's (:func:`essence.sweep.suites.suite_rows`)."""
    if rec.get("members"):
        return suite_rows(rec, meta, _row)
    name = rec["dataset"].partition("@")[0]
    test = (rec.get("figures") or {}).get("test") or {}
    return [_row(rec, meta, name, test, name in _data.METABENCH)]


def _row(rec: dict, meta: dict, benchmark: str, test: dict, preselected: bool) -> dict:
    """One table row: ``test`` is the test summary of ``benchmark`` (:func:`essence.data.metrics.summary`)."""
    dataset, _, kind = rec["dataset"].partition("@")
    return {"dataset": dataset, "split": kind or "random", "benchmark": benchmark, "method": rec["method"],
            "k": int(rec["k"]), "seed": int(rec["seed"]),
            **{m: (np.nan if test.get(m) is None else float(test[m])) for m in _METRICS},
            "seconds": float(rec.get("seconds") or 0.0), "n_test": int(meta["n_test"]), "error": rec.get("error") or "",
            "reconstructor": rec.get("reconstructor") or "", "split_id": meta["split_id"],
            "pool_preselected": bool(preselected), "caveat": _data.POOL_CAVEAT if preselected else ""}


def _write_table(df, parquet: Path, csv: Path) -> None:
    """Write both files atomically."""
    with atomic_path(parquet) as tmp_parquet, atomic_path(csv) as tmp_csv:
        df.to_parquet(tmp_parquet, index=False)
        df.to_csv(tmp_csv, index=False)
