"""How heavy numeric code runs: BLAS and OpenMP held to one thread.

On small shared machines spinning BLAS / OpenMP threads wait for a busy core; one thread also makes float
rounding, and so the chosen items, independent of the machine's core count.
"""

from __future__ import annotations

__all__ = ["single_thread"]


def single_thread():
    """Context manager: BLAS and OpenMP limited to one thread inside the ``with`` block."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1)
