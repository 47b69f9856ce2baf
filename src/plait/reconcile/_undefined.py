"""Names a Python module may read without binding them: the builtins of the project's Python, and the module's own."""

from __future__ import annotations

import builtins

__all__ = ["PYTHON2_BUILTINS", "known_names"]

PYTHON2_BUILTINS = frozenset(
    {
        "apply",
        "basestring",
        "buffer",
        "cmp",
        "coerce",
        "execfile",
        "file",
        "intern",
        "long",
        "raw_input",
        "reduce",
        "reload",
        "StandardError",
        "unichr",
        "unicode",
        "xrange",
    }
)
"""Builtins of Python 2 that Python 3 no longer has."""

_LATER_BUILTINS = frozenset({"EncodingWarning", "PythonFinalizationError", "aiter", "anext"})
"""Builtins of Python 3 versions that code guarded by a version check may use under an older interpreter."""

_PLATFORM_BUILTINS = frozenset({"WindowsError"})
"""Builtins of Python 3 on one platform only."""

_MODULE_NAMES = frozenset(
    {
        "__annotations__",
        "__builtins__",
        "__cached__",
        "__doc__",
        "__file__",
        "__loader__",
        "__name__",
        "__package__",
        "__path__",
        "__spec__",
    }
)
"""Names Python binds in every module's namespace."""

_CLASS_NAMES = frozenset({"__class__", "__module__", "__qualname__"})
"""Names Python binds in a class body (and `__class__` in its methods)."""

_CHECKER_NAMES = frozenset({"reveal_locals", "reveal_type"})
"""Names type checkers provide, used in files they read and nobody runs."""

_PYTHON3 = frozenset(dir(builtins)) | _LATER_BUILTINS | _PLATFORM_BUILTINS
_KNOWN3 = _PYTHON3 | _MODULE_NAMES | _CLASS_NAMES | _CHECKER_NAMES


def known_names(*, python2: bool = False) -> frozenset[str]:
    """The names a module reads without binding them, for a project that runs on Python 3 (and 2, if `python2`)."""
    return _KNOWN3 | PYTHON2_BUILTINS if python2 else _KNOWN3
