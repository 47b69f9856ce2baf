"""Whether a syntax error Python 3 reports may be Python 2 code: what a project that declares Python 2 may hold."""

from __future__ import annotations

import re

__all__ = ["python2_may_parse"]

_PYTHON2_ONLY = re.compile(
    r"Missing parentheses in call to"
    r"|multiple exception types must be parenthesized"
    r"|leading zeros in decimal integer literals"
    r"|invalid (?:decimal|hexadecimal|octal) literal"
    r"|\(unicode error\)"
    r"|bytes can only contain ASCII literal characters"
    r"|inconsistent use of tabs and spaces"
    r"|(?:Function|Lambda expression) parameters cannot be parenthesized"
    r"|invalid syntax"
)
"""Python 3's messages for what Python 2 accepts: print and exec statements, `except E, e`, octal `0777`, `10L`,
`\\U` in a byte string, non-ASCII bytes, mixed tabs, tuple parameters; `<>`, backticks, `raise E, v` and `ur''`
are plain invalid syntax. An unclosed bracket or a broken indentation is an error in Python 2 too."""


def python2_may_parse(error: str) -> bool:
    """Whether the syntax error `error` (as the parse stage words it) may be code Python 2 accepts."""
    return bool(_PYTHON2_ONLY.search(error))
