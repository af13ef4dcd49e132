"""Splitting models into train / validation / test: stratified (``random``) or by strength, the extrapolation
protocols (``top``, ``bottom``, ``far``, ``chance``: every test model outside the references' scores)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .errors import InputError
from .responses import Responses

__all__ = ["Split", "split_models", "SPLIT_KINDS", "EXTRAPOLATION_SPLITS", "default_test", "FAR_REFERENCES",
           "CHANCE_BAND_PP", "CHANCE_BAND_SPAN", "MIN_CHANCE_REFERENCES"]

#: how the test models are chosen: stratified at random; the strongest ``test`` fraction (``top``); the weakest
#: (``bottom``); the strongest with references only among the weakest :data:`FAR_REFERENCES` (``far``: a gap
#: between them); the strongest with references only near the benchmark's floor (``chance``)
SPLIT_KINDS = ("random", "top", "bottom", "far", "chance")
#: the kinds whose test models lie outside the references' scores; they hold out 20 % by default
EXTRAPOLATION_SPLITS = ("top", "bottom", "far", "chance")
#: ``far``: the references (train + validation) are the weakest 60 % of the models
FAR_REFERENCES = 0.6
#: ``chance``: references within max(CHANCE_BAND_PP, CHANCE_BAND_SPAN x (strongest - floor)) pp of the floor
CHANCE_BAND_PP, CHANCE_BAND_SPAN = 5.0, 0.15
#: ``chance``: fewer references than this is an InputError
MIN_CHANCE_REFERENCES = 10

_KIND_HELP = ("random: test models drawn across the scores; top: the strongest; bottom: the weakest; far: the "
              "strongest, references only the weakest 60 %; chance: the strongest, references only near the floor")


def default_test(kind: str) -> float:
    """The test fraction a split of ``kind`` holds out when none is given: 0.2 for the extrapolation kinds
    (:data:`EXTRAPOLATION_SPLITS`), 0.1 for ``random``."""
    return 0.2 if kind in EXTRAPOLATION_SPLITS else 0.1


class Split(NamedTuple):
    """Disjoint model indices: ``train`` fits, ``val`` chooses, ``test`` is touched once for the reported figure.
    ``far`` and ``chance`` splits leave some models in no part (the gap between references and test)."""

    train: np.ndarray
    val: np.ndarray
    test: np.ndarray


def split_models(responses: Responses | np.ndarray, test: float | None = None, val: float = 0.1, seed: int = 0,
                 kind: str = "random", chance: float | None = None) -> Split:
    """Sorted model indices for train / validation / test of a `Responses` (its ``target``) or ``(n_models,)``
    targets (pp); same seed, same split. ``test``: the held-out fraction, None for :func:`default_test` (0.1 for
    ``random``, 0.2 for the others); ``n_test = round(test * n)``.

    - ``random``: one test model from each of ``n_test`` target strata; validation ``round(val * n)`` drawn
      stratified from the rest, training the remainder.
    - ``top`` / ``bottom``: test the ``n_test`` strongest / weakest (ties broken by the seed); validation and
      training as for ``random`` from the rest.
    - ``far``: test the ``n_test`` strongest; references (train + validation) only the weakest
      ``round(FAR_REFERENCES * n)`` (60 %); the models in between belong to no part. Needs ``test <= 0.4``.
    - ``chance``: test the ``n_test`` strongest; references only the models near the benchmark's floor: the floor
      is ``chance`` (pp, e.g. 25 for four-way multiple choice) when given, else the lowest target, and a model is
      a reference when its target is at most ``floor + max(CHANCE_BAND_PP, CHANCE_BAND_SPAN * (strongest -
      floor))`` pp (5 pp, widened to 15 % of the benchmark's span above the floor: "near chance" relative to how
      far the benchmark reaches). Fewer than :data:`MIN_CHANCE_REFERENCES` (10) such models, or a band that
      reaches the test models, is an InputError.

    For ``far`` and ``chance`` the validation models are ``round(val * n_references)`` (at least one when ``val >
    0``) drawn stratified from the references. InputError for fractions outside [0, 1), too few models, an unknown
    ``kind``."""
    y = responses.target if isinstance(responses, Responses) else np.asarray(responses, dtype=float)
    n = len(y)
    if kind not in SPLIT_KINDS:
        raise InputError(f"split: {kind!r} is not one of {', '.join(SPLIT_KINDS)} ({_KIND_HELP})")
    if test is None:
        test = default_test(kind)
    for nm, f in (("test", test), ("val", val)):
        if not 0 <= f < 1:
            raise InputError(f"{nm}: fraction {f} must be in [0, 1)")
    if test + val >= 1:
        raise InputError(f"test + val = {test + val} leaves no training models; use smaller fractions")
    n_test, n_val = int(round(test * n)), int(round(val * n))
    if (test > 0 and n_test == 0) or (val > 0 and n_val == 0) or n - n_test - n_val < 2:
        raise InputError(
            f"{n} models are too few to split test={test}, val={val} (need at least one test, one validation "
            "and two training models); add models or change the fractions")
    if chance is not None and kind != "chance":
        raise InputError(f"chance: a chance level is used only by split 'chance', not {kind!r}; leave it None")
    rng = np.random.default_rng(seed)

    def draw(pool: np.ndarray, m: int) -> np.ndarray:
        if m == 0:
            return np.array([], dtype=np.intp)
        order = pool[np.lexsort((rng.random(pool.size), y[pool]))]
        return np.array([rng.choice(chunk) for chunk in np.array_split(order, m)], dtype=np.intp)

    all_idx = np.arange(n)
    # weakest first, ties in a seeded order (random splits draw nothing here: their split stays what it was)
    by_score = np.lexsort((rng.random(n), y)) if kind != "random" else None
    if kind == "random":
        te, refs = draw(all_idx, n_test), None
    elif kind == "bottom":
        te, refs = by_score[:n_test], None
    else:
        te, refs = by_score[n - n_test:], None
    if kind == "far":
        if test > 1 - FAR_REFERENCES:
            raise InputError(f"test: a 'far' split holds out the strongest {test:g} but its references are the weakest "
                             f"{FAR_REFERENCES:.0%}; use test <= {1 - FAR_REFERENCES:g}")
        refs = by_score[:int(round(FAR_REFERENCES * n))]
    elif kind == "chance":
        refs = _chance_references(y, te, chance)
    if refs is None:
        rest = np.setdiff1d(all_idx, te)
        va = draw(rest, n_val)
    else:
        refs = np.sort(refs)
        m_val = max(int(round(val * refs.size)), 1) if val > 0 else 0
        if refs.size - m_val < 2:
            raise InputError(f"{kind} split: {refs.size} reference models are too few for {m_val} validation and two "
                             "training models; add models or lower val")
        rest = refs
        va = draw(rest, m_val)
    tr = np.setdiff1d(rest, va)
    return Split(np.sort(tr), np.sort(va), np.sort(te))


def _chance_references(y: np.ndarray, te: np.ndarray, chance: float | None) -> np.ndarray:
    """The ``chance`` split's references (split_models' docstring): the models within the band above the floor."""
    finite = y[np.isfinite(y)]
    if chance is not None and not (np.isfinite(chance) and 0 <= chance <= 100):
        raise InputError(f"chance: {chance!r} is not a chance level in pp; give a number in [0, 100] or None")
    floor = float(np.min(finite)) if chance is None else float(chance)
    band = max(CHANCE_BAND_PP, CHANCE_BAND_SPAN * (float(np.max(finite)) - floor))
    refs = np.flatnonzero(y <= floor + band)
    where = "the lowest score" if chance is None else "the chance level"
    if np.intersect1d(refs, te).size:
        raise InputError(f"chance split: the band {floor:.1f}-{floor + band:.1f} pp ({where} + {band:.1f}) reaches the "
                         "strongest models held out for test: the benchmark has too little spread above its floor; "
                         "use split 'bottom' or 'top' instead")
    if refs.size < MIN_CHANCE_REFERENCES:
        raise InputError(f"chance split: only {refs.size} model(s) score within {band:.1f} pp of {where} "
                         f"({floor:.1f} pp); it needs at least {MIN_CHANCE_REFERENCES} references near the floor (add "
                         "weak models, or use split 'bottom' or 'far')")
    return refs
