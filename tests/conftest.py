"""Shared fixtures: small slices of the real data (never simulated where real data exists), and the fast loop.

The fast loop is ``pytest -m "not slow"``. A test is slow when it carries ``@pytest.mark.slow`` in its
file, or when it is listed in :data:`MEASURED_SLOW` below: tests that ``--durations`` shows at a second or more
each, most of them CLI subprocesses, LM loads, py-irt fits and GA searches. ``make test`` runs everything.

The cache: the whole session (and every subprocess it starts) uses a fresh, empty ``$ESSENCE_CACHE`` made
here at import time, before ``essence`` is imported, so no test reads or writes the project's ``.cache/`` and
no result or time depends on how warm it is. Two exceptions, both explicit: the converted SmolLM2 weights
(``$ESSENCE_MODELS``, a deterministic copy of the shipped GGUF file, 20-50 s to convert) stay where the
developer keeps them, and the slow tests whose SmolLM2 item features take minutes to compute ask for
:func:`project_cache` (as does the notebook build).

Both cores: the notebooks' quick build (:func:`quick_build`) and the tests in :data:`BACKGROUND` (they wait on the
harness and SmolLM2 subprocesses) start in background processes as soon as the session has collected them, and the
tests that report them run last; a session of those tests alone runs them in place.

CPU code paths: the session and every subprocess it starts run pinned (essence.data.pinning: OpenBLAS's Haswell kernels,
numpy's AVX-512 dispatch off, torch at AVX2, one BLAS/OpenMP thread), set here before numpy is imported, so that the
tests that regenerate committed tables get the same bits on any x86-64 machine with AVX2; values set outside are
overridden (``ESSENCE_NATIVE_CPU=1`` turns the pins off, and those tests then allow the spread the emulated
machines show).
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("TQDM_DISABLE", "1")


def _pin() -> bool:
    """essence.data.pinning.ensure(), loaded from its file (importing the package would load numpy first); the session
    cannot restart itself (pytest holds its output), so a numpy loaded before this file is an error."""
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "essence" / "data" / "pinning.py"
    spec = importlib.util.spec_from_file_location("_essence_pinning", path)
    pinning = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(pinning)
    if "numpy" in sys.modules and not pinning.is_pinned() and not os.environ.get(pinning.OPT_OUT):
        raise RuntimeError("numpy was imported before tests/conftest.py could pin the CPU code paths; run "
                           "`python -m essence.data.pinning run -- python -m pytest ...` (as make test does)")
    return pinning.ensure(restart=False) and "OPENBLAS_CORETYPE" in pinning.pinned_env()


#: whether the session runs the full pinned level (else: pins off, or a CPU below the level: threads only)
PINNED = _pin()  # before numpy is imported (below), so that its BLAS reads the pins

import numpy as np  # noqa: E402
import pytest  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
#: the cache the package uses outside the tests: ``$ESSENCE_CACHE`` if set, else the checkout's ``.cache/``
#: (essence.features.cache.cache_root)
_OUTSIDE_CACHE = os.environ.get("ESSENCE_CACHE")
PROJECT_CACHE = Path(_OUTSIDE_CACHE or ROOT / ".cache")
os.environ.setdefault("ESSENCE_MODELS", str(PROJECT_CACHE / "models"))  # essence.features.lm.model_dir
SESSION_CACHE = tempfile.mkdtemp(prefix="essence-test-cache-")
os.environ["ESSENCE_CACHE"] = SESSION_CACHE
atexit.register(shutil.rmtree, SESSION_CACHE, ignore_errors=True)


@pytest.fixture
def project_cache(monkeypatch):
    """The project's own feature cache, for the (slow) tests whose SmolLM2 item features take minutes to compute:
    warm, they read them; cold, they compute them once for every later run."""
    monkeypatch.setenv("ESSENCE_CACHE", str(PROJECT_CACHE))
    return PROJECT_CACHE


@pytest.fixture(scope="session")
def committed_tol():
    """``tol(rounding, figure=None)``: the tolerance of a test that regenerates a figure of a committed table. Pinned,
    the table's own rounding (the same bits on any pinned machine); unpinned, the spread between emulated machines
    that ``scripts/emulate.py`` measured without the pins (``results/emulation.csv``: that figure's, or the
    largest), since another CPU's code paths may choose other items."""
    def tol(rounding: float, figure: str | None = None) -> float:
        if PINNED:
            return rounding
        import pandas as pd

        table = pd.read_csv(ROOT / "results" / "emulation.csv").set_index("figure")["native spread"].dropna()
        return max(rounding, float(table[figure] if figure in table.index else table.max()))

    return tol


@pytest.fixture(scope="session")
def gsm8k():
    from essence.data import load

    return load("gsm8k")


@pytest.fixture(scope="session")
def small(gsm8k):
    """A real slice: 600 gsm8k models (every 6th, keeps the score range) x the first 80 items."""
    return gsm8k.subset(models=np.arange(0, gsm8k.n_models, 6)[:600], items=np.arange(80))


@pytest.fixture(scope="session")
def alpaca():
    from essence.data import load

    return load("alpaca_eval2")


def held_out_rmse(art, data) -> tuple[float, float]:
    """An artifact's error on the test models of its own split, recomputed from ``estimate()`` and the true scores
    with numpy: ``(rmse, baseline)`` in pp, the baseline being the trivial estimate (every test model gets the
    training models' mean full score)."""
    from essence.data import split_models

    sp = split_models(data, test=art.split["test"], val=art.split["val"], seed=art.split["seed"],
                      kind=art.split["kind"])
    te = data.subset(models=sp.test)
    est = art.estimate(te)["estimate"].to_numpy()
    return (float(np.sqrt(np.mean((est - te.target) ** 2))),
            float(np.sqrt(np.mean((data.target[sp.train].mean() - te.target) ** 2))))


@pytest.fixture(scope="session")
def held_out():
    """:func:`held_out_rmse`, for test files (a fixture: test modules do not import conftest)."""
    return held_out_rmse


#: a guard against a hung kernel, not a speed target (the quick build shares the cores with the other tests)
QUICK_BUILD_TIMEOUT_S = 2700


_QUICK: dict = {}


def _finished(proc: subprocess.Popen, timeout: float, *files) -> subprocess.Popen:
    """``proc`` once it has ended (killed past ``timeout`` seconds, and the timeout raised); ``files`` closed."""
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise
    for f in files:
        f.close()
    return proc


def _start_quick_build() -> None:
    """Start scripts/reproduce.py --quick for all notebooks in a background process (into a temporary build
    folder, its output to files there), so that it runs on the second core while the other tests run."""
    build = Path(tempfile.mkdtemp(prefix="essence-quick-build-"))
    atexit.register(shutil.rmtree, build, ignore_errors=True)
    args = [sys.executable, str(ROOT / "scripts" / "reproduce.py"), "--quick", "--build", str(build)]
    env = {**os.environ, "ESSENCE_CACHE": str(PROJECT_CACHE)}  # the notebooks' SmolLM2 features: see the top
    out, err = open(build / "stdout.txt", "w"), open(build / "stderr.txt", "w")
    _QUICK.update(build=build, args=args, out=out, err=err,
                  proc=subprocess.Popen(args, stdout=out, stderr=err, text=True, cwd=ROOT, env=env))


@pytest.fixture(scope="session")
def quick_build():
    """The quick build of every notebook (scripts/reproduce.py --quick), started in the background when the
    session collects a test that asks for it (:func:`pytest_collection_finish`); waits for it here.

    Returns ``(build_dir, completed_process)``; figures go to ``build_dir/quick-figures`` (never figures/).
    """
    if not _QUICK:
        _start_quick_build()
    proc = _finished(_QUICK["proc"], QUICK_BUILD_TIMEOUT_S, _QUICK["out"], _QUICK["err"])
    build = _QUICK["build"]
    done = subprocess.CompletedProcess(_QUICK["args"], proc.returncode, (build / "stdout.txt").read_text(),
                                       (build / "stderr.txt").read_text())
    return build, done


#: tests that mostly wait on subprocesses (the harness, SmolLM2): in a session that runs other tests too, they run
#: in one background pytest process started at collection, on the second core, and each reports that run's outcome
BACKGROUND = (
    "tests/test_adaptive.py::test_harness_rounds_with_smollm2",
    "tests/test_own_benchmark.py::test_page_one_step_with_smollm2",
    "tests/test_lmeval_replay.py::test_outside_models_benchmark",
    "tests/test_lmeval_replay.py::test_replayed_task_builds_the_logged_requests",
)
BACKGROUND_TIMEOUT_S = 2700  # a guard against a hung run, not a speed target
_BACKGROUND: dict = {}


def _start_background(items) -> None:
    folder = Path(tempfile.mkdtemp(prefix="essence-background-tests-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    env = {**os.environ, "ESSENCE_BACKGROUND_RUN": "1"}
    env.pop("ESSENCE_CACHE")
    if _OUTSIDE_CACHE:
        env["ESSENCE_CACHE"] = _OUTSIDE_CACHE  # the run makes its own session cache, as this one did
    log = open(folder / "log.txt", "w")
    args = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={folder / 'junit.xml'}",
            *[item.nodeid for item in items]]
    _BACKGROUND.update(folder=folder, log=log, proc=subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT,
                                                                     cwd=ROOT, env=env))


def _background_outcome(nodeid: str) -> None:
    """This test's outcome in the background run: passes, or fails / skips with that run's message."""
    import xml.etree.ElementTree as ET

    _finished(_BACKGROUND["proc"], BACKGROUND_TIMEOUT_S, _BACKGROUND["log"])
    folder = _BACKGROUND["folder"]
    cases = {}
    if (folder / "junit.xml").is_file():
        for case in ET.parse(folder / "junit.xml").getroot().iter("testcase"):
            cases[case.get("classname").replace(".", "/") + ".py::" + case.get("name")] = case
    if nodeid not in cases:
        pytest.fail(f"the background run did not report {nodeid}; its output ends:\n"
                    f"{(folder / 'log.txt').read_text()[-3000:]}", pytrace=False)
    for tag in ("failure", "error"):
        bad = cases[nodeid].find(tag)
        if bad is not None:
            pytest.fail(f"in the background run: {bad.get('message')}\n{(bad.text or '')[-3000:]}", pytrace=False)
    skipped = cases[nodeid].find("skipped")
    if skipped is not None:
        pytest.skip(f"in the background run: {skipped.get('message')}")


def pytest_collection_finish(session):
    """Start the quick build and the background tests as soon as the tests are known, when some need them."""
    if any("quick_build" in getattr(item, "fixturenames", ()) for item in session.items):
        _start_quick_build()
    bg = [item for item in session.items if item.nodeid.startswith(BACKGROUND)]
    if bg and len(bg) < len(session.items) and not os.environ.get("ESSENCE_BACKGROUND_RUN"):
        _start_background(bg)
        for item in bg:
            item.runtest = functools.partial(_background_outcome, item.nodeid)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """ci_switch.require_resources on every report (.ci/run: a skip for a missing resource fails)."""
    from ci_switch import require_resources

    outcome = yield
    require_resources(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    """The same for a whole module skipped while it is collected (``pytest.skip(..., allow_module_level=True)``)."""
    from ci_switch import require_resources

    outcome = yield
    require_resources(outcome.get_result())


def pytest_sessionfinish(session, exitstatus):
    for proc in (_QUICK.get("proc"), _BACKGROUND.get("proc")):
        if proc is not None and proc.poll() is None:
            proc.kill()


#: node ids (a prefix is enough: every parametrisation of a test, or a whole file) measured at >= 3 s
MEASURED_SLOW = (
    "tests/test_features_lm.py::",  # loads SmolLM2-135M (about 17 s) before its first test
    "tests/test_cli.py::test_estimate_csv",
    "tests/test_cli.py::test_compress_writes_artifact",
    "tests/test_cli.py::test_evaluate_json",
    "tests/test_cli.py::test_compress_refuses_existing_out",
    "tests/test_cli.py::test_items_from_restricts_the_pool",
    "tests/test_cli.py::test_estimate_names_missing_items",
    "tests/test_cli.py::test_data_command_lists_datasets",
    # test_cli.py::test_bad_arguments_exit_2_one_line_no_output marks its own slow cases
    # benchmarks/speed.py: one subprocess per case (3 and 4 cases)
    "tests/test_speed_benchmark.py::test_scale_part_runs_each_case_in_a_subprocess",
    "tests/test_speed_benchmark.py::test_seeds_part_reports_the_ratio_to_random_per_seed",
    "tests/test_reconstruct.py::test_interval_coverage_on_held_out_models",
    "tests/test_regimes.py::test_policies_study_reads_the_default_as_the_regime_map_does",
    "tests/test_reconstruct.py::test_ridge_gam_bends_the_ridge_index",
    "tests/test_sweep.py::test_cli_end_to_end_writes_parquet_and_csv",
    "tests/test_sweep.py::test_dask_backend_equals_local",
    "tests/test_sweep_suites.py::test_every_suite_method_gets_the_same_split",
    "tests/test_sweep_suites.py::test_suite_rows_per_member_and_mean_equal_compress_suite",
    "tests/test_lessons.py::test_random_subset_scores_deterministic_and_pool_bound",
    "tests/test_lessons.py::test_fitness_setup_and_compare_fitnesses",
    "tests/test_irt.py::test_reconstructor_reloads_in_a_fresh_process",
    "tests/test_irt.py::test_fit_equals_pyirt_trainer",  # py-irt's import alone takes 3 s
    "tests/test_irt.py::test_fit_is_seeded_standardised_and_handles_constant_items",
    "tests/test_irt.py::test_irt_selector_end_to_end",
    "tests/test_irt.py::test_gam_tables_match_pygam",
    "tests/test_irt.py::test_irt_reconstructor_round_trip",
    "tests/test_profile.py::test_plot_mean_profile_draws_every_line",
    "tests/test_genetic.py::test_ga_same_seed_same_subset_across_processes",
    "tests/test_kmeans.py::test_anchor_is_the_member_nearest_its_centroid",
    "tests/test_lessons_selectors.py::test_selector_figures",
    "tests/test_lessons_selectors.py::test_faithful_run_measures_both_settings_and_caches",
    "tests/test_attribution.py::test_item_that_determines_the_target_gets_the_largest_attribution",
    "tests/test_lmeval_replay.py::",  # builds the harness's requests for every logged document
    "tests/test_suite_cli.py::",  # one compress subprocess per case
    "tests/test_suite.py::test_fit_members_greedy_ensemble_records_the_weights_it_predicts_with",
    "tests/test_suite.py::test_suite_refuses_one_member_repeated_names_and_no_shared_models",
    "tests/test_suite.py::test_joint_refinement_never_worsens_the_pool_fitness_and_keeps_the_floor",
    "tests/test_suite.py::test_suite_reconstruction_reads_own_then_all_items_with_intervals",
    "tests/test_suite.py::test_compress_suite_reconstructs_every_member_from_all_chosen_items",
    "tests/test_irt.py::test_cache_reuses_one_fit",
    "tests/test_bad_input.py::test_subprocess_error_and_warning",
    "tests/test_committed_notebooks.py::test_clean_outputs_names_the_injected_cell",
    "tests/test_essence_method.py::test_k_equal_to_the_pool_returns_every_item",
    "tests/test_essence_method.py::test_beats_random_on_validation_models",
    "tests/test_essence_method.py::test_paper_fitness_gam_ruler_runs",
    "tests/test_essence_method.py::test_datasets_without_texts_with_constants_and_missing_cells",
    "tests/test_essence_method.py::test_pre_screen_shrinks_big_pools_and_is_recorded",
    "tests/test_essence_method.py::test_text_redundancy_is_wired_to_the_filter",
    "tests/test_essence_method.py::test_end_to_end_through_compress",
    "tests/test_disco.py::test_disco_end_to_end",
    "tests/test_lmeval.py::test_round_trip_pythia",
    "tests/test_suite_regimes_benchmark.py::",
    "tests/test_lessons_selectors.py::test_selector_runs_and_decision_guide",
)


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.nodeid.startswith(MEASURED_SLOW):
            item.add_marker(pytest.mark.slow)
    # the tests that wait for a background run come last, so that it overlaps everything else
    items.sort(key=lambda item: "quick_build" in getattr(item, "fixturenames", ()) or item.nodeid.startswith(BACKGROUND))
