"""Bad and suspicious input replayed through the command line (issue 18): every case ends in exit status 2
with exactly one line on stderr, or, where the input is legal but suspicious, exit 0 with one
``essence: warning: ...`` line; no file is left behind and no existing file is changed.

Most cases call ``essence.cli.main`` in-process (stderr captured by ``capsys``); two run the installed
``essence`` command in a subprocess. Data are real slices of gsm8k (``conftest.small``), changed where a
case needs a bad value.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import essence.data.checks
from essence.cli import main
from essence.data import data_roots, from_arrays, load
from essence.data.errors import EssenceWarning, InputError

ESSENCE = str(Path(sys.executable).parent / "essence")


# ----------------------------------------------------------------------------------------------
# helpers and fixtures
# ----------------------------------------------------------------------------------------------
def cli(capsys, *args):
    """Run ``essence ARGS`` in-process: ``(status, stdout, stderr lines)``."""
    rc = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return rc, out, err.strip().splitlines()


def error(result, *needles):
    """Exit 2, exactly one stderr line, the error prefix and every needle in it; returns the line."""
    rc, _, err = result
    assert rc == 2, err
    assert len(err) == 1, err
    assert err[0].startswith("essence: error: "), err
    for n in needles:
        assert n in err[0], (n, err[0])
    assert "np." not in err[0] and "Traceback" not in err[0]
    return err[0]


def warning(result, *needles):
    """Exit 0 and exactly one stderr line, an ``essence: warning:`` with every needle; returns the line."""
    rc, _, err = result
    assert rc == 0, err
    assert len(err) == 1, err
    assert err[0].startswith("essence: warning: "), err
    for n in needles:
        assert n in err[0], (n, err[0])
    return err[0]


def snapshot(folder: Path) -> dict:
    """Every file under ``folder`` with its bytes and mode: equal snapshots = nothing written or changed."""
    return {p: (p.read_bytes(), p.stat().st_mode) for p in sorted(folder.rglob("*")) if p.is_file()}


def wide(r, target=True) -> pd.DataFrame:
    df = pd.DataFrame(r.responses.copy(), columns=r.items)
    df.insert(0, "model", r.models)
    if target:
        df["full_score"] = r.target
    return df


@pytest.fixture(scope="module")
def base(small):
    """200 real gsm8k models x 40 items, with their full scores (pp)."""
    return small.subset(models=np.arange(0, small.n_models, 3)[:200], items=np.arange(40))


@pytest.fixture(scope="module")
def ws(tmp_path_factory, base):
    """A folder with base.csv, art.json (random, k=5) and precious.json (a user's file that must never change)."""
    d = tmp_path_factory.mktemp("ws")
    wide(base).to_csv(d / "base.csv", index=False)
    assert main(["compress", str(d / "base.csv"), "--k", "5", "--method", "random", "--seed", "0",
                 "--out", str(d / "art.json"), "--quiet"]) == 0
    # the tamper tests edit a GAM's fields; the CV choice may pick another kind: put the GAM in
    from essence.artifact.compressed import Compressed
    from essence.reconstructors.simple import GAMReconstructor

    art = Compressed.load(d / "art.json")
    X = base.responses[:, base.item_index(art.items)]
    art.reconstructor = GAMReconstructor(weights=[1.0] * art.k).fit(X, base.target)
    art.save(d / "art.json", overwrite=True)
    (d / "precious.json").write_text("precious")
    return d


@pytest.fixture()
def out(tmp_path):
    """An empty output folder; the test asserts it stays empty (or holds only what the command wrote)."""
    o = tmp_path / "out"
    o.mkdir()
    return o


@pytest.fixture(scope="module")
def samples():
    for root in data_roots():
        logs = sorted((root / "lm_eval" / "pythia-14m").glob("samples_metabench_truthfulqa_secondary_*.jsonl"))
        if logs:
            return logs[0]
    pytest.skip("lm_eval/pythia-14m logs not found (run `make data`)")


# ----------------------------------------------------------------------------------------------
# --param: one parser for compress and sweep
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("params,needles", [
    (["seed=3"], ["seed is set by --seed"]),
    (["k=7"], ["k is set by --k"]),
    (["progress=false"], ["set by --quiet"]),
    (["lam=1", "lam=2"], ["--param lam given twice", "'1' and '2'"]),
    (["n_splines=20", "n_splines=20"], ["given twice"]),
    (["level=0.5"], ["--param level", "setting of compress()"]),
    (["min_answered=0"], ["--param min_answered"]),
    (["noequals"], ["expected NAME=VALUE"]),
    (["=3"], ["expected NAME=VALUE"]),
    (["bogus=1"], ["bogus"]),
])
def test_compress_param_errors(capsys, ws, out, params, needles):
    args = ["compress", ws / "base.csv", "--k", 5, "--method", "kmeans", "--out", out / "a.json", "--quiet"]
    for p in params:
        args += ["--param", p]
    error(cli(capsys, *args), *needles)
    assert snapshot(out) == {}


@pytest.mark.parametrize("params,needles", [
    (["random.seed=3"], ["seed is set by --seeds"]),
    (["random.k=3"], ["k is set by --k"]),
    (["kmeans.lam=3", "kmeans.lam=2"], ["--param kmeans.lam given twice"]),
    (["lam=3"], ["expected METHOD.NAME=VALUE"]),
    ([".lam=3"], ["expected METHOD.NAME=VALUE"]),
])
def test_sweep_param_errors(capsys, ws, out, params, needles):
    args = ["sweep", "--data", ws / "base.csv", "--methods", "random", "kmeans", "--k", 3, "--seeds", 0,
            "--out", out / "sw", "--quiet", "--jobs", 1]
    for p in params:
        args += ["--param", p]
    error(cli(capsys, *args), *needles)
    assert not (out / "sw").exists()


def test_parse_params_values():
    parse = essence.data.checks.parse_params
    assert parse(["a=200", "b=0.5", "c=true", "d=[1, 2]", "e=x", "f=nan"])["f"] != "nan"  # nan is a float
    got = parse(["a=200", "b=0.5", "c=true", "d=[1, 2]", "e=x"])
    assert got == {"a": 200, "b": 0.5, "c": True, "d": [1, 2], "e": "x"}
    assert parse(["m.a=1", "m.b=2", "n.a=3"], qualified=True) == {"m": {"a": 1, "b": 2}, "n": {"a": 3}}
    assert parse(None) == {}


# ----------------------------------------------------------------------------------------------
# --out: a folder, a path under a file, a folder that cannot be written; existing files kept
# ----------------------------------------------------------------------------------------------
def _unwritable(tmp_path: Path) -> Path:
    """A folder nobody can create files in: a read-only folder, or (as root, who ignores modes) /proc."""
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        return Path("/proc/essence-no-such-folder")
    ro = tmp_path / "read-only"
    ro.mkdir()
    ro.chmod(0o555)
    return ro


def _command(name, ws, samples, out_path):
    return {
        "compress": ["compress", ws / "base.csv", "--k", 5, "--method", "random", "--quiet", "--out", out_path],
        "estimate": ["estimate", ws / "art.json", ws / "base.csv", "--out", out_path],
        "import-lmeval": ["import-lmeval", samples, "--data", "truthfulqa", "--out", out_path],
        "export-lmeval": ["export-lmeval", ws / "art.json", "--task", "mine", "--out", out_path],
        "sweep": ["sweep", "--data", ws / "base.csv", "--methods", "random", "--k", 3, "--seeds", 0, "--quiet",
                  "--jobs", 1, "--out", out_path],
    }[name]


FILE_OUTPUTS = ("compress", "estimate", "import-lmeval")
FOLDER_OUTPUTS = ("export-lmeval", "sweep")


@pytest.mark.parametrize("command", FILE_OUTPUTS + FOLDER_OUTPUTS)
@pytest.mark.parametrize("case", ["wrong kind", "under a file", "unwritable"])
def test_unusable_out(capsys, ws, samples, tmp_path, command, case):
    before = snapshot(ws)
    if case == "wrong kind":  # a folder where a file goes, or a file where a folder goes
        if command in FILE_OUTPUTS:
            target = tmp_path / "folder.csv"
            target.mkdir()
            needle = "is a folder"
        else:
            target = ws / "precious.json"
            needle = "is a file, not a folder"
    elif case == "under a file":
        target = ws / "precious.json" / ("x.csv" if command in FILE_OUTPUTS else "sub")
        needle = "precious.json is a file, not a folder"
    else:
        target = _unwritable(tmp_path) / ("x.csv" if command in FILE_OUTPUTS else "sub")
        needle = "cannot write into folder"
    args = _command(command, ws, samples, target)
    if command in ("compress", "estimate", "import-lmeval"):
        args.append("--force")  # --force never makes a folder or an unwritable path usable
    error(cli(capsys, *args), "--out", needle)
    assert snapshot(ws) == before
    assert not [p for p in tmp_path.rglob("*") if p.is_file()]


@pytest.mark.parametrize("command", FILE_OUTPUTS)
def test_existing_out_kept_without_force(capsys, ws, samples, command):
    before = snapshot(ws)
    error(cli(capsys, *_command(command, ws, samples, ws / "precious.json")), "already exists", "--force")
    assert snapshot(ws) == before


def test_files_get_the_users_permissions(capsys, ws, tmp_path):
    old = os.umask(0o027)
    try:
        assert cli(capsys, *_command("estimate", ws, None, tmp_path / "e.csv"))[0] == 0
        assert (tmp_path / "e.csv").stat().st_mode & 0o777 == 0o640
        (tmp_path / "e.csv").chmod(0o600)  # the user's choice survives --force
        assert cli(capsys, *_command("estimate", ws, None, tmp_path / "e.csv"), "--force")[0] == 0
        assert (tmp_path / "e.csv").stat().st_mode & 0o777 == 0o600
    finally:
        os.umask(old)


# ----------------------------------------------------------------------------------------------
# --items-from
# ----------------------------------------------------------------------------------------------
def test_items_from_errors(capsys, ws, base, out, tmp_path):
    args = ["compress", ws / "base.csv", "--k", 3, "--method", "random", "--quiet", "--out", out / "a.json"]
    error(cli(capsys, *args, "--items-from", tmp_path / "nosuch.txt"), "nosuch.txt: no such file")
    error(cli(capsys, *args, "--items-from", tmp_path), "is a folder")
    ids = tmp_path / "ids.txt"
    ids.write_text("\n".join([*base.items[:5], "bogus-1", "bogus-2"]) + "\n")
    error(cli(capsys, *args, "--items-from", ids), "2 id(s) are not items", "'bogus-1'", "'bogus-2'")
    ids.write_text("\n\n")
    error(cli(capsys, *args, "--items-from", ids), "holds no item ids")
    assert snapshot(out) == {}


@pytest.mark.parametrize("flag,value,needle", [
    ("--seed", "-1", "must be at least 0"), ("--seed", "1.5", "not a whole number"),
    ("--k", "5.5", "not a whole number"), ("--k", "0", "must be at least 1"),
])
def test_compress_flag_domains(capsys, ws, out, flag, value, needle):
    args = {"--k": "5", "--seed": "0", flag: value}
    error(cli(capsys, "compress", ws / "base.csv", "--k", args["--k"], "--seed", args["--seed"], "--method", "random",
              "--quiet", "--out", out / "a.json"), flag, needle)
    assert snapshot(out) == {}


def test_compress_python_api_checks_like_the_cli(base):
    from essence.artifact.compressed import compress

    with pytest.raises(InputError, match="seed: must be a whole number >= 0, got -1"):
        compress(base, k=5, method="random", seed=-1, progress=False)
    with pytest.raises(InputError, match="min_answered"):
        compress(base, k=5, method="random", min_answered=0, progress=False)


# ----------------------------------------------------------------------------------------------
# full scores: percentage points, 0-100
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("change,needles", [
    (lambda df: df.__setitem__("full_score", df["full_score"].where(df.index != 0, 250.0)), ["outside 0-100", "250"]),
    (lambda df: df.__setitem__("full_score", df["full_score"].where(df.index != 1, -10.0)), ["outside 0-100", "-10"]),
    (lambda df: df.__setitem__("full_score", df["full_score"] / 100), ["within [0, 1]", "multiply them by 100"]),
    (lambda df: df.__setitem__("full_score", df["full_score"].where(df.index != 2, np.nan)), ["non-finite full score"]),
])
def test_full_score_out_of_range(capsys, base, out, change, needles):
    df = wide(base)
    change(df)
    df.to_csv(out / "bad.csv", index=False)
    error(cli(capsys, "compress", out / "bad.csv", "--k", 5, "--method", "random", "--quiet",
              "--out", out / "a.json"), *needles)
    assert not (out / "a.json").exists()


def test_full_scores_as_fractions_warn_when_nothing_tells(gsm8k):
    """Models whose own results are all under 5%: full scores in [0, 1] may be real; a warning asks."""
    low = gsm8k.subset(models=np.flatnonzero(np.nanmean(gsm8k.responses, axis=1) < 0.05)[:30])
    assert low.n_models >= 2
    with pytest.warns(EssenceWarning, match="within \\[0, 1\\] pp"):
        from_arrays(low.responses, low.models, low.items, target=np.nanmean(low.responses, axis=1))


# ----------------------------------------------------------------------------------------------
# model names: kept as written; empty or repeated names refused
# ----------------------------------------------------------------------------------------------
def test_model_names_na_and_none_kept(capsys, ws, base, out):
    df = wide(base, target=False)
    df.loc[0, "model"], df.loc[1, "model"] = "NA", "None"
    df.to_csv(out / "names.csv", index=False)
    r = load(out / "names.csv")
    assert r.models[:2].tolist() == ["NA", "None"]
    rc, text, err = cli(capsys, "estimate", ws / "art.json", out / "names.csv")
    assert rc == 0 and not err
    est = pd.read_csv(pd.io.common.StringIO(text), keep_default_na=False)
    assert est["model"].iloc[:2].tolist() == ["NA", "None"]


@pytest.mark.parametrize("name,needle", [("", "empty or missing"), ("   ", "empty or missing"),
                                         ("DUP", "duplicate")])
def test_model_names_refused(capsys, ws, base, out, name, needle):
    df = wide(base, target=False)
    df.loc[3, "model"] = name
    if name == "DUP":
        df.loc[4, "model"] = name
    df.to_csv(out / "names.csv", index=False)
    error(cli(capsys, "estimate", ws / "art.json", out / "names.csv", "--out", out / "e.csv"), needle)
    assert not (out / "e.csv").exists()


def test_missing_model_name_in_parquet_refused(capsys, ws, base, out):
    df = wide(base, target=False)
    df["model"] = df["model"].astype(object)
    df.loc[5, "model"] = None
    df.to_parquet(out / "names.parquet")
    error(cli(capsys, "estimate", ws / "art.json", out / "names.parquet"), "empty or missing")


def test_repeated_item_column_refused(capsys, ws, base, out):
    df = wide(base, target=False)
    df.columns = [*df.columns[:-1], df.columns[1]]  # the last item column repeats the first item's name
    df.to_csv(out / "rep.csv", index=False)
    error(cli(capsys, "estimate", ws / "art.json", out / "rep.csv"), f"column {df.columns[1]!r} appears 2 times")


@pytest.mark.parametrize("text,needle", [("", "unreadable table"), ("model,a,b\n", "no models"),
                                         ("model\nx\n", "no items")])
def test_empty_tables_refused(capsys, ws, out, text, needle):
    (out / "t.csv").write_text(text)
    error(cli(capsys, "estimate", ws / "art.json", out / "t.csv"), needle)


def test_long_table_item_named_na_kept(base, out):
    long = pd.DataFrame({"model": np.repeat(base.models[:3], 2), "item": ["NA", "x"] * 3,
                         "score": base.responses[:3, :2].ravel()})
    long.to_csv(out / "long.csv", index=False)
    assert sorted(load(out / "long.csv").items.tolist()) == ["NA", "x"]


# ----------------------------------------------------------------------------------------------
# legal but suspicious: one warning line
# ----------------------------------------------------------------------------------------------
def test_constant_data_one_warning(capsys, base, out):
    df = wide(base)
    df.iloc[:, 1:-1] = 0.0
    df["full_score"] = 0.0
    df.to_csv(out / "zeros.csv", index=False)
    result = cli(capsys, "compress", out / "zeros.csv", "--k", 5, "--method", "random", "--quiet",
                 "--out", out / "a.json")
    line = warning(result, "constant data", "cannot show an error")
    assert "ConstantInputWarning" not in line
    assert (out / "a.json").exists()


def test_constant_full_scores_one_warning(capsys, base, out):
    df = wide(base)
    df["full_score"] = 50.0
    df.to_csv(out / "flat.csv", index=False)
    warning(cli(capsys, "compress", out / "flat.csv", "--k", 5, "--method", "random", "--quiet",
                "--out", out / "a.json"), "same full score (50 pp)")


def test_constant_data_python_api_warns(base):
    from essence.artifact.compressed import compress

    zeros = from_arrays(np.zeros((base.n_models, base.n_items)), base.models, base.items)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compress(zeros, k=5, method="random", progress=False)
    kinds = [w.category for w in caught]
    assert EssenceWarning in kinds
    assert not any(w.category.__name__ == "ConstantInputWarning" for w in caught)


def test_few_models_one_warning(capsys, base, out):
    wide(base.subset(models=np.arange(25))).to_csv(out / "few.csv", index=False)
    warning(cli(capsys, "compress", out / "few.csv", "--k", 5, "--method", "random", "--quiet",
                "--out", out / "a.json"), "test figures", "only 2 model(s)")


def test_evaluate_on_few_models_warns(capsys, ws, base, out):
    wide(base.subset(models=np.arange(4))).to_csv(out / "four.csv", index=False)
    warning(cli(capsys, "evaluate", ws / "art.json", out / "four.csv", "--json"), "only 4 model(s)")


@pytest.mark.parametrize("command", ["compress", "estimate"])
def test_out_naming_an_input_is_refused_even_with_force(capsys, ws, out, command):
    """`compress data.csv --out data.csv --force` must not replace the user's data with the artifact."""
    data = out / "data.csv"
    data.write_bytes((ws / "base.csv").read_bytes())
    before = snapshot(out)
    args = (["compress", data, "--k", 5, "--method", "random", "--quiet"] if command == "compress" else
            ["estimate", ws / "art.json", data])
    error(cli(capsys, *args, "--out", data, "--force"), "is one of this command's inputs", "--force never replaces")
    assert snapshot(out) == before


def test_evaluate_warns_on_another_benchmark_under_the_same_item_ids(capsys, ws, base, out):
    """Item means that do not follow the reference models' (another benchmark renamed to these ids) warn; the
    same benchmark's models, even only the strongest ones, do not."""
    assert main(["compress", str(ws / "base.csv"), "--k", "35", "--method", "random", "--quiet",
                 "--out", str(out / "k35.json")]) == 0
    capsys.readouterr()
    top = base.subset(models=np.argsort(base.target)[-40:])
    wide(top).to_csv(out / "top.csv", index=False)
    rc, _, err = cli(capsys, "evaluate", out / "k35.json", out / "top.csv", "--json")
    assert rc == 0 and not any("another benchmark" in e for e in err)
    df = wide(base.subset(models=np.arange(60)))  # a benchmark whose easy items are these hard ones
    df.iloc[:, 1:-1] = 1.0 - df.iloc[:, 1:-1]
    df.to_csv(out / "other.csv", index=False)
    warning(cli(capsys, "evaluate", out / "k35.json", out / "other.csv", "--json"), "another benchmark",
            "same item ids")


def test_warnings_are_dropped_when_the_command_fails(capsys, base, out):
    df = wide(base.subset(models=np.arange(25)))
    df.iloc[:, 1:-1] = 0.0
    df.to_csv(out / "zeros.csv", index=False)
    error(cli(capsys, "compress", out / "zeros.csv", "--k", 500, "--method", "random", "--quiet",
              "--out", out / "a.json"), "500")


# ----------------------------------------------------------------------------------------------
# damaged artifacts
# ----------------------------------------------------------------------------------------------
def _set(path, value):
    def change(d):
        obj = d
        for key in path[:-1]:
            obj = obj[key]
        obj[path[-1]] = value(d) if callable(value) else value
    return change


TAMPER = [
    ("nan weight", _set(["reconstructor", "params", "weights"], lambda d: [float("nan")] + [1.0] * (d["k"] - 1)),
     "reconstructor.params.weights[0]"),
    ("weight -100", _set(["reconstructor", "params", "weights"], lambda d: [-100.0] + [1.0] * (d["k"] - 1)),
     "negative weight (-100)"),
    ("all-zero weights", _set(["reconstructor", "params", "weights"], lambda d: [0.0] * d["k"]), "all zero"),
    ("too few weights", _set(["reconstructor", "params", "weights"], [1.0]), "1 weights for 5"),
    ("nan in the GAM table", _set(["reconstructor", "table", "y", 17], float("nan")), "reconstructor.table.y[17]"),
    ("null in the GAM table", _set(["reconstructor", "table", "y", 3], None), "reconstructor.table.y[3] is null"),
    ("infinite in the GAM table", _set(["reconstructor", "table", "x", 5], float("inf")), "table.x[5]"),
    ("unsorted GAM grid", lambda d: d["reconstructor"]["table"]["x"].reverse(), "strictly increasing"),
    ("five copies of one item", lambda d: d.__setitem__("items", [d["items"][0]] * d["k"]), "5 times"),
    ("empty item id", _set(["items", 0], ""), "items"),
    ("k disagrees with items", _set(["k"], 7), "5 ids but k is 7"),
    ("k not a number", _set(["k"], "5"), "k is '5'"),
    ("negative interval quantile", _set(["interval", "q"], -2.0), "interval.q"),
    ("nan interval quantile", _set(["interval", "q"], float("nan")), "interval.q"),
    ("level 1.5", _set(["interval", "level"], 1.5), "interval.level"),
    ("negative interval width", _set(["interval", "scale", "y", 3], -1.0), "interval.scale.y"),
    ("unknown reconstructor", _set(["reconstructor", "kind"], "magic"), "unknown kind 'magic'"),
]


@pytest.mark.parametrize("label,change,needle", TAMPER, ids=[t[0] for t in TAMPER])
def test_damaged_artifact_refused(capsys, ws, out, label, change, needle):
    d = json.loads((ws / "art.json").read_text())
    assert d["reconstructor"]["kind"] == "gam"
    d = copy.deepcopy(d)
    change(d)
    (out / "bad.json").write_text(json.dumps(d))
    error(cli(capsys, "estimate", out / "bad.json", ws / "base.csv", "--out", out / "e.csv"), "damaged artifact",
          needle)
    assert not (out / "e.csv").exists()


def test_damaged_artifact_refused_by_evaluate_and_python(capsys, ws, out):
    from essence.artifact.compressed import Compressed

    d = json.loads((ws / "art.json").read_text())
    d["reconstructor"]["params"]["weights"] = [0.0] * d["k"]
    (out / "bad.json").write_text(json.dumps(d))
    error(cli(capsys, "evaluate", out / "bad.json", ws / "base.csv"), "damaged artifact", "weights")
    with pytest.raises(InputError, match="damaged artifact"):
        Compressed.load(out / "bad.json")


# ----------------------------------------------------------------------------------------------
# messages print values, not numpy reprs
# ----------------------------------------------------------------------------------------------
def test_messages_show_plain_values(capsys, ws, out):
    assert str(InputError(f"{np.str_('new2')!r} {np.float64('nan')!r} {np.int64(3)!r}")) == "'new2' nan 3"
    items = json.loads((ws / "art.json").read_text())["items"]
    pd.DataFrame({"model": ["new2"], **{i: [np.nan] for i in items}, "other": [1.0]}).to_csv(
        out / "new.csv", index=False)
    line = error(cli(capsys, "estimate", ws / "art.json", out / "new.csv"), "'new2'")
    assert "np.str_" not in line


# ----------------------------------------------------------------------------------------------
# missing cells of a new model: estimated from the chosen items it has (docs/own-benchmark.md)
# ----------------------------------------------------------------------------------------------
def test_new_model_missing_one_chosen_cell(capsys, ws, base, out):
    items = json.loads((ws / "art.json").read_text())["items"]
    one = wide(base.subset(models=[0]), target=False)
    one["model"] = "new2"
    one.loc[0, items[0]] = np.nan  # one chosen cell missing: allowed
    one.to_csv(out / "one.csv", index=False)
    rc, text, err = cli(capsys, "estimate", ws / "art.json", out / "one.csv")
    assert rc == 0 and not err
    est = pd.read_csv(pd.io.common.StringIO(text))
    assert est["model"].tolist() == ["new2"] and np.isfinite(est[["estimate", "lower", "upper"]].to_numpy()).all()
    # without the item's column the error names the item and does not send the user round in a circle
    one.drop(columns=items[0]).to_csv(out / "dropped.csv", index=False)
    line = error(cli(capsys, "estimate", ws / "art.json", out / "dropped.csv"), items[0], "empty cell")
    assert "drop those items" not in line
    # evaluate reads the same way (its true scores here are the model's mean over the items it has)
    rc, text, err = cli(capsys, "evaluate", ws / "art.json", out / "one.csv", "--json")
    assert rc == 0 and json.loads(text)["n_models"] == 1


# ----------------------------------------------------------------------------------------------
# a real command line, twice
# ----------------------------------------------------------------------------------------------
def test_subprocess_error_and_warning(ws, base, tmp_path):
    r = subprocess.run([ESSENCE, "compress", str(ws / "base.csv"), "--k", "5", "--method", "random",
                        "--param", "seed=3", "--out", str(tmp_path / "a.json")],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 2 and r.stderr.strip().splitlines() == [
        "essence: error: --param 'seed=3': seed is set by --seed, not by --param; use --seed instead"]
    df = wide(base)
    df.iloc[:, 1:-1] = 1.0
    df["full_score"] = 100.0
    df.to_csv(tmp_path / "ones.csv", index=False)
    r = subprocess.run([ESSENCE, "compress", str(tmp_path / "ones.csv"), "--k", "5", "--method", "random", "--quiet",
                        "--out", str(tmp_path / "a.json")], capture_output=True, text=True, timeout=600)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 0 and len(lines) == 1 and lines[0].startswith("essence: warning: ones: every observed")
    assert (tmp_path / "a.json").stat().st_mode & 0o777 == 0o666 & ~_umask()


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# ----------------------------------------------------------------------------------------------
# method parameters outside their domains: checked by the methods' domain tables (helper "layers")
# ----------------------------------------------------------------------------------------------
@pytest.mark.skipif(not hasattr(essence.data.checks, "check_params"),
                    reason="the methods' parameter domains (essence.data.checks.check_params) come with the layers branch")
@pytest.mark.parametrize("method,param,name", [
    ("kmeans", "lam=nan", "lam"), ("kmeans", "lam=inf", "lam"), ("kmeans", "lam=-1", "lam"),
    ("kmeans", "n_splines=0", "n_splines"), ("essence", "tau_rank=5", "tau_rank"),
])
def test_method_parameter_domains_after_merge_with_layers(capsys, ws, out, method, param, name):
    error(cli(capsys, "compress", ws / "base.csv", "--k", 5, "--method", method, "--param", param, "--quiet",
              "--out", out / "a.json"), name)
    assert snapshot(out) == {}


@pytest.mark.parametrize("weights,needle", [([-100.0, 1.0, 1.0], "min -100"), ([0.0, 0.0, 0.0], "sum 0"),
                                            ([1.0, 1.0], "got 2")])
def test_reconstructor_weights_refused_for_the_right_reason(base, weights, needle):
    from essence.reconstructors.simple import GAMReconstructor, WeightedMeanReconstructor

    X = base.responses[:, :3]
    for rec in (GAMReconstructor(weights=weights), WeightedMeanReconstructor(weights=weights)):
        with pytest.raises(InputError, match="weights: must be 3 finite numbers >= 0") as info:
            rec.fit(X, base.target).predict(X)
        assert needle in str(info.value) and "no result" not in str(info.value)
