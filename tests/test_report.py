"""essence.artifact.report: what an estimate means (percentile among the reference models, chance, extrapolation), and
`essence estimate --context`."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from essence.cli import main
from essence.artifact.compressed import compress
from essence.data import load
from essence.artifact.report import context_lines, percentile_among


@pytest.fixture(scope="module")
def art():
    r = load("arc")
    return compress(r.subset(models=np.arange(0, r.n_models, 10)), k=10, method="random", seed=0, progress=False)


def test_percentile_among():
    q = np.linspace(10, 60, 101)  # uniform reference scores 10..60
    assert percentile_among(35.0, q) == pytest.approx(50.0)
    assert percentile_among(5.0, q) == 0.0 and percentile_among(70.0, q) == 100.0
    ties = np.concatenate([np.zeros(21), np.linspace(0, 50, 80)])  # 20% of the models at 0
    assert percentile_among(0.0, ties) == 0.0 and 0 < percentile_among(1.0, ties) < 100


def test_context_lines(art):
    r = load("arc")
    q = art.dataset["target_quantiles"]
    assert len(q) == 101 and q[0] <= q[50] <= q[-1]
    assert q[50] == pytest.approx(np.percentile(r.subset(models=np.arange(0, r.n_models, 10)).target, 50), abs=1e-4)
    df = pd.DataFrame({"model": ["mid", "weak"], "estimate": [q[50], q[0] - 5], "lower": [q[50] - 3, 0.0],
                       "upper": [q[50] + 3, q[0]]})
    text = "\n".join(context_lines(art, df, {"mid": 10, "weak": 7}))
    assert "mid: estimated full score" in text and "scored on 7 of the 10 chosen items" in text
    assert "percentile 50.0" in text
    assert "below the weakest reference model" in text and "extrapolates" in text
    assert "chance level: 25.0 pp" in text  # arc: 4 choices
    old = type(art).from_dict({**art.to_dict(), "dataset": {k: v for k, v in art.dataset.items()
                                                              if k != "target_quantiles"}})
    assert "records no score distribution" in "\n".join(context_lines(old, df))


def test_estimate_context_flag(art, tmp_path, capsys):
    path = art.save(tmp_path / "a.json")
    r = load("arc")
    resp = r.subset(models=[0, 1])
    resp_path = tmp_path / "two.csv"
    df = pd.DataFrame(resp.responses, columns=resp.items)
    df.insert(0, "model", resp.models)
    df.to_csv(resp_path, index=False)
    assert main(["estimate", str(path), str(resp_path)]) == 0
    plain = capsys.readouterr().out
    assert plain.splitlines()[0] == "model,estimate,lower,upper,outside,answered_by"  # not a terminal: CSV
    assert len(plain.splitlines()) == 3
    assert main(["estimate", str(path), str(resp_path), "--context"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(plain) and "reference models of arc" in out and "scored on 10 of the 10" in out


def _fake_art(y_quantiles=None):
    from types import SimpleNamespace

    q = np.linspace(40.0, 80.0, 101).tolist()  # the dataset's recorded range (every model, test ones too)
    rec = SimpleNamespace() if y_quantiles is None else SimpleNamespace(y_quantiles_=np.asarray(y_quantiles))
    return SimpleNamespace(dataset={"name": "made-up", "target_quantiles": q, "n_models": 100},
                           interval=SimpleNamespace(level=0.9), method="auto", k=50, reconstructor=rec)


def test_the_extrapolation_note_follows_the_outside_flag():
    """The flag and the note agree: a row flagged outside gets the note, one not flagged never reads as
    flagged; the range named is the reconstructor's references' (here 45-60 pp), not the dataset's (40-80)."""
    art = _fake_art(np.linspace(45.0, 60.0, 101))
    df = pd.DataFrame({"model": ["above", "answers", "inside", "regression"], "estimate": [62.0, 55.0, 52.0, 61.0],
                       "lower": [50.0, 45.0, 48.0, 57.0], "upper": [75.0, 70.0, 56.0, 65.0],
                       "outside": [True, True, False, False]})
    text = context_lines(art, df, chance=float("nan"))
    blocks, cur = {}, None
    for ln in text:
        if not ln.startswith(" "):
            cur = ln.split(":")[0]
        blocks.setdefault(cur, []).append(ln)
    assert "above the strongest reference model" in "\n".join(blocks["above"])
    assert "outside the references: the estimate is above" in "\n".join(blocks["above"])
    assert "fitted on models scoring 45.0-60.0 pp" in "\n".join(blocks["above"])
    assert "outside the references: the model's answers place it" in "\n".join(blocks["answers"])
    assert "note" not in "\n".join(blocks["inside"])
    reg = "\n".join(blocks["regression"])  # not flagged: the note says so instead of contradicting the flag
    assert "not flagged outside" in reg and "outside the references:" not in reg
    # without the column (a DataFrame of an older version): the estimate against the recorded range
    legacy = context_lines(_fake_art(), df.drop(columns="outside"), chance=float("nan"))
    assert sum("extrapolates" in ln for ln in legacy) == 0  # 40-80 pp holds every estimate
