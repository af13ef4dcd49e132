"""Summaries of a results table: mean ± sd over seeds, as DataFrames and Markdown tables."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import data as _data
from ..data.errors import InputError
from ..data.metrics import paired_with_random, ratio_to_random
from ..methods import METHOD_INFO
from .records import SUMMARY_COLUMNS
from .suites import SUITE_SEP

__all__ = ["summarise", "ratio_table", "mean_sd", "verdict", "format_summary", "format_wide"]


def _with_benchmark(df):
    """``df`` with a ``benchmark`` column (the dataset's name where missing)."""
    return df if "benchmark" in df.columns else df.assign(benchmark=df["dataset"])


def _paired(df, method: str, k: int, dataset: str, benchmark: str):
    """:func:`essence.data.metrics.paired_with_random` on one benchmark of one dataset."""
    return paired_with_random(df[df["benchmark"] == benchmark], method, k, [dataset])


def _label(dataset: str, benchmark: str) -> str:
    """A row's name: the dataset, or ``suite: member``."""
    return dataset if benchmark == dataset else f"{dataset}: {benchmark}"


def _preselected(dataset: str, benchmark: str) -> bool:
    names = dataset.split(SUITE_SEP) if benchmark == "mean" and benchmark != dataset else [benchmark]
    return any(n in _data.METABENCH for n in names)


def mean_sd(mean, sd, digits: int = 2, missing: str = "-") -> str:
    """``"mean ± sd"`` with ``digits`` decimals (``"mean"`` when ``sd`` is NaN, ``missing`` when ``mean`` is)."""
    if not np.isfinite(mean):
        return missing
    return f"{mean:.{digits}f} ± {sd:.{digits}f}" if np.isfinite(sd) else f"{mean:.{digits}f}"


def verdict(summary, dataset: str, k: int, benchmark: str | None = None) -> str:
    """One Markdown bullet on ``dataset`` (a suite: its ``benchmark``) at ``k`` from :func:`summarise` output: the
    lowest mean test RMSE (pp) with its Kendall tau, random's, the methods clearly below random (mean ± sd apart)
    and EssenceBench's rank when it is not the best."""

    def label(m):
        return METHOD_INFO[m].label if m in METHOD_INFO else m

    benchmark = dataset if benchmark is None else benchmark
    summary = _with_benchmark(summary)
    at_k = summary[(summary["k"] == int(k)) & (summary["dataset"] == dataset) & (summary["benchmark"] == benchmark)]
    g = at_k[np.isfinite(at_k["rmse_mean"])].set_index("method")
    name = _label(dataset, benchmark)
    if g.empty:
        return f"* **{name}**: no finished run."
    best = g["rmse_mean"].idxmin()
    line = (f"* **{name}{' *' if _preselected(dataset, benchmark) else ''}**: lowest error {label(best)} "
            f"{g.loc[best, 'rmse_mean']:.2f} pp (Kendall {g.loc[best, 'kendall_mean']:.3f})")
    if "random" in g.index:
        r = g.loc["random"]
        line += f"; random {mean_sd(r['rmse_mean'], r['rmse_sd'])} pp"
        beat = [label(m) for m in g.index if m != "random"
                and g.loc[m, "rmse_mean"] + np.nan_to_num(g.loc[m, "rmse_sd"]) < r["rmse_mean"] - np.nan_to_num(r["rmse_sd"])]
        line += f"; clearly below random (mean ± sd apart): {', '.join(beat) if beat else 'none'}"
    if "essence" in g.index and best != "essence":
        rank = int(g["rmse_mean"].rank().loc["essence"])
        line += f"; EssenceBench {g.loc['essence', 'rmse_mean']:.2f} pp (rank {rank} of {len(g)})"
    return line + "."


def summarise(df):
    """:data:`SUMMARY_COLUMNS` of a results table, one row per dataset x benchmark x method x k (first appearance
    order): mean and sample sd over finished seeds of test RMSE (pp) and Kendall tau, failures counted in
    ``n_failed`` (``error``: the first), :func:`essence.data.metrics.ratio_to_random` over paired seeds."""
    df = _with_benchmark(df)
    if "split" in df.columns:  # each split kind its own dataset while grouping and pairing
        df = df.assign(dataset=[d if s in ("random", "", None) or pd.isna(s) else f"{d}@{s}"
                                for d, s in zip(df["dataset"], df["split"])])
    rows = []
    for (ds, b, m, k), g in df.groupby(["dataset", "benchmark", "method", "k"], sort=False):
        ok = g[g["error"].fillna("") == ""]
        errs = g.loc[g["error"].fillna("") != "", "error"]
        rows.append({
            "dataset": ds, "benchmark": b, "method": m, "k": int(k), "n_runs": len(g), "n_failed": len(g) - len(ok),
            **{f"{c}_mean": ok[c].mean() if len(ok) else np.nan for c in ("rmse", "kendall")},
            **{f"{c}_sd": ok[c].std(ddof=1) if len(ok) > 1 else np.nan for c in ("rmse", "kendall")},
            "pool_preselected": _preselected(ds, b), "error": errs.iloc[0] if len(errs) else "",
            "ratio_to_random": ratio_to_random(*_paired(df, m, k, ds, b)),
        })
    out = pd.DataFrame(rows, columns=[c for c in SUMMARY_COLUMNS if c != "split"])
    parts = out["dataset"].str.partition("@")
    out.insert(1, "split", parts[2].replace("", "random"))
    out["dataset"] = parts[0]
    return out


def format_summary(summary, max_error: int = 70) -> str:
    """A markdown table of :func:`summarise` output: RMSE (pp) and Kendall tau as mean ± sd, failures with the first
    error; metabench pools starred (with :data:`essence.data.POOL_CAVEAT`)."""
    summary = _with_benchmark(summary)
    suites = bool((summary["benchmark"] != summary["dataset"]).any())
    top = "split" in summary.columns and bool((summary["split"] != "random").any())
    header = ["dataset", *(["split"] if top else []), *(["benchmark"] if suites else []), "method", "k",
              "RMSE pp (mean ± sd)", "Kendall tau (mean ± sd)", "failed", "error"]
    body = []
    for r in summary.itertuples(index=False):
        err = str(r.error) if len(str(r.error)) <= max_error else str(r.error)[: max_error - 3] + "..."
        body.append([f"{r.dataset}{'*' if r.pool_preselected and not suites else ''}", *([r.split] if top else []),
                     *([f"{r.benchmark}{'*' if r.pool_preselected else ''}"] if suites else []), r.method, str(r.k),
                     mean_sd(r.rmse_mean, r.rmse_sd, 2), mean_sd(r.kendall_mean, r.kendall_sd, 3),
                     f"{r.n_failed}/{r.n_runs}", err.replace("|", "/")])
    return _markdown(body, header, summary["pool_preselected"].any())


def format_wide(summary, k: int, metric: str = "rmse", methods=None) -> str:
    """A markdown table of :func:`summarise` output at one ``k``: a row per dataset (or suite member), a column per
    method (``methods``: their order), ``metric`` ``"rmse"`` (pp) or ``"kendall"`` as mean ± sd, ``failed`` or ``-``."""
    summary = _with_benchmark(summary)
    if metric not in ("rmse", "kendall"):
        raise InputError(f"metric: expected 'rmse' or 'kendall', got {metric!r}")
    s = summary[summary["k"] == int(k)]
    if s.empty:
        raise InputError(f"k: no runs with k = {k} in the summary (it has k = {sorted(set(summary['k']))})")
    methods = list(dict.fromkeys(s["method"])) if methods is None else list(methods)
    digits = 2 if metric == "rmse" else 3
    cells = {(r.dataset, r.benchmark, r.method): r for r in s.itertuples(index=False)}
    body = []
    for ds, b in dict.fromkeys(zip(s["dataset"], s["benchmark"])):
        pre = bool(s.loc[(s["dataset"] == ds) & (s["benchmark"] == b), "pool_preselected"].any())
        body.append([f"{_label(ds, b)}{'*' if pre else ''}"] + [
            "-" if r is None else mean_sd(getattr(r, f"{metric}_mean"), getattr(r, f"{metric}_sd"), digits, missing="failed")
            for r in (cells.get((ds, b, m)) for m in methods)])
    return _markdown(body, ["dataset"] + methods, s["pool_preselected"].any())


def _markdown(body, header, caveat: bool) -> str:
    """A Markdown table of string cells, ending with :data:`essence.data.POOL_CAVEAT` when ``caveat``."""
    table = pd.DataFrame(body, columns=header, dtype=str).to_markdown(index=False, disable_numparse=True)
    return table + (f"\n\n* {_data.POOL_CAVEAT}" if caveat else "")


def ratio_table(results, k: int, methods=None, datasets=None):
    """:func:`essence.data.metrics.ratio_to_random` at one ``k`` from a results table: a DataFrame, a row per dataset
    (or suite member), a column per method (``methods``, ``datasets``: their order)."""
    results = _with_benchmark(results)
    at_k = results[results["k"] == int(k)]
    methods = list(dict.fromkeys(at_k["method"])) if methods is None else list(methods)
    datasets = list(dict.fromkeys(at_k["dataset"])) if datasets is None else list(datasets)
    rows = [(d, b) for d in datasets for b in (list(dict.fromkeys(at_k.loc[at_k["dataset"] == d, "benchmark"])) or [d])]
    return pd.DataFrame({m: [ratio_to_random(*_paired(results, m, k, d, b)) for d, b in rows] for m in methods},
                        index=pd.Index([_label(d, b) for d, b in rows], name="dataset"))
