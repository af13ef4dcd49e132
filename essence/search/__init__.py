"""The EssenceBench stages as pure functions over arrays: the coarse filter (:mod:`.redundancy`, :mod:`.filter`),
the genetic search (:mod:`.genetic`, :mod:`.fitness`) and the attribution-guided refinement (:mod:`.attribution`,
:mod:`.refine`); :class:`essence.methods.essence.EssenceSelector` chains them."""

from .attribution import AttributionResult, attribution_groups, ebm_attribution, shape_norms
from .fitness import GAMRulerFitness
from .genetic import GAResult, genetic_search, random_masks, repair
from .redundancy import (FilterResult, coarse_filter, item_prefilter, normalise_rows, rank_redundancy,
                         standardise_items, text_redundancy)

__all__ = ["AttributionResult", "attribution_groups", "ebm_attribution", "shape_norms", "GAResult", "GAMRulerFitness",
           "genetic_search", "random_masks", "repair", "FilterResult", "coarse_filter", "item_prefilter",
           "normalise_rows", "rank_redundancy", "standardise_items", "text_redundancy"]
