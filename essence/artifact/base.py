"""What every artifact shares: one JSON file (no pickle), written atomically, read back with its schema checked.
A subclass names ``SCHEMA``, ``SCHEMA_VERSION``, ``REQUIRED``, defines ``to_dict`` and ``_from_checked``, and is
registered under its schema for :func:`load_artifact`."""

from __future__ import annotations

import hashlib
import json
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import numpy as np
import pandas as pd

from ..data import Responses, load
from ..data._io import jsonable, write_atomic
from ..data._version import __version__
from ..data.errors import EssenceWarning, InputError

__all__ = ["items_hash", "Artifact", "SCHEMAS", "load_artifact", "read_json", "check_same_benchmark", "check_answers",
           "missing_items", "format_figures", "FIGURE_KEYS"]

#: the figures an evaluation reports (:func:`essence.data.metrics.summary`), in print order
FIGURE_KEYS = ("n_models", "rmse", "mae", "kendall", "spearman", "rank_err_5", "rank_err_10", "coverage")


def format_figures(fig: dict) -> str:
    """One line of figures (errors in pp, three decimals): ``n_models=.. rmse=.. ...``."""
    return " ".join(f"{k}={fig[k]}" if k == "n_models" else f"{k}={fig[k]:.3f}"
                    for k in FIGURE_KEYS if fig.get(k) is not None)


def items_hash(items) -> str:
    """``sha256:<16 hex>`` of the chosen item ids in artifact order: two artifacts with the same hash ask a model
    the same items, so results run for one serve the other (``essence refit`` keeps it; ``essence compare``
    checks it)."""
    return "sha256:" + hashlib.sha256("\n".join(map(str, items)).encode("utf-8")).hexdigest()[:16]


#: fewest chosen items and models with which :func:`check_same_benchmark` judges (fewer: too noisy)
MIN_ITEMS_TO_CHECK, MIN_MODELS_TO_CHECK = 30, 10

#: schema name -> artifact class; filled as each class is defined
SCHEMAS: dict[str, type] = {}


def read_json(path) -> dict:
    """The parsed JSON file at ``path``; InputError naming the file for a missing or unreadable one."""
    path = Path(path)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"{path}: no such artifact file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"{path}: not a readable JSON artifact ({exc})") from None


@dataclass(kw_only=True)
class Artifact:
    """Base of the artifacts: shared fields, save/load, schema checks; ``n_inputs``: results files an estimate takes."""

    method: str
    k: int
    seed: int
    params: dict
    dataset: dict
    figures: dict
    split: dict = field(default_factory=dict)
    selection: dict = field(default_factory=dict)
    created: str = ""
    essence_version: str = __version__

    SCHEMA: ClassVar[str] = ""
    SCHEMA_VERSION: ClassVar[int] = 1
    REQUIRED: ClassVar[tuple] = ()
    n_inputs: ClassVar[int] = 1

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        if cls.SCHEMA:
            SCHEMAS[cls.SCHEMA] = cls

    def header(self) -> dict:
        """The fields every artifact file starts with."""
        return {"schema": self.SCHEMA, "schema_version": self.SCHEMA_VERSION,
                "essence_version": self.essence_version, "created": self.created}

    def to_dict(self) -> dict:  # pragma: no cover - every subclass defines it
        raise NotImplementedError

    def save(self, path, overwrite: bool = False) -> Path:
        """Write compact JSON atomically; an existing file is replaced only with ``overwrite=True``."""
        text = json.dumps(jsonable(self.to_dict()), separators=(",", ":"), allow_nan=False)
        return write_atomic(path, text, overwrite=overwrite)

    @classmethod
    def from_dict(cls, d: dict, source: str = "artifact"):
        """Rebuild from :meth:`to_dict` output; InputError for another schema or version, or a missing field."""
        found = d.get("schema") if isinstance(d, dict) else None
        if found != cls.SCHEMA:
            raise InputError(f"{source}: not an essence artifact of this kind (schema {found!r}, expected "
                             f"{cls.SCHEMA!r})")
        if d.get("schema_version") != cls.SCHEMA_VERSION:
            raise InputError(f"{source}: schema version {d.get('schema_version')!r}, this essence ({__version__}) reads "
                             f"version {cls.SCHEMA_VERSION}; recreate it with `essence compress` or use the essence "
                             f"version that wrote it ({d.get('essence_version', 'unknown')})")
        missing = [f for f in cls.REQUIRED if f not in d]
        if missing:
            raise InputError(f"{source}: missing field(s) {', '.join(missing)}; the file is incomplete or hand-edited")
        return cls._from_checked(d, source)

    @classmethod
    def _from_checked(cls, d: dict, source: str):  # pragma: no cover - every subclass defines it
        raise NotImplementedError

    @classmethod
    def load(cls, path):
        """Read an artifact of this class written by :meth:`save`; InputError with the reason for anything else."""
        return cls.from_dict(read_json(path), source=str(path))

    def inputs(self, paths) -> list:
        """``paths`` (one, or a list) checked against :attr:`n_inputs`: the list an estimate reads."""
        paths = list(paths) if isinstance(paths, (list, tuple)) else [paths]
        if len(paths) != self.n_inputs:
            raise InputError(f"this artifact takes {self.n_inputs} results file(s) (one per benchmark"
                             f"{', in its order: ' + ', '.join(self.names) if self.n_inputs > 1 else ''}), "
                             f"got {len(paths)}")
        return paths

    def _data(self, data, evaluate: bool = False):
        """``data`` as given, or loaded from its path (one, or a list of one); ``evaluate``: it must be Responses."""
        if isinstance(data, (list, tuple)):
            (data,) = self.inputs(data)
        if isinstance(data, (str, Path)):
            data = load(data, allow_empty_items=True)
        if evaluate and not isinstance(data, Responses):
            raise InputError("evaluate: data must be a Responses or a dataset name/path with true scores")
        return data

    def _table(self, data) -> tuple[list, np.ndarray, np.ndarray]:
        """``(item ids, models, responses)`` of a Responses, a wide DataFrame or a path."""
        data = self._data(data)
        if isinstance(data, Responses):
            return data.items.tolist(), data.models, data.responses
        if isinstance(data, pd.DataFrame):
            df = data.set_index("model") if "model" in data.columns else data
            return ([str(c) for c in df.columns], df.index.to_numpy(dtype=str),
                    df.apply(pd.to_numeric, errors="coerce").to_numpy(dtype=np.float64))
        raise InputError("estimate: give a Responses, a wide DataFrame (a 'model' column + item columns) or a path")


def check_same_benchmark(X, reference_means, what: str) -> float | None:
    """Correlation (None: too few to judge) of ``X``'s item means with ``reference_means``; warns unless clearly > 0."""
    if reference_means is None:
        return None
    X = np.asarray(X, dtype=np.float64)
    ref = np.asarray(reference_means, dtype=np.float64)
    if X.shape[0] < MIN_MODELS_TO_CHECK or ref.shape != (X.shape[1],):
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        means = np.nanmean(X, axis=0)
    ok = np.isfinite(means) & np.isfinite(ref)
    n = int(ok.sum())
    if n < MIN_ITEMS_TO_CHECK or np.ptp(means[ok]) == 0 or np.ptp(ref[ok]) == 0:
        return None
    r = float(np.corrcoef(means[ok], ref[ok])[0, 1])
    if r < np.tanh(1.645 / np.sqrt(n - 3)):
        warnings.warn(f"{what}: the item means of these {X.shape[0]} models on the artifact's items do not follow the "
                      f"reference models' (correlation {r:.2f} over {n} items): the data look like another benchmark "
                      "under the same item ids; check that they are results of the benchmark the artifact was "
                      "compressed from", EssenceWarning, stacklevel=3)
    return r


def missing_items(missing: list) -> str:
    """The first five of ``missing`` item ids, and how many more."""
    return ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")


def check_answers(X, models) -> None:
    """InputError when answers ``X`` ``(n, k)`` leave [0, 1] or a model of ``models`` ``(n,)`` has none."""
    finite = X[~np.isnan(X)]
    if finite.size and (finite.min() < 0 or finite.max() > 1):
        raise InputError("responses: values outside [0, 1] on the chosen items; scores must be fractions")
    empty = np.isnan(X).all(axis=1)
    if empty.any():
        raise InputError(f"{int(empty.sum())} model(s) have no result on any chosen item, e.g. "
                         f"{str(np.asarray(models)[empty][0])!r}; drop them or run them on the chosen items")


def load_artifact(path) -> Artifact:
    """The artifact at ``path``, of whichever registered kind its schema names."""
    d = read_json(path)
    schema = d.get("schema") if isinstance(d, dict) else None
    if schema not in SCHEMAS:
        raise InputError(f"{path}: not an essence artifact (schema {schema!r}; known: {', '.join(sorted(SCHEMAS))})")
    return SCHEMAS[schema].from_dict(d, source=str(path))
