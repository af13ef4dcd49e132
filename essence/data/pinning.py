"""One set of CPU code paths on every machine, so that the same seed gives the same subset and the same figures.

BLAS kernels, numpy's and torch's SIMD dispatch and thread counts each change last bits, and a search that branches
on a comparison turns last bits into another subset. A library reads these switches once, when it loads, so every
entry point (docs/architecture.md lists them) calls :func:`ensure` before anything heavy. The pinned level is
x86-64-v3 (AVX2 + FMA): OpenBLAS's Haswell kernels, numpy's AVX-512 dispatch off, torch, MKL and oneDNN at AVX2, one
BLAS/OpenMP thread; another CPU gets the thread pins only (:func:`state`). ``ESSENCE_NATIVE_CPU=1`` turns the pins
off. This module imports only the standard library.
"""

from __future__ import annotations

import functools
import os
import platform
import sys
from pathlib import Path

__all__ = ["pinned_env", "ensure", "state", "is_pinned", "MARK", "OPT_OUT", "LEVEL"]

#: set by :func:`ensure` once the pins are in the environment (its value: the pins, so a change of them re-pins)
MARK = "ESSENCE_PINNED"
#: set to 1 to keep the CPU's own code paths
OPT_OUT = "ESSENCE_NATIVE_CPU"
#: the code path level every pinned machine runs
LEVEL = "x86-64-v3 (AVX2 + FMA)"

THREADS = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
_X86_LEVEL = {
    "OPENBLAS_CORETYPE": "Haswell",      # OpenBLAS's AVX2 kernels (not SkylakeX's AVX-512, nor Zen's own)
    "ATEN_CPU_CAPABILITY": "avx2",       # torch's vectorised kernels
    "MKL_CBWR": "AVX2,STRICT",           # torch's MKL: conditional bitwise reproducibility at AVX2
    "MKL_ENABLE_INSTRUCTIONS": "AVX2",
    "ONEDNN_MAX_CPU_ISA": "AVX2",        # torch's oneDNN
}
#: numpy's dispatched targets above AVX2, with the CPU flag that says a machine has each (only those it has are
#: turned off: numpy warns about the rest)
_NUMPY_ABOVE = {"X86_V4": "avx512f", "AVX512_ICL": "avx512_vbmi2", "AVX512_SPR": "avx512_fp16"}
_LIBRARIES = ("numpy", "scipy", "torch", "sklearn", "pandas")
_RESTARTED = "ESSENCE_PINNING_RESTARTED"


@functools.lru_cache(maxsize=1)
def _cpu_flags() -> frozenset[str] | None:
    """The CPU's feature flags (Linux's /proc/cpuinfo), or None where they cannot be read."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                return frozenset(line.split(":", 1)[1].split())
    except OSError:
        return None
    return None


def pinned_env(flags: set[str] | None = None, machine: str | None = None) -> dict[str, str]:
    """``{name: value}``: the environment variables that pin the code paths of a CPU with feature ``flags`` and
    ``platform.machine()`` ``machine`` (default: this one's); one without x86-64 AVX2 + FMA gets the thread counts."""
    flags = _cpu_flags() if flags is None else flags
    machine = platform.machine() if machine is None else machine
    env = dict(THREADS)
    if machine.lower() in ("x86_64", "amd64") and flags and {"avx2", "fma"} <= flags:
        env.update(_X86_LEVEL)
        above = [name for name, flag in _NUMPY_ABOVE.items() if flag in flags]
        if above:
            env["NPY_DISABLE_CPU_FEATURES"] = ",".join(above)
    return env


def _pins() -> dict[str, str]:
    """:func:`pinned_env` of this machine with :data:`MARK` (its signature: a change of the pins re-pins)."""
    env = pinned_env()
    return {**env, MARK: ";".join(f"{k}={v}" for k, v in sorted(env.items()))}


def is_pinned(environ=None) -> bool:
    """Whether ``environ`` (default ``os.environ``) already holds this machine's pins."""
    environ = os.environ if environ is None else environ
    return all(environ.get(k) == v for k, v in _pins().items())


def ensure(restart: bool = True) -> bool:
    """Put the pins in ``os.environ`` (overriding values set outside) and, when numpy, scipy or torch is already
    loaded and ``restart``, restart this process with them (``os.execv``: what ran before runs again). True when the
    process runs pinned, False when ``$ESSENCE_NATIVE_CPU`` is set."""
    if os.environ.get(OPT_OUT, "") not in ("", "0"):
        return False
    if is_pinned():
        os.environ.pop(_RESTARTED, None)
        return True
    os.environ.update(_pins())
    if restart and any(m in sys.modules for m in _LIBRARIES):
        if os.environ.get(_RESTARTED) == "1":  # a restarted process that still lacks the pins: never loop
            raise RuntimeError("essence.data.pinning: the restarted process did not receive the pins; set them "
                               "outside (python -m essence.data.pinning env) or set ESSENCE_NATIVE_CPU=1")
        os.environ[_RESTARTED] = "1"
        sys.stdout.flush()
        sys.stderr.flush()
        os.execv(sys.executable, [sys.executable, *sys.orig_argv[1:]])
    os.environ.pop(_RESTARTED, None)
    return True


def state() -> dict:
    """What this process runs: ``{"pinned": bool, "blas": kernel family, "numpy_above_avx2": [features on],
    "threads": BLAS threads, "level": LEVEL or a note}`` (imports numpy and threadpoolctl)."""
    import numpy as np  # noqa: F401  (loads its BLAS)
    from numpy._core._multiarray_umath import __cpu_features__
    from threadpoolctl import threadpool_info

    blas = [i for i in threadpool_info() if i.get("user_api") == "blas"]
    full = "OPENBLAS_CORETYPE" in pinned_env()
    return {
        "pinned": is_pinned(),
        "blas": blas[0].get("architecture") if blas else None,
        "blas_threads": blas[0].get("num_threads") if blas else None,
        "numpy_above_avx2": sorted(n for n in _NUMPY_ABOVE if __cpu_features__.get(n)),
        "level": LEVEL if full else f"threads only: {platform.machine()} without AVX2 + FMA may differ in last bits",
    }


def kernel_spec(prefix: str | os.PathLike = sys.prefix) -> Path:
    """Write the pins into the ``python3`` kernel spec under ``prefix`` (the venv), so that a notebook opened in
    JupyterLab runs pinned as ``make reproduce`` runs it; returns the spec's path."""
    import json

    from ._io import write_atomic

    path = Path(prefix) / "share" / "jupyter" / "kernels" / "python3" / "kernel.json"
    spec = json.loads(path.read_text()) if path.exists() else {
        "argv": ["python", "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (ipykernel)", "language": "python"}
    spec["env"] = _pins()
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_atomic(path, json.dumps(spec, indent=1), overwrite=True)


def _main(argv=None) -> int:
    """``python -m essence.data.pinning run -- CMD ...`` runs CMD pinned; ``env`` prints the pins as NAME=VALUE lines;
    ``kernelspec`` writes them into the venv's kernel spec; ``state`` prints what this process runs."""
    argv = list(sys.argv[1:] if argv is None else argv)
    verb = argv.pop(0) if argv else "state"
    if verb == "run":
        if argv[:1] == ["--"]:
            argv = argv[1:]
        if not argv:
            print("essence.data.pinning run: give a command after --", file=sys.stderr)
            return 2
        ensure(restart=False)
        os.execvp(argv[0], argv)
    if verb == "env":
        print("\n".join(f"{k}={v}" for k, v in _pins().items()))
        return 0
    if verb == "kernelspec":
        print(kernel_spec())
        return 0
    if verb == "state":
        ensure()
        for k, v in state().items():
            print(f"{k}: {v}")
        return 0
    print(f"essence.data.pinning: unknown verb {verb!r} (run, env, kernelspec, state)", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(_main())
