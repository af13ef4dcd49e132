"""The package's error and warning types: the one place that says what counts as the user's mistake.

``InputError`` is raised by the library for input a user can fix (a bad array, parameter, file or
artifact); its message names the problem, the value and the fix. ``UsageError`` is its command-line
cousin (a bad flag or path). The command line prints either as one line and exits with status 2;
any other exception is a bug in `essence` and is shown as one.

``EssenceWarning`` is for input that is legal but suspicious (constant data, scores that look like
fractions where percentage points are expected, figures computed on very few models): the Python API
gets a real warning (filter it with the ``warnings`` module), the command line prints it as one line
``essence: warning: ...`` on stderr.

``InputError`` subclasses ``ValueError`` so that callers who catch ``ValueError`` keep working.
Messages are cleaned of numpy reprs: ``np.str_('a')`` reads ``'a'`` and ``np.float64(nan)`` reads ``nan``,
wherever the message was built.
"""

from __future__ import annotations

import re
import warnings

__all__ = ["InputError", "UsageError", "EssenceWarning", "warn", "plain"]

# numpy >= 2 scalar reprs inside a message: np.str_('x'), np.float64(1.5), np.int64(3), np.bool(True)
_NP_STR = re.compile(r"""np\.(?:str_|bytes_)\(('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")\)""")
_NP_NUM = re.compile(r"np\.(?:float|int|uint|complex|longdouble|bool_|bool)\d*\(([^()]*)\)")
_NP_BOOL = re.compile(r"np\.(True|False)_")


def plain(message: str) -> str:
    """``message`` with numpy scalar reprs replaced by the values a user typed (``np.str_('a')`` -> ``'a'``)."""
    return _NP_BOOL.sub(r"\1", _NP_NUM.sub(r"\1", _NP_STR.sub(r"\1", message)))


class InputError(ValueError):
    """Bad input to the library: the message names what is wrong and what to do."""

    def __init__(self, *args):
        if len(args) == 1 and isinstance(args[0], str):
            args = (plain(args[0]),)
        super().__init__(*args)


class UsageError(InputError):
    """Bad command-line usage (a flag, a path, an output file): printed as one line, exit status 2."""


class EssenceWarning(UserWarning):
    """Legal but suspicious input; the command line prints it as one line ``essence: warning: ...``."""


def warn(message: str, stacklevel: int = 2) -> None:
    """Issue an :class:`EssenceWarning` (numpy reprs cleaned) attributed to the caller's caller."""
    warnings.warn(plain(message), EssenceWarning, stacklevel=stacklevel + 1)
