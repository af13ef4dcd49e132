"""The CI switch (tests/ci_switch.py, wired in tests/conftest.py) reaches a module skipped while it is collected.

tests/test_lmeval.py reads the pythia-14m harness logs at import: without them the module is skipped whole
(``allow_module_level``), and under ``ESSENCE_REQUIRE_RESOURCES=1`` (.ci/run) that skip is a collection error. Run in
a pytest subprocess, collection only, with a plugin that hides the data folders (``data_roots()`` finds none).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ci_switch import ENV

ROOT = Path(__file__).resolve().parents[1]


def _collect(tmp_path, switch: bool) -> subprocess.CompletedProcess:
    (tmp_path / "no_data_roots.py").write_text("import essence.data\nessence.data.data_roots = lambda: []\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    env.pop(ENV, None)
    if switch:
        env[ENV] = "1"
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no_data_roots",
                           "--collect-only", "-rs", "tests/test_lmeval.py"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)


@pytest.mark.slow
def test_a_module_without_its_logs_is_skipped_and_fails_only_under_the_switch(tmp_path):
    off = _collect(tmp_path, switch=False)
    assert off.returncode in (0, 5), off.stdout[-2000:] + off.stderr[-2000:]  # 5: nothing collected
    assert "pythia-14m logs not found" in off.stdout and "error" not in off.stdout.lower(), off.stdout[-2000:]
    on = _collect(tmp_path, switch=True)
    assert on.returncode not in (0, 5), on.stdout[-2000:]
    assert f"{ENV}=1 requires what it needs" in on.stdout and "pythia-14m logs not found" in on.stdout
