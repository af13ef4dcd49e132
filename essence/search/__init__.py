"""The EssenceBench stages, as pure functions over arrays (no Responses, no I/O).

* :mod:`.redundancy`: text and rank redundancy, the coarse filter (step 1);
* :mod:`.genetic`: the genetic search over k-subsets with a fixed GAM ruler (step 2);
* :mod:`.attribution`: EBM attribution of items and the High / Low / Random groups (step 3).

:class:`essence.methods.essence.EssenceSelector` chains them.
"""

from .attribution import (
                         AttributionResult,
                         attribution_groups,
                         ebm_attribution,
                         shape_norms,
)
from .fitness import GAMRulerFitness
from .genetic import GAResult, genetic_search, random_masks, repair
from .redundancy import (
                         FilterResult,
                         coarse_filter,
                         item_prefilter,
                         normalise_rows,
                         rank_redundancy,
                         standardise_items,
                         text_redundancy,
)

__all__ = [
    "AttributionResult", "attribution_groups", "ebm_attribution", "shape_norms",
    "GAResult", "GAMRulerFitness", "genetic_search", "random_masks", "repair",
    "FilterResult", "coarse_filter", "item_prefilter", "normalise_rows", "rank_redundancy",
    "standardise_items", "text_redundancy",
]
