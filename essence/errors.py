"""The package's two error types: the one place that says what counts as the user's mistake.

``InputError`` is raised by the library for input a user can fix (a bad array, parameter, file or
artifact); its message names the problem, the value and the fix. ``UsageError`` is its command-line
cousin (a bad flag or path). The command line prints either as one line and exits with status 2;
any other exception is a bug in `essence` and is shown as one.

``InputError`` subclasses ``ValueError`` so that callers who catch ``ValueError`` keep working.
"""

from __future__ import annotations

__all__ = ["InputError", "UsageError"]


class InputError(ValueError):
    """Bad input to the library: the message names what is wrong and what to do."""


class UsageError(InputError):
    """Bad command-line usage (a flag, a path, an output file): printed as one line, exit status 2."""
