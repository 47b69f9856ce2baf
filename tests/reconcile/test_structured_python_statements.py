"""The Python merger on one statement or one function both sides changed: element by element, statement by statement."""

from __future__ import annotations

from pathlib import Path

import pytest
from gitrepo import Sandbox, sandbox

from plait.reconcile.ladder import merge_commits_sync
from plait.reconcile.structured import EntityMerge, PythonMerger


def _merge(base: str, ours: str, theirs: str) -> EntityMerge | None:
    return PythonMerger().merge(base, ours, theirs)


def _text(base: str, ours: str, theirs: str) -> str:
    merged = _merge(base, ours, theirs)
    assert merged is not None
    return merged.text


SETUP = """from setuptools import setup

setup(
    name="demo",
    version="1.0",
    install_requires=[
        "click>=7",
        "requests",
    ],
    extras_require={
        "tests": ["pytest"],
    },
    classifiers=[
        "Programming Language :: Python :: 2.7",
        "Programming Language :: Python :: 3.6",
        "Programming Language :: Python :: 3.7",
    ],
)
"""


def test_setup_keywords_merge_keyword_by_keyword_and_lists_inside_element_by_element() -> None:
    ours = SETUP.replace('        "requests",\n', '        "requests",\n        "rich",\n').replace(
        '"tests": ["pytest"],', '"tests": ["pytest", "pytest-cov"],'
    )
    theirs = SETUP.replace('        "Programming Language :: Python :: 2.7",\n', "").replace(
        '"tests": ["pytest"],\n', '"tests": ["pytest"],\n        "docs": ["sphinx"],\n'
    )

    merged = _text(SETUP, ours, theirs)

    assert merged == ours.replace('        "Programming Language :: Python :: 2.7",\n', "").replace(
        '"tests": ["pytest", "pytest-cov"],\n', '"tests": ["pytest", "pytest-cov"],\n        "docs": ["sphinx"],\n'
    )


def test_one_pin_changed_differently_or_one_keyword_set_twice_is_left_alone() -> None:
    ours = SETUP.replace('"click>=7"', '"click>=8"')
    theirs = SETUP.replace('"click>=7"', '"click>=7.1"')
    assert _merge(SETUP, ours, theirs) is None
    ours = SETUP.replace('    version="1.0",\n', '    version="1.0",\n    license="MIT",\n')
    theirs = SETUP.replace('    version="1.0",\n', '    version="1.0",\n    license="BSD",\n')
    assert _merge(SETUP, ours, theirs) is None


def test_a_version_both_sides_set_differently_takes_the_newer_only_as_a_module_s_own_assignment() -> None:
    base = '__version__ = "2.3.2"\n\n\ndef old():\n    pass\n'
    ours = base.replace("2.3.2", "3.0.0.dev") + "\n\ndef new():\n    pass\n"
    theirs = base.replace("2.3.2", "2.3.3")
    merged = _merge(base, ours, theirs)
    assert merged is not None and merged.text == ours and merged.low_confidence  # the newer, a rule's choice
    # inside a call (setup(version=...)) a version both sides set is still left alone
    assert _merge(SETUP, SETUP.replace('"1.0"', '"1.1"'), SETUP.replace('"1.0"', '"2.0"')) is None


def test_all_both_sides_extended_stays_sorted_and_a_removal_is_kept() -> None:
    base = '__all__ = ["alpha", "delta", "gamma"]\n\n\ndef f():\n    pass\n'
    ours = base.replace('"alpha", "delta"', '"alpha", "beta", "delta"')
    theirs = base.replace('"delta", "gamma"', '"delta", "epsilon"')

    merged = _merge(base, ours, theirs)

    assert merged is not None and not merged.low_confidence
    assert merged.text.startswith('__all__ = ["alpha", "beta", "delta", "epsilon"]\n')


def test_an_unsorted_list_both_extended_keeps_ours_first_and_says_it_chose() -> None:
    base = 'extensions = [\n    "sphinx.ext.viewcode",\n    "sphinx.ext.autodoc",\n]\nproject = "demo"\n'
    ours = base.replace('"sphinx.ext.autodoc",\n', '"sphinx.ext.autodoc",\n    "sphinx_issues",\n')
    theirs = base.replace('"sphinx.ext.autodoc",\n', '"sphinx.ext.autodoc",\n    "alabaster",\n')
    theirs = theirs.replace('"demo"', '"Demo"')

    merged = _merge(base, ours, theirs)

    assert merged is not None and merged.low_confidence
    assert merged.text == ours.replace('"sphinx_issues",\n', '"sphinx_issues",\n    "alabaster",\n').replace(
        '"demo"', '"Demo"'
    )
    assert any("ours first" in note for note in merged.notes)


def test_an_import_one_side_rewrapped_and_both_extended_unites_its_names() -> None:
    base = "from .core import (Argument,\n                   Command)\n\nx = 1\n"
    ours = "from .core import Argument, Command, Context\n\nx = 1\n"
    theirs = base.replace("Command)", "Command, Option)").replace("x = 1", "x = 2")

    assert _text(base, ours, theirs) == "from .core import Argument, Command, Context, Option\n\nx = 2\n"


def test_positional_arguments_both_sides_added_are_never_ordered_by_guess() -> None:
    base = "register(app)\nx = 1\n"
    assert _merge(base, "register(app, cache)\nx = 1\n", "register(app, db)\nx = 2\n") is None


IMPORTS = """from collections import Mapping, OrderedDict
from .compat import text_type


def f(x):
    return isinstance(x, Mapping)


def g():
    return OrderedDict(), text_type
"""


def test_an_import_one_side_moved_for_code_the_other_side_removed_is_left_alone() -> None:
    ours = IMPORTS.replace("import Mapping, OrderedDict", "import OrderedDict")
    ours = ours.replace("import text_type", "import iteritems, text_type").replace(
        "(), text_type\n", "(), text_type, iteritems\n"
    )
    theirs = IMPORTS.replace("import Mapping, OrderedDict", "import OrderedDict")
    theirs = theirs.replace("import text_type", "import Mapping, text_type")

    assert _merge(IMPORTS, ours.replace("isinstance(x, Mapping)", 'hasattr(x, "keys")'), theirs) is None
    merged = _merge(IMPORTS, ours, theirs)
    assert merged is not None and "from .compat import Mapping, iteritems, text_type\n" in merged.text


BODY = '''def load(path, strict=False):
    """Read a file."""
    with open(path) as handle:
        text = handle.read()
    lines = text.splitlines()
    if strict:
        check(lines)
    return lines
'''


def test_a_function_both_sides_edited_in_different_statements_merges_statement_by_statement() -> None:
    ours = BODY.replace('"""Read a file."""', '"""Read a file into lines."""')
    theirs = BODY.replace("    return lines\n", "    return [line for line in lines if line]\n")

    merged = _merge(BODY, ours, theirs)

    assert merged is not None
    assert merged.text == ours.replace("    return lines\n", "    return [line for line in lines if line]\n")
    assert any("load" in note for note in merged.notes)


def test_statements_inside_one_block_both_sides_edited_merge_recursively() -> None:
    ours = BODY.replace("        text = handle.read()\n", "        handle.seek(0)\n        text = handle.read()\n")
    theirs = BODY.replace("    with open(path) as handle:\n", "    with open(path, encoding='utf-8') as handle:\n")
    assert _text(BODY, ours, theirs) == theirs.replace(
        "        text = handle.read()\n", "        handle.seek(0)\n        text = handle.read()\n"
    )
    method = "class Loader:\n" + "".join("    " + line for line in BODY.splitlines(True))
    inner_ours = method.replace("            text = handle.read()\n", "            text = handle.read(100)\n")
    inner_theirs = method.replace(
        "            text = handle.read()\n", "            text = handle.read()\n            handle.close()\n"
    )
    assert _merge(method, inner_ours, inner_theirs) is None  # next to each other: a clash
    far_theirs = method.replace("    lines = text.splitlines()\n", "    lines = text.split('\\n')\n")
    assert _text(method, inner_ours, far_theirs) == inner_ours.replace("text.splitlines()", "text.split('\\n')")


def test_edits_that_touch_the_same_or_neighbouring_statements_are_left_alone() -> None:
    ours = BODY.replace("    lines = text.splitlines()\n", "    lines = text.split()\n")
    theirs = BODY.replace("    lines = text.splitlines()\n", "    lines = text.splitlines(True)\n")
    assert _merge(BODY, ours, theirs) is None
    theirs = BODY.replace("    lines = text.splitlines()\n", "    lines = text.splitlines()\n    lines.sort()\n")
    assert _merge(BODY, ours, theirs) is None


def test_a_function_both_sides_added_is_kept_once_when_identical_and_left_alone_otherwise() -> None:
    base = "import os\n"
    added = base + "\n\ndef helper():\n    return os.sep\n"
    assert _text(base, added, added + "\n\nX = 1\n") == added + "\n\nX = 1\n"
    assert _merge(base, added, added.replace("return os.sep", "return os.sep  # separator")) is None


@pytest.fixture
def box(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Sandbox:
    return sandbox(tmp_path, monkeypatch)


def test_a_setup_call_both_branches_changed_is_merged_through_the_ladder(box: Sandbox) -> None:
    base = box.start({"setup.py": SETUP})
    ours_text = SETUP.replace('        "requests",\n', '        "requests",\n        "rich",\n')
    theirs_text = SETUP.replace('        "requests",\n', '        "requests>=2",\n')
    theirs_text = theirs_text.replace('        "Programming Language :: Python :: 2.7",\n', "")
    ours = box.branch("ours", {"setup.py": ours_text}, parent=base)
    theirs = box.branch("theirs", {"setup.py": theirs_text}, parent=base)
    assert box.repo is not None

    outcome = merge_commits_sync(box.repo, ours, theirs)

    assert outcome.commit and outcome.unresolved == []
    (resolution,) = outcome.resolutions
    assert resolution.rung == "structured" and resolution.confidence == "high"
    expected = theirs_text.replace('        "requests>=2",\n', '        "requests>=2",\n        "rich",\n')
    assert box.show(outcome.commit, "setup.py") + "\n" == expected


def test_a_key_or_item_both_sides_added_at_different_places_is_not_held_twice() -> None:
    base = 'OPTIONS = {"a": 1, "b": 2}\nITEMS = ["a", "b"]\n'
    ours = base.replace('"b": 2}', '"b": 2, "c": 3}')
    theirs = base.replace('{"a": 1', '{"c": 4, "a": 1')
    assert _merge(base, ours, theirs) is None
    ours = base.replace('"b"]', '"b", "c"]')
    theirs = base.replace('["a"', '["c", "a"')
    assert _merge(base, ours, theirs) is None


def test_new_statements_calling_what_the_other_side_renamed_in_the_function_are_left_alone() -> None:
    base = "def test_parse():\n    result = parse('1')\n    assert result == 1\n\n    value = 2\n    assert value\n"
    ours = base.replace("parse('1')", "parse_int('1')")
    theirs = base.replace("    assert value\n", "    assert value\n    result = parse('2')\n    assert result == 2\n")
    assert _merge(base, ours, theirs) is None
    theirs = base.replace("    assert value\n", "    assert value\n    assert value * 2\n")
    assert _text(base, ours, theirs) == ours.replace("    assert value\n", "    assert value\n    assert value * 2\n")


def test_a_statement_deleted_next_to_one_the_other_side_changed_is_left_alone() -> None:
    base = "def f():\n    import os\n    import sys\n    return sys.path\n"
    ours = base.replace("    import os\n", "")
    theirs = base.replace("    import sys\n", "    import sys as system\n").replace("sys.path", "system.path")
    assert _merge(base, ours, theirs) is None


def test_items_one_side_deleted_and_the_other_replaced_take_the_replacement() -> None:
    base = 'CLASSIFIERS = [\n    "Python :: 3.6",\n    "Implementation :: CPython",\n    "Implementation :: PyPy",\n]\n'
    ours = base.replace('    "Implementation :: CPython",\n    "Implementation :: PyPy",\n', '    "Python :: 3.7",\n')
    theirs = base.replace('    "Implementation :: CPython",\n    "Implementation :: PyPy",\n', "")
    assert _text(base, ours, theirs) == ours
    assert _text(base, theirs, ours) == ours
    kept_one = base.replace('    "Implementation :: CPython",\n', '    "Python :: 3.7",\n')
    assert _merge(base, theirs, kept_one) is None  # theirs kept an item ours deleted


def test_elements_are_found_by_newlines_alone_as_python_counts_lines() -> None:
    base = "NAMES = ['a\u2028b', 'c']\n"
    ours = "NAMES = ['a\u2028b', 'c', 'd']\n"
    theirs = "NAMES = ['z', 'a\u2028b', 'c']\n"
    assert _text(base, ours, theirs) == "NAMES = ['z', 'a\u2028b', 'c', 'd']\n"


def test_elements_the_sides_put_in_opposite_orders_are_left_alone() -> None:
    base = "ORDER = [a, b, c, d, e]\n"
    assert _merge(base, "ORDER = [A, b, c, e, d]\n", "ORDER = [d, a, b, c, e]\n") is None


def test_an_insertion_the_other_side_made_in_full_is_taken_without_a_note() -> None:
    base = 'NAMES = ["a", "c"]\nX = 1\n'
    ours = base.replace('"c"]', '"c", "d", "e"]')
    theirs = base.replace('"c"]', '"c", "d"]').replace("X = 1", "X = 2")
    merged = _merge(base, ours, theirs)
    assert merged is not None and merged.text == ours.replace("X = 1", "X = 2") and merged.notes == ()
