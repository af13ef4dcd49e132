"""Error and warning types: ``InputError`` (a ``ValueError``: input a user can fix; the message names the problem,
the value and the fix), ``UsageError`` (a bad flag or path; the CLI prints either as one line, exit 2) and
``EssenceWarning`` (legal but suspicious input). Messages are cleaned of numpy reprs."""

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
