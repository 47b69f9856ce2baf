"""Undefined names and the module's namespace: imports, star imports, `__all__`, module `__getattr__`, names
bound where `ast` cannot see them (`globals()`, `locals()`, `exec`, the module object, `__builtins__`)."""

from __future__ import annotations

from textwrap import dedent

import pytest

from plait.reconcile._undefined import unbound_names


def unbound(source: str, submodules: tuple[str, ...] = ()) -> list[tuple[str, int, bool]]:
    return [(u.name, u.line, u.listed) for u in unbound_names(dedent(source), submodules=submodules)]


def test_every_import_form_binds_its_name_and_only_that() -> None:
    source = """\
        import os.path
        import json as j
        from collections import OrderedDict as Ordered, deque
        from . import sibling
        from .pkg import (
            first,
            second,
        )

        def use():
            import shlex
            return os, j, Ordered, deque, sibling, first, second, shlex

        print(path, shlex)
        """
    assert unbound(source) == [("path", 14, False), ("shlex", 14, False)]


@pytest.mark.parametrize(
    "opening",
    [
        "from helpers import *\n",
        "globals().update(name=1)\n",
        "globals()['name'] = 1\n",
        "locals()['name'] = 1\n",
        "vars().update(name=1)\n",
        "exec('name = 1')\n",
        "import sys\nsetattr(sys.modules[__name__], 'name', 1)\n",
        "__builtins__['name'] = 1\n",
    ],
)
def test_a_module_that_may_bind_names_unseen_is_not_judged(opening: str) -> None:
    assert unbound(opening + "print(name)\n") == []
    assert unbound("print(name)\n") == [("name", 1, False)]


def test_all_lists_names_the_module_binds_or_a_package_holds() -> None:
    source = """\
        from .core import run

        def main():
            return run()

        __all__ = ["run", "main", "cli", "gone"]
        __all__ += ["later"]
        """
    assert unbound(source, submodules=("cli",)) == [("gone", 6, True), ("later", 7, True)]


def test_a_module_getattr_may_provide_what_all_lists_but_not_a_bare_read() -> None:
    source = """\
        def __getattr__(name):
            return name

        __all__ = ["lazy"]
        print(lazy)
        """
    assert unbound(source) == [("lazy", 5, False)]
