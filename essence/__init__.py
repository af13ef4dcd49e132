"""essence: compress an LLM benchmark to a few items that keep its verdict.

Modules: ``data`` (Responses, loading, splits), ``metrics`` (errors in percentage points, rank
agreement), ``reconstruct`` (subset -> full score models), ``methods`` (item selectors),
``compressed`` (the artifact and :func:`compress`), ``cli`` (the ``essence`` command).
See docs/architecture.md.
"""

__version__ = "0.1.0"

from . import data  # noqa: E402
from .data import metrics  # noqa: E402

__all__ = ["data", "metrics", "__version__"]
