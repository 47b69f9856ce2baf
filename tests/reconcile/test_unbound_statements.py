"""Undefined names and the statements that bind: conditional and try definitions, loops, with, walrus, except, match."""

from __future__ import annotations

import sys
from textwrap import dedent

import pytest

from plait.reconcile._undefined import unbound_names


def unbound(source: str) -> list[tuple[str, int]]:
    return [(u.name, u.line) for u in unbound_names(dedent(source))]


def test_a_name_defined_in_one_branch_of_an_if_or_a_try_is_bound() -> None:
    source = """\
        import sys

        if sys.platform == "win32":
            def opener(path):
                return path
        try:
            import simplejson as json
        except ImportError:
            fallback = None
        print(opener, json, fallback, absent)
        """
    assert unbound(source) == [("absent", 10)]


def test_for_and_with_targets_bind_where_they_run() -> None:
    source = """\
        import contextlib

        for index, (key, value) in enumerate({}.items()):
            pass
        with contextlib.nullcontext(1) as handle, open(__file__) as (stream):
            pass
        print(index, key, value, handle, stream, other)
        """
    assert unbound(source) == [("other", 7)]


def test_a_walrus_binds_in_the_enclosing_scope_even_from_a_comprehension() -> None:
    source = """\
        if (size := 3) > 2:
            pass
        found = any((hit := n) > 1 for n in range(size))

        def inner():
            values = [(last := v) for v in range(2)]
            return values, last

        print(hit, last)
        """
    assert unbound(source) == [("last", 9)]


def test_except_as_binds_and_a_probe_expecting_a_name_error_is_not_a_use() -> None:
    source = """\
        try:
            text_type = unicode
        except NameError:
            text_type = str
        try:
            pass
        except ValueError as error:
            print(error)
        try:
            value = long
        except TypeError:
            value = int
        """
    assert unbound(source) == [("long", 10)]


def test_match_binds_capture_star_and_rest_names_and_reads_class_patterns() -> None:
    source = """\
        def kind(event):
            match event:
                case {"type": "click", **rest}:
                    return rest
                case [first, *others]:
                    return first, others
                case Point(x=0) as origin:
                    return origin
                case str() | bytes() as raw:
                    return raw
        """
    assert unbound(source) == [("Point", 7)]


@pytest.mark.skipif(sys.version_info < (3, 12), reason="type parameters are Python 3.12 syntax")
def test_type_parameters_bind_in_their_function_and_class() -> None:
    source = """\
        def first[T](items: list[T]) -> T:
            return items[0]

        class Box[V]:
            def get(self) -> V:
                return self.value

        print(T)
        """
    assert unbound(source) == [("T", 8)]
