"""EssenceBench step 1 as one call, on the training models: the optional pre-filter, the pre-screen of pools above
``max_pool`` items (:mod:`essence.search.screen`) and the redundancy filter (:mod:`essence.search.redundancy`)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..data.checks import Flag, OneOf, Real, Settings, Whole
from ..data.errors import InputError
from .redundancy import coarse_filter, item_prefilter
from .screen import screen_pool

__all__ = ["FilterConfig", "build_pool"]


@dataclass(frozen=True)
class FilterConfig(Settings):
    """The filter's settings: redundancy thresholds (``>= 1``: off), pre-filter and pre-screen (None: off)."""

    tau_text: float = 0.95
    tau_rank: float = 0.9
    drop_constant: bool = True
    max_item_mean: float | None = None
    min_item_pbis: float | None = None
    max_pool: int | None = 2000
    screen: str = "stratified"
    screen_bins: int = 10

    _domains: ClassVar[dict] = {
        "tau_text": Real(-1.0, 1.0), "tau_rank": Real(-1.0, 1.0), "drop_constant": Flag(),
        "max_item_mean": Real(0.0, 1.0, none=True), "min_item_pbis": Real(0.0, 1.0, none=True),
        "max_pool": Whole(1, none=True), "screen": OneOf("stratified", "pbis", "random"), "screen_bins": Whole(1)}


def build_pool(train, k: int, config: FilterConfig, seed: int = 0, progress: bool = False) -> tuple[np.ndarray, dict]:
    """``(pool, info)``: positions into ``train.items`` a search may choose from, and a JSON record."""
    R, y = train.responses, train.target
    info: dict = {}
    seconds: dict = {}
    pre = item_prefilter(R, y, config.max_item_mean, config.min_item_pbis)
    cand = np.flatnonzero(pre["keep"])
    info["prefilter"] = {
        "max_item_mean": config.max_item_mean, "min_item_pbis": config.min_item_pbis,
        "n_dropped_too_easy": int(pre["too_easy"].size), "n_dropped_low_pbis": int(pre["low_pbis"].size),
        "dropped_too_easy": train.items[pre["too_easy"][:50]].tolist(),
        "dropped_low_pbis": train.items[pre["low_pbis"][:50]].tolist()}
    t0 = time.perf_counter()
    if config.max_pool is not None:
        scr = screen_pool(R[:, cand] if cand.size < train.n_items else R, y, int(config.max_pool), config.screen,
                          bins=config.screen_bins, seed=[int(seed), 13])
        info["screen"] = {**scr["info"], "dropped": train.items[cand[scr["dropped"][:50]]].tolist()}
        cand = cand[scr["keep"]]
    else:
        info["screen"] = {"applied": False, "max_items": None, "n_items": int(cand.size)}
    seconds["screen"] = time.perf_counter() - t0
    emb = None
    t0 = time.perf_counter()
    if train.texts is not None and float(config.tau_text) < 1.0 and cand.size > 1:
        from ..features.text import embed_texts

        emb = embed_texts(train.texts[cand], progress=progress)
    seconds["embed"] = time.perf_counter() - t0
    filt = coarse_filter(R[:, cand], emb, tau_text=config.tau_text, tau_rank=config.tau_rank,
                         drop_constant=config.drop_constant, progress=progress,
                         texts_available=train.texts is not None)
    info["filter"] = filt.to_info(item_ids=train.items[cand])
    pool = cand[filt.kept]
    seconds["filter"] = filt.seconds
    info["pool_size"] = int(pool.size)
    info["seconds"] = {n: round(v, 3) for n, v in seconds.items()}
    if k > pool.size:
        raise InputError(
            f"k: {k} is larger than the {pool.size} items left after the redundancy filter (of {train.n_items}; "
            f"tau_text={config.tau_text}, tau_rank={config.tau_rank}, drop_constant={config.drop_constant}); lower k "
            "or raise tau_text / tau_rank"
            + (f" (or keep the {filt.constant.size} constant items with drop_constant=False)"
               if config.drop_constant and filt.constant.size else "")
            + (f" (or raise max_pool={config.max_pool})" if info["screen"].get("applied") else ""))
    return pool, info
