"""essence.data.pinning: the CPU code paths every entry point pins, and that they hold where the numbers are made."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from essence.data import pinning

AVX512 = {"avx2", "fma", "avx512f", "avx512_vbmi2", "avx512_fp16"}
#: a machine emulated with the switches the pins also set: the pins override it
PRESCOTT = {"OPENBLAS_CORETYPE": "Prescott", "NPY_DISABLE_CPU_FEATURES": "X86_V3,X86_V4",
            "ATEN_CPU_CAPABILITY": "default"}


def _clean_env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in pinning.pinned_env() and k != pinning.MARK}
    env.pop(pinning.OPT_OUT, None)
    return {**env, **extra}


def test_the_pins_follow_the_cpu():
    full = pinning.pinned_env(AVX512, "x86_64")
    assert full["OPENBLAS_CORETYPE"] == "Haswell" and full["ATEN_CPU_CAPABILITY"] == "avx2"
    assert full["NPY_DISABLE_CPU_FEATURES"] == "X86_V4,AVX512_ICL,AVX512_SPR"
    assert full["OMP_NUM_THREADS"] == full["OPENBLAS_NUM_THREADS"] == "1"
    avx2 = pinning.pinned_env({"avx2", "fma"}, "x86_64")
    assert "NPY_DISABLE_CPU_FEATURES" not in avx2  # nothing above AVX2 to turn off
    assert avx2["OPENBLAS_CORETYPE"] == "Haswell"
    assert pinning.pinned_env({"avx2", "fma", "avx512f"}, "x86_64")["NPY_DISABLE_CPU_FEATURES"] == "X86_V4"
    for flags, machine in (({"avx", "sse3"}, "x86_64"), ({"avx2", "fma"}, "aarch64"), (None, "arm64")):
        assert pinning.pinned_env(flags or set(), machine) == pinning.THREADS  # below the level: threads only


def test_the_test_session_runs_pinned():
    """conftest pins before numpy loads; on this machine the BLAS, numpy and torch run the pinned level."""
    if os.environ.get(pinning.OPT_OUT):
        pytest.skip("ESSENCE_NATIVE_CPU is set: the session runs the CPU's own paths on purpose")
    got = pinning.state()
    assert got["pinned"] and got["blas_threads"] == 1 and got["numpy_above_avx2"] == []
    if "OPENBLAS_CORETYPE" in pinning.pinned_env():
        import torch

        assert got["blas"] == "Haswell" and got["level"] == pinning.LEVEL
        assert torch.backends.cpu.get_cpu_capability() == "AVX2"


def _state_in(cmd: list[str], env: dict) -> dict:
    code = "import json; from essence.data.pinning import state; print(json.dumps(state()))"
    out = subprocess.run([*cmd, code], env=env, capture_output=True, text=True, timeout=120, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


@pytest.mark.slow
def test_a_process_that_loaded_numpy_restarts_pinned_over_an_emulated_machine():
    """ensure() after numpy loaded restarts the process with the pins, which override a machine emulated by the same
    switches; run ... -- CMD starts CMD pinned; ESSENCE_NATIVE_CPU keeps the emulated machine's paths."""
    if "OPENBLAS_CORETYPE" not in pinning.pinned_env():
        pytest.skip("this CPU is below the pinned level: only the threads are pinned")
    restart = [sys.executable, "-c", "import numpy, json; from essence.data.pinning import ensure, state; ensure(); "
               "print(json.dumps(state()))"]
    out = subprocess.run(restart, env=_clean_env(**PRESCOTT), capture_output=True, text=True, timeout=120, check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1])["blas"] == "Haswell"
    launched = _state_in([sys.executable, "-m", "essence.data.pinning", "run", "--", sys.executable, "-c"],
                         _clean_env(**PRESCOTT))
    assert launched["blas"] == "Haswell" and launched["pinned"]
    native = _state_in([sys.executable, "-c"], _clean_env(**PRESCOTT, **{pinning.OPT_OUT: "1"}))
    assert native["blas"] != "Haswell" and not native["pinned"]


def test_the_command_line_pins_only_where_it_can(capsys):
    from essence.cli import main

    os.environ.pop(pinning.MARK)  # as a Python program that loaded numpy unpinned
    try:
        assert main(["--pinned", "data"]) == 2
    finally:
        pinning.ensure(restart=False)
    assert "--pinned: the pins must be set before numpy loads" in capsys.readouterr().err
    assert main(["--pinned", "data"]) == 0  # pinned already: nothing to restart


def test_the_kernel_spec_carries_the_pins(tmp_path):
    path = pinning.kernel_spec(tmp_path)
    spec = json.loads(path.read_text())
    assert spec["argv"][:3] == ["python", "-m", "ipykernel_launcher"]
    assert {k: spec["env"][k] for k in pinning.pinned_env()} == pinning.pinned_env()
    assert spec["env"][pinning.MARK]
    assert pinning.kernel_spec(tmp_path) == path and json.loads(path.read_text()) == spec  # rewriting is idempotent


def test_a_cached_run_made_with_other_code_paths_is_stale(monkeypatch):
    from essence.sweep import signatures

    pinned = signatures._core_hash()
    monkeypatch.setenv(pinning.MARK, "native")
    assert signatures._core_hash() != pinned
