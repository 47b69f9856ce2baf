"""Undefined names by scope: module, class, function, lambda and comprehension scopes, global, nonlocal, del."""

from __future__ import annotations

from textwrap import dedent

from plait.reconcile._undefined import unbound_names


def unbound(source: str) -> list[tuple[str, int]]:
    return [(u.name, u.line) for u in unbound_names(dedent(source))]


def test_module_names_bound_later_or_anywhere_at_top_level_count_and_a_name_bound_nowhere_does_not() -> None:
    source = """\
        def main():
            return helper() + LIMIT + missing

        def helper():
            return 1

        LIMIT = 3
        """
    assert unbound(source) == [("missing", 2)]


def test_a_class_body_name_is_not_visible_in_its_methods_nor_in_its_comprehensions() -> None:
    source = """\
        class Config:
            size = 2
            doubled = size * 2
            sizes = [size for _ in range(3)]

            def area(self):
                return self.size * size
        """
    assert unbound(source) == [("size", 4)]


def test_parameters_and_locals_bind_in_their_function_only() -> None:
    source = """\
        def scale(value, *args, factor=2, **kwargs):
            result = value * factor
            return result, args, kwargs

        def report():
            return result
        """
    assert unbound(source) == [("result", 6)]


def test_a_lambda_binds_its_parameters_and_its_default_is_read_outside() -> None:
    source = """\
        square = lambda x, y=offset: x * x + y
        cube = lambda x: x * x * z
        """
    assert unbound(source) == [("offset", 1), ("z", 2)]


def test_a_comprehension_variable_stays_in_the_comprehension() -> None:
    source = """\
        squares = [n * n for n in range(3)]
        pairs = {k: v for k, v in zip(squares, squares)}
        nested = [a + b for a in range(2) for b in range(a)]
        print(n)
        """
    assert unbound(source) == [("n", 4)]


def test_global_binds_at_module_level_from_a_function_and_nonlocal_from_the_enclosing_one() -> None:
    source = """\
        def setup():
            global registry
            registry = {}

        def counter():
            count = 0

            def step():
                nonlocal count
                count += 1
                return count, registry

            return step

        def reader():
            global declared_only
            return declared_only
        """
    assert unbound(source) == [("declared_only", 17)]


def test_a_deleted_name_counts_as_bound() -> None:
    source = """\
        cache = {}
        del cache
        del temporary
        print(never)
        """
    assert unbound(source) == [("never", 4)]


def test_a_function_named_top_keeps_its_locals() -> None:
    source = """\
        class Stack:
            def top(self):
                items = self.items
                return items[-1] if items else gone
        """
    assert unbound(source) == [("gone", 4)]
