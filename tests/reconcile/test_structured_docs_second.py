"""Changelog and document merges found on real history."""

from __future__ import annotations

from plait.reconcile.structured import ChangelogMerger
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
