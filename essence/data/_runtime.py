"""BLAS and OpenMP held to one thread: no spinning on busy cores, rounding independent of the core count."""

from __future__ import annotations

from threadpoolctl import threadpool_limits

__all__ = ["single_thread"]


def single_thread():
    """Context manager: BLAS and OpenMP limited to one thread inside the ``with`` block."""
    return threadpool_limits(limits=1)
