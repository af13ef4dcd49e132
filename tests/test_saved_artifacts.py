"""A user's saved artifact keeps working: artifacts written by an earlier version of the code are committed under
``tests/artifacts/`` (one benchmark with the default ``auto``, a suite, an adaptive item bank), each with the
estimates it gave when it was written; today's code must load each and give the same estimates.

Never regenerate them to make this test pass: that is what it guards against. A new artifact schema adds new files
(``python tests/test_saved_artifacts.py --write NAME``) beside the old ones, which must keep loading.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

HERE = Path(__file__).resolve().parent / "artifacts"
#: name -> how it was made
MADE = {
    "musr-auto-k20": "essence.compress('musr', k=20, seed=0, progress=False)",
    "suite-random-k30": "essence.compress(['truthfulqa', 'winogrande'], k=30, method='random', seed=0, progress=False)",
    "arc_challenge-adaptive-k15": "essence.compress('arc_challenge', k=15, method='adaptive', seed=0, progress=False)",
}
N_MODELS = 12  # the estimates recorded: the benchmark's first models (estimating needs only their answers)


def _models(art):
    """The data the recorded estimates are of: the first N_MODELS models of the artifact's benchmark (or suite)."""
    from essence.data import load
    from essence.suite import load_suite

    if "names" in art.dataset:
        return list(load_suite(list(art.dataset["names"])).subset(np.arange(N_MODELS)).members)
    return load(art.dataset["name"]).subset(models=np.arange(N_MODELS))


def _write(name: str) -> None:
    import essence  # noqa: F401  (MADE's expressions)

    HERE.mkdir(exist_ok=True)
    if not (HERE / f"{name}.json").exists():
        eval(MADE[name]).save(HERE / f"{name}.json")  # noqa: S307 - our own fixed expressions
    art = essence.load(HERE / f"{name}.json")
    est = essence.load(HERE / f"{name}.json").estimate(_models(art))
    est.to_csv(HERE / f"{name}.estimates.csv", index=False)


@pytest.mark.parametrize("name", sorted(MADE))
def test_a_committed_artifact_loads_and_estimates_as_recorded(name):
    import essence

    path = HERE / f"{name}.json"
    art = essence.load(path)
    assert json.loads(path.read_text())["essence_version"]  # written by a release of the code, recorded
    got = art.estimate(_models(art))
    want = pd.read_csv(HERE / f"{name}.estimates.csv")
    assert list(got.columns) == list(want.columns), name
    assert got["model"].astype(str).tolist() == want["model"].astype(str).tolist()
    for c in want.columns[1:]:
        if want[c].dtype == object or want[c].dtype == bool:
            assert got[c].astype(str).tolist() == want[c].astype(str).tolist(), c
        else:
            np.testing.assert_allclose(got[c].to_numpy(float), want[c].to_numpy(float), atol=1e-6, err_msg=c)


if __name__ == "__main__":
    if sys.argv[1:2] != ["--write"] or not set(sys.argv[2:]) <= set(MADE) or not sys.argv[2:]:
        raise SystemExit(f"usage: python tests/test_saved_artifacts.py --write NAME... (NAME in {sorted(MADE)})")
    for n in sys.argv[2:]:
        _write(n)
