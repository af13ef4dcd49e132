"""Time SmolLM2 features on every shipped dataset with item texts, cold and warm; or write them as committed data.

``--write-committed`` computes the hidden states and perplexities of every item text of the shipped datasets
(those with texts) and writes them to ``data/features/<model>/<kind>/<dataset>.npz`` with
``data/features/SHA256SUMS`` (essence.features.committed), the rows every notebook and method then reads
instead of running SmolLM2. It goes through the local cache (resumable; rows already there are reused),
or through a fresh temporary cache with ``--fresh`` (everything from the model: about 40 CPU minutes):

    .venv/bin/python benchmarks/features.py --write-committed [--fresh] [--datasets arc gsm8k]

Without it, the timing below.

Prints, per dataset: items, tokens, seconds to compute hidden states + perplexities from scratch
(one forward pass gives both; the model is already in memory) and seconds to read them back from
the disk cache in a fresh lookup (no model needed). Also the model load times (GGUF file vs the
converted float32 copy, each in a fresh subprocess) and peak resident memory.

A dataset whose features are missing from the default cache (``essence.features.cache_root()``) is
computed cold straight into it, batch by batch, so an interrupted run keeps its progress and the
cache ends up warm for every method and notebook. A dataset already cached there is recomputed cold
in a temporary cache, or skipped with ``--skip-cached`` (then only its warm read is timed).

    .venv/bin/python benchmarks/features.py [--datasets gsm8k arc] [--batch-size 16] [--skip-cached]

Timings depend on the machine and on what else runs on it (measured on 2 shared cores). Both modes read no
committed rows (``$ESSENCE_FEATURES_COMMITTED=off``): they run the model.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

os.environ["ESSENCE_FEATURES_COMMITTED"] = "off"  # essence.features.committed.ENV: run the model, read no rows

from essence.data import DATASETS, load  # noqa: E402
from essence.features import committed, lm  # noqa: E402
from essence.features.cache import FeatureCache, cache_root, text_key  # noqa: E402

_LOAD_SNIPPET = """
import json, resource, sys
from essence.features import lm
t = lm._timed_load(sys.argv[1])
print(json.dumps({"seconds": t, "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def timed_load(source: str) -> dict:
    out = subprocess.run([sys.executable, "-c", _LOAD_SNIPPET, source], cwd=ROOT, capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(f"loading from {source} failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def texts_of(names) -> dict[str, list[str]]:
    """``{dataset: item texts}`` of the datasets among ``names`` that carry texts."""
    out = {}
    for name in names:
        r = load(name)
        if r.texts is None:
            print(f"{name}: no item texts, skipped")
            continue
        out[name] = [str(t) for t in r.texts]
    return out


def write_committed(names, batch_size: int, fresh: bool) -> int:
    """Compute (or read from the local cache) the features of every item text and write them as committed data."""
    root = Path(__file__).resolve().parents[1] / "data" / "features"
    data = texts_of(names)
    with tempfile.TemporaryDirectory(prefix="essence-features-") as tmp:
        for name, texts in data.items():
            t0 = time.perf_counter()
            hidden, ppl = lm.lm_features(texts, batch_size=batch_size, max_length=1024, progress=True,
                                         cache=Path(tmp) if fresh else True)
            keys = [text_key(t) for t in texts]
            for kind, values in (("hidden_last_ml1024", hidden), ("ppl_ml1024", ppl)):
                path = committed.write_committed(lm.MODEL_ID, kind, name, keys, values, root=root)
                print(f"{name:14s} {kind:20s} {len(set(keys)):5d} rows  {path.stat().st_size / 1e6:6.2f} MB  "
                      f"{path.relative_to(root.parents[1])}", flush=True)
            print(f"{name}: {time.perf_counter() - t0:.0f} s", flush=True)
    total = sum(p.stat().st_size for p in root.rglob("*.npz"))
    print(f"total {total / 1e6:.2f} MB under {root.relative_to(root.parents[1])}; checksums in "
          f"{(root / committed.SUMS).relative_to(root.parents[1])}")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="*", default=None, help="default: every shipped dataset with texts")
    ap.add_argument("--write-committed", action="store_true",
                    help="write data/features/ (the committed rows) and its SHA256SUMS instead of timing")
    ap.add_argument("--fresh", action="store_true",
                    help="with --write-committed: compute every row from the model (a fresh temporary cache)")
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--max-length", type=int, default=1024)
    ap.add_argument("--skip-cached", action="store_true",
                    help="do not recompute datasets already in the default cache; time their warm read only")
    ap.add_argument("--skip-load-timing", action="store_true", help="skip the two model-load subprocesses")
    args = ap.parse_args(argv)

    names = args.datasets or list(DATASETS)
    if args.write_committed:
        return write_committed(names, args.batch_size, args.fresh)
    data = texts_of(names)

    lm.load_model(progress=True)  # make sure the converted copy exists before timing loads
    if not args.skip_load_timing:
        for source in ("gguf", "converted"):
            res = timed_load(source)
            print(f"model load from {source:9s}: {res['seconds']:6.1f} s   "
                  f"(peak RSS of that process {res['peak_rss_mb']:.0f} MB)", flush=True)

    model, tokenizer = lm.load_model()
    kinds = (f"hidden_last_ml{args.max_length}", f"ppl_ml{args.max_length}")
    print(f"\n{'dataset':14s} {'items':>6s} {'tokens':>7s} {'cold s':>8s} {'items/s':>8s} {'warm s':>8s}  cold into",
          flush=True)
    tot = {"items": 0, "tokens": 0, "cold": 0.0, "warm": 0.0}
    with tempfile.TemporaryDirectory(prefix="essence-bench-cache-") as tmp:
        for name, texts in data.items():
            n_tok = sum(len(t) for t in tokenizer(texts, add_special_tokens=False)["input_ids"])
            n_missing = max(int(FeatureCache(lm.MODEL_ID, kind).get(texts)[1].sum()) for kind in kinds)
            cached = n_missing == 0
            where = "default cache" + ("" if n_missing == len(texts) else f" ({len(texts) - n_missing} were cached)")
            cold = float("nan")
            if cached and args.skip_cached:
                where = "(cached, skipped)"
            else:
                target = Path(tmp) / name if cached else True
                where = "temp cache" if cached else where
                t0 = time.perf_counter()
                lm.lm_features(texts, batch_size=args.batch_size, max_length=args.max_length, progress=True,
                               cache=target)
                cold = time.perf_counter() - t0
                tot["cold"] += cold
                tot["items"] += len(texts)
                tot["tokens"] += n_tok
            loaded = dict(lm._LOADED)
            lm.clear_loaded_models()  # a warm read must not need the model
            t0 = time.perf_counter()
            lm.lm_features(texts, max_length=args.max_length, progress=False, cache=True)
            warm = time.perf_counter() - t0
            assert not lm._LOADED, "a warm read loaded the model"
            lm._LOADED.update(loaded)
            tot["warm"] += warm
            print(f"{name:14s} {len(texts):6d} {n_tok:7d} {cold:8.1f} {len(texts) / cold:8.2f} {warm:8.3f}  {where}",
                  flush=True)
    if tot["items"]:
        print(f"{'total computed':14s} {tot['items']:6d} {tot['tokens']:7d} {tot['cold']:8.1f} "
              f"{tot['items'] / tot['cold']:8.2f} {tot['warm']:8.3f}  ({tot['tokens'] / tot['cold']:.0f} tokens/s)")
    print(f"peak RSS of this process: {peak_rss_mb():.0f} MB (model in memory + features + batches)")
    print(f"features cached in {cache_root() / 'features' / lm.MODEL_ID}")
    print("(timings: 2 CPU cores shared with other processes; they vary several-fold with the load)")
    return 0


if __name__ == "__main__":
    from essence.data.pinning import ensure

    ensure()  # the same numbers on any machine (essence/data/pinning.py)
    raise SystemExit(main())
