"""essence: compress an LLM benchmark to a few items that keep its verdict (:func:`compress`, :func:`load`)."""

from pathlib import Path

from .artifact import adaptive as _adaptive  # noqa: F401  (registers the "essence.adaptive" schema for load)
from .artifact.base import load_artifact
from .artifact.compare import compare
from .artifact.compressed import Compressed
from .artifact.refit import refit
from .data import load as load_data
from .data._version import __version__
from .suite import Suite, SuiteCompressed, compress_suite, load_suite

__all__ = ["compress", "load", "load_data", "compare", "refit", "Compressed", "SuiteCompressed", "__version__"]

#: the default method, on the command line and here
DEFAULT_METHOD = "auto"


def compress(data, k: int, method: str = DEFAULT_METHOD, seed: int = 0, **params):
    """Choose ``k`` items and fit the reconstructor: one benchmark (name, path or Responses) gives a
    :class:`~essence.artifact.compressed.Compressed`, several (a list or a Suite) a
    :class:`~essence.suite.SuiteCompressed`; ``params`` go to the compress function of that kind."""
    from .artifact.compressed import compress as compress_one

    if isinstance(data, (list, tuple)) and len(data) == 1:
        data = data[0]
    if isinstance(data, (list, tuple)) or isinstance(data, Suite):
        suite = data if isinstance(data, Suite) else load_suite(list(data))
        return compress_suite(suite, k, method="essence" if method == "auto" else method, seed=seed, **params)
    data = load_data(data) if isinstance(data, (str, Path)) else data
    if method == "adaptive":  # an item bank + adaptive testing (essence.artifact.adaptive), not a fixed subset
        return _adaptive.compress_adaptive(data, k, seed=seed, **params)
    return compress_one(data, k, method=method, seed=seed, **params)


def load(path):
    """The artifact written by :meth:`essence.artifact.base.Artifact.save` at ``path``, of either kind (:class:`Compressed`, :class:`SuiteCompressed`)."""
    return load_artifact(path)

