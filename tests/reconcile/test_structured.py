"""The structured rung: Python files merged entity by entity, and the seam for other languages."""

from __future__ import annotations

import ast
import asyncio

from plait.reconcile.structured import (
    Entity,
    EntityMerge,
    PythonMerger,
    StructuredResolver,
    merge_entities,
    python_entities,
)
from plait.reconcile.types import FileConflict, MergeContext

BASE = '''"""Shapes."""

import math


def area(w, h):
    return w * h


def perimeter(w, h):
    return 2 * (w + h)


class Circle:
    """A circle."""

    def __init__(self, r):
        self.r = r

    def area(self):
        return math.pi * self.r ** 2

    def perimeter(self):
        return 2 * math.pi * self.r
'''


def _merge(base: str, ours: str, theirs: str) -> EntityMerge | None:
    return PythonMerger().merge(base, ours, theirs)


def test_entities_cover_the_source_exactly_with_decorators_and_comments_attached() -> None:
    source = (
        "#!/usr/bin/env python\n# header\nimport os; import sys\n\n\n# helper\n@decorate\ndef f():\n    pass\n\n\n"
        "class K:\n\n    # a method\n    def m(self):  # trailing\n        pass\n# tail comment"
    )
    entities = python_entities(source)

    assert entities is not None and "".join(e.text for e in entities) == source
    keys = [e.key for e in entities]
    assert keys == [("import", "os"), ("def", "f"), ("class", "K"), ("<end>",)]
    f = entities[1]
    assert f.lead == "\n\n# helper\n" and f.body.startswith("@decorate\ndef f():")
    k = entities[2]
    assert (
        k.children is not None
        and [c.name for c in k.children] == ["K.m"]
        and k.children[0].lead == "\n    # a method\n"
    )
    assert python_entities("def broken(:\n") is None


def test_different_functions_changed_on_each_side_merge_and_parse() -> None:
    ours = BASE.replace("return w * h", "return float(w * h)")
    theirs = BASE.replace("return 2 * (w + h)", "return 2 * w + 2 * h")

    merged = _merge(BASE, ours, theirs)

    assert merged is not None
    assert merged.text == BASE.replace("return w * h", "return float(w * h)").replace(
        "return 2 * (w + h)", "return 2 * w + 2 * h"
    )
    assert merged.ours_changed == ("area",) and merged.theirs_changed == ("perimeter",)
    ast.parse(merged.text)


def test_methods_of_one_class_changed_on_different_sides_merge_method_by_method() -> None:
    ours = BASE.replace("return math.pi * self.r ** 2", "return math.pi * self.r * self.r")
    theirs = BASE.replace("return 2 * math.pi * self.r", "return math.tau * self.r")

    merged = _merge(BASE, ours, theirs)

    assert merged is not None and "self.r * self.r" in merged.text and "math.tau * self.r" in merged.text
    assert "Circle.area" in merged.ours_changed and "Circle.perimeter" in merged.theirs_changed


def test_new_entities_from_both_sides_are_kept_theirs_after_ours_at_the_same_place() -> None:
    ours = BASE.replace("\n\nclass Circle:", "\n\ndef volume(w, h, d):\n    return w * h * d\n\n\nclass Circle:")
    theirs = BASE.replace(
        "\n\nclass Circle:", "\n\ndef diagonal(w, h):\n    return math.hypot(w, h)\n\n\nclass Circle:"
    )
    theirs = theirs + "\n\nUNIT = 'cm'\n"

    merged = _merge(BASE, ours, theirs)

    assert merged is not None
    text = merged.text
    assert (
        text.index("def perimeter(w")
        < text.index("def volume")
        < text.index("def diagonal")
        < text.index("class Circle")
    )
    assert text.endswith("return 2 * math.pi * self.r\n\n\nUNIT = 'cm'\n")
    ast.parse(text)


def test_one_entity_changed_differently_on_both_sides_is_given_up() -> None:
    ours = BASE.replace("return w * h", "return float(w * h)")
    theirs = BASE.replace("return w * h", "return abs(w * h)")
    assert _merge(BASE, ours, theirs) is None


def test_a_change_to_what_the_other_side_deleted_or_moved_is_given_up() -> None:
    changed = BASE.replace("return w * h", "return float(w * h)")
    deleted = BASE.replace("def area(w, h):\n    return w * h\n\n\n", "")
    assert _merge(BASE, changed, deleted) is None
    wrapped = deleted.replace("import math\n", "import math\n\nif True:\n\n    def area(w, h):\n        return w * h\n")
    also_gone = deleted.replace("return 2 * (w + h)", "return 2 * (h + w)")
    assert _merge(BASE, also_gone, wrapped) is None


def test_a_statement_whose_first_line_both_sides_changed_is_not_kept_twice() -> None:
    base = BASE + "\n\nmain()\n"
    assert _merge(base, base.replace("main()", "main(debug=True)"), base.replace("main()", "main(quiet=True)")) is None
    ours = BASE.replace('"""A circle."""', '"""A round shape."""')
    theirs = BASE.replace('"""A circle."""', '"""A circle, by radius."""')
    assert _merge(BASE, ours, theirs) is None


def test_the_same_import_statement_changed_on_both_sides_unites_its_names() -> None:
    base = "from os.path import join, split\n\n\ndef f():\n    pass\n"
    ours = base.replace("join, split", "basename, join, split")
    theirs = base.replace("join, split", "join, split, splitext")

    merged = _merge(base, ours, theirs)

    assert merged is not None and merged.text.startswith("from os.path import basename, join, split, splitext\n")


def test_a_version_both_sides_bumped_keeps_the_newer_and_says_it_chose() -> None:
    """A maintenance line merged forward (2.3.3 into 3.0.0.dev): the developer keeps the mainline's version."""
    base = '"""Pkg."""\n\n__version__ = "2.3.2"\n\n\ndef old():\n    pass\n'
    ours = base.replace("2.3.2", "3.0.0.dev0")
    theirs = base.replace("2.3.2", "2.3.3").replace("pass", "return 1")

    found = StructuredResolver().resolve_now(FileConflict("pkg/__init__.py", base, ours, theirs))

    assert found is not None and found.text == ours.replace("pass", "return 1")
    assert found.confidence == "low" and "__version__: both sides set it: kept the newer, 3.0.0.dev0 over 2.3.3" in (
        found.reason
    )
    swapped = StructuredResolver().resolve_now(FileConflict("pkg/__init__.py", base, theirs, ours))
    assert swapped is not None and '__version__ = "3.0.0.dev0"' in (swapped.text or "")


def test_a_version_that_is_not_one_plain_newer_string_is_left_to_the_next_rung() -> None:
    base = '__version__ = "2.3.2"\n'
    for ours, theirs in (
        ('__version__ = "2.3.1"\n', '__version__ = "2.3.0"\n'),  # neither moved it forward
        ("__version__ = get_version()\n", '__version__ = "2.3.3"\n'),  # not a string
        ('__version__ = "next"\n', '__version__ = "2.3.3"\n'),  # not a version
    ):
        assert _merge(base, ours, theirs) is None, ours


def test_a_file_that_does_not_parse_is_not_merged() -> None:
    assert _merge(BASE, BASE + "def broken(:\n", BASE) is None


def test_the_resolver_chooses_a_merger_by_extension_and_reports_what_changed() -> None:
    resolver = StructuredResolver()
    ours = BASE.replace("return w * h", "return float(w * h)")
    theirs = BASE.replace("return 2 * (w + h)", "return 2 * w + 2 * h")

    found = asyncio.run(resolver.resolve(FileConflict("shapes.py", BASE, ours, theirs), MergeContext()))

    assert found is not None and found.rung == "structured"
    assert found.reason == "entity merge: ours changed area; theirs changed perimeter"
    assert resolver.merger_for("notes.txt") is None
    assert asyncio.run(resolver.resolve(FileConflict("shapes.py", None, ours, theirs), MergeContext())) is None


class _Lines:
    """A toy language: every line is an entity keyed by its first word."""

    extensions: tuple[str, ...] = (".toy",)
    file_names: tuple[str, ...] = ("Toyfile*",)

    def merge(self, base: str, ours: str, theirs: str) -> EntityMerge | None:
        def cut(text: str) -> list[Entity]:
            return [
                Entity(("line", line.split()[0]), line.split()[0], "", line) for line in text.splitlines(keepends=True)
            ]

        merged = merge_entities(cut(base), cut(ours), cut(theirs))
        return None if merged is None else EntityMerge(*merged)


def test_another_language_plugs_in_through_the_registry() -> None:
    resolver = StructuredResolver([_Lines()])
    conflict = FileConflict("a.toy", "a 1\nb 2\n", "a 10\nb 2\n", "a 1\nb 20\nc 3\n")

    found = resolver.resolve_now(conflict)

    assert found is not None and found.text == "a 10\nb 20\nc 3\n"
    assert resolver.merger_for("x.py") is None
    assert resolver.merger_for("sub/toyfile.lock") is not None, "a name pattern is matched without case"
    both = StructuredResolver([PythonMerger(), _Lines()])
    assert isinstance(both.merger_for("Toyfile.py"), _Lines), "a name pattern is tried before an extension"


class _Pinned(_Lines):
    """The toy language, saying that it had to choose."""

    def merge(self, base: str, ours: str, theirs: str) -> EntityMerge | None:
        merged = super().merge(base, ours, theirs)
        return (
            None
            if merged is None
            else EntityMerge(merged.text, notes=("took the newer pin of a",), low_confidence=True)
        )


def test_a_merger_s_notes_and_doubt_reach_the_resolution() -> None:
    found = StructuredResolver([_Pinned()]).resolve_now(FileConflict("a.toy", "a 1\n", "a 2\n", "a 1\nb 2\n"))

    assert found is not None and found.confidence == "low"
    assert found.reason.endswith("; took the newer pin of a")
