"""Figure functions the notebooks call, one file per notebook, all importable from here; each returns its
matplotlib Figure and :func:`~essence.lessons.plots.style.savefig` writes it as PNG + SVG. Single-panel figures
take ``ax=None``: given an Axes they draw into it, else they make their own figure."""

from . import coarse_filter, comparison, data, genetic, new_model, profile, redundancy, refinement, style, suite
from .coarse_filter import *  # noqa: F401,F403
from .comparison import *  # noqa: F401,F403
from .data import *  # noqa: F401,F403
from .genetic import *  # noqa: F401,F403
from .new_model import *  # noqa: F401,F403
from .profile import *  # noqa: F401,F403
from .redundancy import *  # noqa: F401,F403
from .refinement import *  # noqa: F401,F403
from .style import *  # noqa: F401,F403
from .suite import *  # noqa: F401,F403

__all__ = [name for m in (style, data, redundancy, coarse_filter, genetic, refinement, comparison, profile, new_model,
                          suite) for name in m.__all__]
