"""The Python merger on functions one side moved and the other side edited where they were."""

from __future__ import annotations

from plait.reconcile.structured import EntityMerge, PythonMerger

BASE = """import os


def first():
    return 1


def second():
    return 2


class Tool:
    def run(self):
        return os.sep
"""


def _merge(base: str, ours: str, theirs: str) -> EntityMerge | None:
    return PythonMerger().merge(base, ours, theirs)


def _swap(text: str) -> str:
    return text.replace(
        "def first():\n    return 1\n\n\ndef second():\n    return 2\n",
        "def second():\n    return 2\n\n\ndef first():\n    return 1\n",
    )


def test_a_function_moved_on_one_side_keeps_its_new_place_and_the_other_side_s_edit() -> None:
    theirs = _swap(BASE)
    ours = BASE.replace("return 2", "return 22")

    merged = _merge(BASE, ours, theirs)

    assert merged is not None and merged.text == _swap(BASE).replace("return 2", "return 22")
    assert _merge(BASE, theirs, ours) == EntityMerge(merged.text, merged.theirs_changed, merged.ours_changed)


def _functions(names: str) -> str:
    return "\n\n".join(f"def {name}():\n    return {name!r}\n" for name in names)


def test_one_function_both_sides_moved_to_different_places_is_left_alone() -> None:
    assert _merge(_functions("abcde"), _functions("bcade"), _functions("bcdae")) is None
    merged = _merge(_functions("abcde"), _functions("bcade"), _functions("abcdf"))
    assert merged is not None and merged.text == _functions("bcadf")


def test_a_function_moved_into_a_class_takes_the_other_side_s_edit_there() -> None:
    theirs = BASE.replace("def second():\n    return 2\n\n\n", "") + "\n    def second(self):\n        return 2\n"
    theirs = theirs.replace("def second(self)", "def second()")
    ours = BASE.replace("return 2", "return os.getpid()")

    merged = _merge(BASE, ours, theirs)

    assert merged is not None and merged.low_confidence is False
    assert merged.text == theirs.replace("        return 2\n", "        return os.getpid()\n")
    assert merged.notes == ("second: ours' edit applied where theirs moved it",)


def test_a_function_moved_out_of_a_class_takes_the_other_side_s_edit_there() -> None:
    ours = (
        BASE.replace("\n    def run(self):\n        return os.sep\n", "\n    pass\n")
        + "\n\ndef run(self):\n    return os.sep\n"
    )
    theirs = BASE.replace("return os.sep", "return os.sep * 2")

    merged = _merge(BASE, ours, theirs)

    assert merged is not None and merged.text == ours.replace("return os.sep", "return os.sep * 2")


def test_a_function_moved_and_changed_while_the_other_side_edited_it_is_left_alone() -> None:
    theirs = BASE.replace("def second():\n    return 2\n\n\n", "") + "\n    def second():\n        return 3\n"
    ours = BASE.replace("return 2", "return 4")
    assert _merge(BASE, ours, theirs) is None


def test_two_functions_the_sides_put_in_opposite_orders_are_left_alone() -> None:
    ours = _functions("abced").replace("return 'a'", "return 'A'")
    theirs = _functions("dabce")
    assert _merge(_functions("abcde"), ours, theirs) is None
