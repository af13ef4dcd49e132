"""Time SmolLM2 features on every shipped dataset with item texts, cold and warm; then warm the cache.

Prints, per dataset: items, tokens, seconds to compute hidden states + perplexities from scratch
(one forward pass gives both; the model is already in memory) and seconds to read them back from
the disk cache in a fresh lookup (no model needed). Also the model load times (GGUF file vs the
converted float32 copy, each in a fresh subprocess) and peak resident memory.

A dataset whose features are missing from the default cache (``essence.features.cache_root()``) is
computed cold straight into it, batch by batch, so an interrupted run keeps its progress and the
cache ends up warm for every method and notebook. A dataset already cached there is recomputed cold
in a temporary cache, or skipped with ``--skip-cached`` (then only its warm read is timed).

    .venv/bin/python benchmarks/features.py [--datasets gsm8k arc] [--batch-size 16] [--skip-cached]

Timings depend on the machine and on what else runs on it (measured on 2 shared cores).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from essence.data import DATASETS, load  # noqa: E402
from essence.features import lm  # noqa: E402
from essence.features.cache import FeatureCache, cache_root  # noqa: E402

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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="*", default=None, help="default: every shipped dataset with texts")
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--max-length", type=int, default=1024)
    ap.add_argument("--skip-cached", action="store_true",
                    help="do not recompute datasets already in the default cache; time their warm read only")
    ap.add_argument("--skip-load-timing", action="store_true", help="skip the two model-load subprocesses")
    args = ap.parse_args(argv)

    names = args.datasets or list(DATASETS)
    data = {}
    for name in names:
        r = load(name)
        if r.texts is None:
            print(f"{name}: no item texts, skipped")
            continue
        data[name] = [str(t) for t in r.texts]

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
    raise SystemExit(main())
