"""How heavy numeric code runs: BLAS and OpenMP held to one thread.

Measured on the 2-core machines this project targets: with the other core busy, multi-threaded BLAS
(pygam's QR, ridge, the GA's products) and OpenMP (K-Means) run 5-20x slower than one thread, because
spinning threads wait for a core. One thread also makes float rounding, and so the chosen items,
independent of the machine's core count, and leaves the other core to a parallel sweep worker.
"""

from __future__ import annotations

__all__ = ["single_thread"]


def single_thread():
    """Context manager: BLAS and OpenMP limited to one thread inside the ``with`` block."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1)
