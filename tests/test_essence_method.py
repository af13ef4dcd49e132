"""EssenceSelector end to end through essence.artifact.compressed.compress, on real data slices."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from essence.artifact.compressed import Compressed, compress
from essence.data import split_models
from essence.methods import get_method, make_method

#: small GA / EBM settings that keep a run to a few seconds on the `small` slice
FAST = dict(tau_text=1.0, population=30, generations=40, elites=4, rounds=1, group_population=20,
            group_generations=20, ebm_elites=2, ebm_max_models=150, ebm_max_rounds=300)


def test_registered_and_parameters_documented():
    cls = get_method("essence")
    assert cls._param_names() == ["filter", "fitness", "ga", "k", "progress", "refine", "seed"]
    for group in ("filter", "fitness", "ga", "refine"):
        assert group in cls.__doc__
    # every setting is reachable by its own name and documented by its settings object
    for p in ("tau_text", "tau_rank", "population", "generations", "tournament", "elites", "rounds",
              "group_population", "group_generations", "ebm_elites", "ebm_max_models", "fitness_models", "ridge_alpha"):
        (group,) = [g for g, c in cls._configs.items() if p in c.__dataclass_fields__]
        default = getattr(cls._configs[group](), p)
        assert getattr(cls.route_params({p: default})[group], p) == default
    sel = make_method("essence", 10, fitness="gam", generations=7, **{"refine.rounds": 0})
    assert (sel.fitness.kind, sel.ga.generations, sel.refine.rounds) == ("gam", 7, 0)


def test_end_to_end_through_compress(small, tmp_path):
    art = compress(small, 10, method="essence", seed=0, progress=False, **FAST)
    assert len(art.items) == 10 and len(set(art.items)) == 10 and set(art.items) <= set(small.items)
    sel = art.selection
    json.dumps(sel)  # JSON-able diagnostics
    assert sel["filter"]["n_items"] == 80 and sel["filter"]["n_kept"] <= 80
    assert "text redundancy off (tau_text >= 1)" in sel["filter"]["notes"]
    assert sel["ga"]["generations_run"] == 40 and len(sel["rounds"]) == 1
    assert sel["rounds"][0]["best_group"] in ("high", "low", "random")
    assert set(sel["seconds"]) >= {"screen", "filter", "search"}
    assert sel["reconstructor_choice"] in ("gam", "ridge", "ridge_gam", "line", "mean_ridge", "mlp")
    # + the MLP of essence.reconstructors.choose.pool_candidates: small has 480 non-test models
    assert set(sel["reconstructor_val_rmse"]) == {"gam", "ridge", "ridge_gam", "line", "mean_ridge", "mlp"}
    # the fitness trace never gets worse: the global best is kept by fitness
    trace = [t["fitness_rmse"] for t in sel["val_rmse_trace"]]
    assert all(b <= a + 1e-12 for a, b in zip(trace, trace[1:]))
    path = art.save(tmp_path / "a.json")
    back = Compressed.load(path)
    assert back.items == art.items
    np.testing.assert_allclose(back.estimate(small)["estimate"], art.estimate(small)["estimate"], atol=1e-6)


def test_beats_random_on_validation_models(small):
    """The selection uses training/validation models only; on the validation models it must beat the
    uniform random subset's reconstruction (same split, same k)."""
    ess = compress(small, 10, method="essence", seed=1, progress=False, **FAST)
    rnd = compress(small, 10, method="random", seed=1, progress=False)
    assert ess.figures["validation"]["rmse"] < rnd.figures["validation"]["rmse"]


@pytest.mark.slow
def test_same_seed_same_items_in_process_and_across_processes(small):
    sp = split_models(small, seed=0)
    train, val = small.subset(models=sp.train), small.subset(models=sp.val)
    a = make_method("essence", 8, seed=3, progress=False, **FAST).fit(train, val).items_
    b = make_method("essence", 8, seed=3, progress=False, **FAST).fit(train, val).items_
    np.testing.assert_array_equal(a, b)
    code = (
        "import json, numpy as np\n"
        "from essence.data import load, split_models\n"
        "from essence.methods import make_method\n"
        "r = load('gsm8k'); r = r.subset(models=np.arange(0, r.n_models, 6)[:600], items=np.arange(80))\n"
        "sp = split_models(r, seed=0)\n"
        f"m = make_method('essence', 8, seed=3, progress=False, **{FAST!r})\n"
        "m.fit(r.subset(models=sp.train), r.subset(models=sp.val))\n"
        "print(json.dumps(m.items_.tolist()))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == a.tolist()


def test_paper_fitness_gam_ruler_runs(small):
    art = compress(small, 10, method="essence", seed=0, progress=False, **{**FAST, "fitness": "gam"})
    assert art.selection["ga"]["fitness"] == "gam" and art.selection["ga"]["fitness_models"] == "val"
    assert len(set(art.items)) == 10


def test_text_redundancy_is_wired_to_the_filter(small, monkeypatch):
    import essence.features.text as text

    def fake_embed(texts, **kw):  # items 0 and 1 read the same, everything else orthogonal
        E = np.eye(len(texts), dtype=np.float32)
        E[1] = E[0]
        return E

    monkeypatch.setattr(text, "embed_texts", fake_embed)
    art = compress(small, 10, method="essence", seed=0, progress=False, **{**FAST, "tau_text": 0.9})
    f = art.selection["filter"]
    assert f["text_checked"] and f["dropped_by_reason"].get("text") == 1
    assert f["drops"][0] == {"item": small.items[1], "by": small.items[0], "reason": "text",
                             "text": 1.0, "rank": f["drops"][0]["rank"]}
    assert small.items[1] not in art.items


def test_k_too_large_after_filter_is_a_value_error_and_cli_exit_2(small, tmp_path, capsys):
    with pytest.raises(ValueError, match="lower k or raise tau_text / tau_rank"):
        compress(small, 70, method="essence", seed=0, progress=False, **{**FAST, "tau_rank": 0.3})
    # through the CLI: a small real file, exit status 2 and a one-line message
    from essence.cli import main

    path = tmp_path / "slice.npz"
    np.savez(path, responses=small.responses, models=small.models, items=small.items, full_score=small.target)
    rc = main(["compress", str(path), "--k", "70", "--method", "essence", "--param", "tau_rank=0.3",
               "--out", str(tmp_path / "o.json"), "--quiet"])
    err = capsys.readouterr().err
    assert rc == 2 and "lower k" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "o.json").exists()


def test_bad_parameters_are_value_errors(small):
    for bad in ({"population": 1}, {"elites": 30}, {"fitness": "mse"}, {"group_fraction": 0.0},
                {"fitness_models": "test"}, {"ridge_alpha": 0}):
        with pytest.raises(ValueError):
            compress(small, 5, method="essence", seed=0, progress=False, **{**FAST, **bad})


def test_datasets_without_texts_with_constants_and_missing_cells(alpaca):
    from essence.data import load

    lcb = load("lcb_codegen")
    art = compress(lcb, 10, method="essence", seed=0, progress=False, **{**FAST, "tau_text": 0.9})
    f = art.selection["filter"]
    assert not f["text_checked"] and any("no item texts" in n for n in f["notes"])
    assert f["n_constant"] > 0 and not set(f["constant_items"]) & set(art.items)
    art2 = compress(alpaca, 10, method="essence", seed=0, progress=False, **FAST)
    assert len(set(art2.items)) == 10 and np.isfinite(art2.figures["test"]["rmse"])


def test_k_equal_to_the_pool_returns_every_item(small):
    r = small.subset(items=np.arange(12))
    art = compress(r, 12, method="essence", seed=0, progress=False, **{**FAST, "tau_rank": 1.0})
    assert sorted(art.items) == sorted(r.items.tolist())
    assert art.selection["refinement_note"] == "pool size equals k: nothing to refine"


def test_pre_screen_shrinks_big_pools_and_is_recorded():
    """A GENERATED pool above max_pool is screened to max_pool items before the filter and the GA; the
    artifact records the pool size and what was dropped; the shipped-size path (pool <= max_pool) is
    untouched (nothing screened)."""
    from essence.data.synthetic import generate_mirt

    data = generate_mirt(300, 400, seed=0)
    art = compress(data, 10, method="essence", seed=0, progress=False, **{**FAST, "max_pool": 150})
    sel = art.selection
    assert sel["screen"]["applied"] and sel["screen"]["n_items"] == 400 and sel["screen"]["n_kept"] == 150
    assert sel["screen"]["n_dropped"] == 250 and len(sel["screen"]["dropped"]) == 50  # first 50 listed
    assert sel["pool_size"] == sel["filter"]["n_kept"] <= 150 and sel["ga"]["pool_size"] == sel["pool_size"]
    assert not set(sel["screen"]["dropped"]) & set(art.items)
    assert art.params["filter"]["max_pool"] == 150 and art.params["filter"]["screen"] == "stratified"
    plain = compress(data, 10, method="essence", seed=0, progress=False, **FAST)
    assert plain.selection["screen"]["applied"] is False and plain.selection["pool_size"] == 400
    with pytest.raises(ValueError, match="max_pool"):
        compress(data, 10, method="essence", seed=0, progress=False, **{**FAST, "max_pool": 0})
    with pytest.raises(ValueError, match="screen"):
        compress(data, 10, method="essence", seed=0, progress=False, **{**FAST, "screen": "best"})
