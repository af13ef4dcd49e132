"""Figure functions the notebooks call: one consistent style, stable file names, PNG + SVG.

Every figure function returns the matplotlib Figure it drew; :func:`savefig` writes it as
``<figures_dir>/<name>.png`` (150 dpi) and ``<name>.svg`` with deterministic metadata, so
regenerating an unchanged figure rewrites identical SVG files. Single-panel figures take ``ax=None``
(as rliable's do): given an Axes they draw into it, else they make their own figure.

Files: :mod:`~essence.lessons.plots.style` (colours, style, ``savefig``, the caveat note) and one file per
notebook: ``data`` (00), ``redundancy`` (01), ``coarse_filter`` (02), ``genetic`` (03), ``refinement``
(04), ``comparison`` (08), ``profile`` (09), ``new_model`` (10), ``suite`` (11). Every figure function is importable
from ``essence.lessons.plots`` itself.
"""

from .coarse_filter import *  # noqa: F401,F403
from .coarse_filter import __all__ as _coarse_filter
from .comparison import *  # noqa: F401,F403
from .comparison import __all__ as _comparison
from .data import *  # noqa: F401,F403
from .data import __all__ as _data
from .genetic import *  # noqa: F401,F403
from .genetic import __all__ as _genetic
from .new_model import *  # noqa: F401,F403
from .new_model import __all__ as _new_model
from .profile import *  # noqa: F401,F403
from .profile import __all__ as _profile
from .redundancy import *  # noqa: F401,F403
from .redundancy import __all__ as _redundancy
from .refinement import *  # noqa: F401,F403
from .refinement import __all__ as _refinement
from .style import *  # noqa: F401,F403
from .style import __all__ as _style
from .suite import *  # noqa: F401,F403
from .suite import __all__ as _suite

__all__ = [*_style, *_data, *_redundancy, *_coarse_filter, *_genetic, *_refinement, *_comparison, *_profile,
           *_new_model, *_suite]
