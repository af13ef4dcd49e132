"""benchmarks/suite_regimes.py: a suite compressed from a few drawn models, scored on all the others."""

from __future__ import annotations

import json

import numpy as np
import pytest

from script_loader import load_script


def _module():
    return load_script("benchmarks/suite_regimes.py")


@pytest.fixture(scope="module")
def small_suite():
    from essence.data import load
    from essence.suite import make_suite

    return make_suite([load(n).subset(items=np.arange(20)) for n in ("arc", "winogrande")])


def test_one_run_draws_m_models_and_scores_every_other_shared_model(small_suite):
    mod = _module()
    rec = mod.one_run(small_suite, 20, 1, "random", 10)
    assert rec["n_test"] == small_suite.n_models - 20 and rec["n_fit"] == 18
    assert set(rec["rmse"]) == {"arc", "winogrande", "mean"} and all(v > 0 for v in rec["rmse"].values())
    assert sum(rec["budget"].values()) == 10 and rec["fallback"] is None
    # the default keeps random items below min_search_models: the same items, so the same figures
    from essence.data.errors import EssenceWarning

    with pytest.warns(EssenceWarning, match="min_search_models"):
        default = mod.one_run(small_suite, 20, 1, "default", 10)
    assert default["fallback"]["models"] == 18 and default["rmse"] == pytest.approx(rec["rmse"])
    # another draw is another set of models
    assert mod.one_run(small_suite, 20, 2, "random", 10)["rmse"] != rec["rmse"]


def test_cached_only_summarises_what_is_there_and_refuses_an_empty_cache(tmp_path, capsys):
    mod = _module()
    assert mod.main(["--models", "20", "--draws", "1", "--cache", str(tmp_path), "--cached-only"]) == 1
    assert "no runs" in capsys.readouterr().out
    names = ("arc", "gsm8k", "mmlu", "truthfulqa", "winogrande")
    for a, e in (("random", 4.0), ("default", 4.0)):
        rec = {"m": 20, "draw": 0, "approach": a, "k": 250, "n_test": 1787, "seconds": 1.0,
               "rmse": {**{n: e for n in names}, "mean": 2.0}}
        (tmp_path / f"{'+'.join(names)}-m20-d0-{a}-k250.json").write_text(json.dumps(rec))
    assert mod.main(["--models", "20", "--draws", "1", "--approaches", "random", "default", "--cache", str(tmp_path),
                     "--cached-only"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("|") and "default" in line)
    assert [c.strip() for c in row.strip("|").split("|")][-2:] == ["1", "1"]  # its ratios to random
    assert "4.000 ± 0.000" in out and "pre-selected" in out
