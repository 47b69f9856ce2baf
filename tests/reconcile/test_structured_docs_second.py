"""Changelog and document merges found on real history."""

from __future__ import annotations

from plait.reconcile.structured import ChangelogMerger, DocsMerger
from plait.reconcile.structured._sections import sections

HEAD = ".. currentmodule:: app\n\n"
V11 = "Version 1.1\n-----------\n\nUnreleased\n\n-   Fix the parser. :issue:`1`\n-   Speed up reads. :issue:`2`\n\n\n"
V10 = "Version 1.0\n-----------\n\nReleased 2024-01-01\n\n-   First release.\n"
BASE = HEAD + V11 + V10


def test_an_entry_added_after_entries_the_other_side_moved_away_keeps_the_blank_line_above_the_list() -> None:
    ours = BASE.replace(":issue:`2`\n", ":issue:`2`\n-   Keep pager arguments. :issue:`3`\n")
    moved = "Version 1.1.0\n-------------\n\nReleased 2024-02-01\n\n-   Fix the parser. :issue:`1`\n"
    moved += "-   Speed up reads. :issue:`2`\n\n\n"
    theirs = HEAD + "Version 1.1\n-----------\n\nUnreleased\n\n\n\n" + moved + V10

    merged = ChangelogMerger().merge(BASE, ours, theirs)

    assert merged is not None
    entry = "Unreleased\n\n-   Keep pager arguments. :issue:`3`\n\n\n\n"
    assert merged.text == theirs.replace("Unreleased\n\n\n\n", entry, 1)
    release = sections(merged.text)[1]
    assert [block.body for block in release.children][-1] == "-   Keep pager arguments. :issue:`3`\n"
    assert release.children[-1].lead == "\n"


GUIDE = """Validation
----------

Errors are raised.

Strict Mode
+++++++++++

    Set ``strict=True`` to raise.

.. seealso::

    See the :ref:`Extending <extending>` page.

Required Fields
+++++++++++++++

Mark a field required.
"""


def test_a_section_one_side_moved_away_with_the_other_sides_edit_already_in_it_is_deleted() -> None:
    edited = ".. seealso::\n\n    See the :doc:`Extending <extending>` page.\n\n"
    strict = GUIDE[GUIDE.index("Strict Mode") : GUIDE.index("Required Fields")]
    ours = GUIDE.replace(strict, "").replace("Errors are raised.\n\n", "Errors are raised.\n\n" + edited)
    theirs = GUIDE.replace(":ref:`Extending", ":doc:`Extending")

    merged = DocsMerger().merge(GUIDE, ours, theirs)

    assert merged is not None and merged.text == ours and merged.low_confidence


def test_a_section_one_side_deleted_and_the_other_edited_otherwise_stays_a_conflict() -> None:
    strict = GUIDE[GUIDE.index("Strict Mode") : GUIDE.index("Required Fields")]
    theirs = GUIDE.replace(":ref:`Extending", ":doc:`Extending")

    assert DocsMerger().merge(GUIDE, GUIDE.replace(strict, ""), theirs) is None
