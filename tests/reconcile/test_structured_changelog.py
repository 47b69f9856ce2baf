"""Changelogs merged release by release and entry by entry by the structured rung."""

from __future__ import annotations

from pathlib import Path

import pytest
from gitrepo import Sandbox, sandbox

from plait.reconcile.ladder import merge_commits_sync
from plait.reconcile.structured import ChangelogMerger, StructuredResolver
from plait.reconcile.structured._sections import sections
from plait.reconcile.structured.base import EntityMerge

HEAD = ".. currentmodule:: app\n\n"
V11 = "Version 1.1\n-----------\n\nUnreleased\n\n-   Fix the parser. :issue:`1`\n-   Speed up reads. :issue:`2`\n\n\n"
V10 = "Version 1.0\n-----------\n\nReleased 2024-01-01\n\n-   First release.\n"
BASE = HEAD + V11 + V10
V12 = "Version 1.2\n-----------\n\nUnreleased\n\n-   Add a flag. :issue:`9`\n\n\n"


def _merge(base: str, ours: str, theirs: str) -> EntityMerge | None:
    return ChangelogMerger().merge(base, ours, theirs)


def test_sections_rebuild_the_file_byte_for_byte() -> None:
    text = "# Changes\n\n## 1.1\n\n- a\n  more of a\n- b\n\n  still b\n\n```\n# not a heading\n```\n\n## 1.0\n\nx\n"

    found = sections(text)

    assert "".join(node.text for node in found) == text
    assert [node.key for node in found] == [("section",), ("section", "Changes"), ("section", "Changes", "1.1"),
                                            ("section", "Changes", "1.0")]  # fmt: skip
    assert [child.body for child in found[2].children] == [
        "- a\n  more of a\n",
        "- b\n\n  still b\n",
        "```\n# not a heading\n```\n",
    ]


def test_a_release_added_above_a_header_the_other_side_renamed_keeps_both() -> None:
    ours = HEAD + V12 + V11 + V10
    theirs = BASE.replace(
        "Version 1.1\n-----------\n\nUnreleased", "Version 1.1.0\n-------------\n\nReleased 2024-02-02"
    )

    merged = _merge(BASE, ours, theirs)

    assert merged is not None and not merged.low_confidence
    assert merged.text == HEAD + V12 + theirs[len(HEAD) :]


def test_a_renamed_header_takes_the_entries_the_other_side_added_under_it() -> None:
    ours = BASE.replace("Unreleased\n", "Released 2024-03-01\n", 1)
    theirs = BASE.replace(
        "-   Speed up reads. :issue:`2`\n", "-   Speed up reads. :issue:`2`\n-   Log less. :issue:`3`\n"
    )

    merged = _merge(BASE, ours, theirs)

    assert merged is not None
    assert merged.text == theirs.replace("Unreleased\n", "Released 2024-03-01\n", 1)


def test_entries_both_sides_added_under_one_section_are_kept_ours_first_with_low_confidence() -> None:
    ours = BASE.replace(":issue:`2`\n", ":issue:`2`\n-   Ours. :issue:`4`\n")
    theirs = BASE.replace(":issue:`2`\n", ":issue:`2`\n-   Theirs. :issue:`5`\n")

    merged = _merge(BASE, ours, theirs)

    assert merged is not None and merged.low_confidence
    assert merged.text == BASE.replace(":issue:`2`\n", ":issue:`2`\n-   Ours. :issue:`4`\n-   Theirs. :issue:`5`\n")
    assert merged.notes == ("both added at one place: ours' additions first",)


def test_a_sorted_section_stays_sorted_with_high_confidence() -> None:
    base = "Changes\n=======\n\n- alpha\n- delta\n- kilo\n"
    ours = base.replace("- delta\n", "- delta\n- golf\n")
    theirs = base.replace("- delta\n", "- delta\n- echo\n")

    merged = _merge(base, ours, theirs)

    assert merged is not None and not merged.low_confidence
    assert merged.text == "Changes\n=======\n\n- alpha\n- delta\n- echo\n- golf\n- kilo\n"


def test_the_same_release_added_on_both_sides_is_held_once_with_both_sides_entries() -> None:
    ours = HEAD + V12 + V11 + V10
    theirs = HEAD + V12.replace(":issue:`9`\n", ":issue:`9`\n-   Drop a flag. :issue:`8`\n") + V11 + V10

    merged = _merge(BASE, ours, theirs)

    assert merged is not None and merged.text == theirs and merged.text.count("Version 1.2") == 1


def test_two_new_releases_at_one_place_follow_the_version_order_with_low_confidence() -> None:
    ours = HEAD + V12 + V11 + V10
    theirs = HEAD + V12.replace("1.2", "1.1.1").replace("------------", "-------------") + V11 + V10

    merged = _merge(BASE, ours, theirs)

    assert merged is not None and merged.low_confidence
    assert merged.text.index("Version 1.2") < merged.text.index("Version 1.1.1") < merged.text.index("Version 1.1\n")


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [
        (BASE.replace("Fix the parser.", "Fix the lexer."), BASE.replace("Fix the parser.", "Fix the reader.")),
        (BASE.replace(V11, ""), BASE.replace("Speed up reads.", "Speed up all reads.")),
        (BASE.replace("Version 1.1\n", "Version 1.2\n"), BASE.replace("Version 1.1\n", "Version 2.0\n")),
    ],
    ids=["one-entry-edited-twice", "edited-against-deleted", "header-renamed-twice"],
)
def test_changes_that_do_not_combine_are_left_to_the_next_rung(ours: str, theirs: str) -> None:
    assert _merge(BASE, ours, theirs) is None


def test_an_entry_both_sides_rewrote_among_new_entries_is_refused() -> None:
    ours = BASE.replace(
        "-   Fix the parser. :issue:`1`\n", "-   Add a flag. :issue:`6`\n-   Fix the parser's loop. :issue:`1`\n"
    )
    theirs = BASE.replace(
        "-   Fix the parser. :issue:`1`\n", "-   Fix the parser's state. :issue:`1`\n-   Log. :issue:`7`\n"
    )

    assert _merge(BASE, ours, theirs) is None


def test_a_title_both_renamed_alike_takes_the_underline_one_side_fixed_unless_it_is_left_short() -> None:
    ours = BASE.replace("Version 1.1\n-----------\n", "Version 1.1.0\n-----------\n")
    theirs = BASE.replace("Version 1.1\n-----------\n", "Version 1.1.0\n-------------\n")
    wide = BASE.replace("Version 1.1\n-----------\n", "Version 1.1\n--------------------\n")
    longer = wide.replace("Version 1.1\n", "Version 1.1 (beta)\n")
    trimmed = BASE

    merged = _merge(BASE, ours, theirs)

    assert merged is not None and merged.text == theirs
    assert _merge(wide, longer, trimmed) is None


def test_a_merge_that_would_hold_one_release_or_entry_twice_is_refused() -> None:
    ours = HEAD + V12 + V11 + V10
    theirs = BASE.replace("Version 1.1\n", "Version 1.2\n")
    entry_ours = BASE.replace(":issue:`2`\n", ":issue:`2`\n-   Log less.\n")
    entry_theirs = BASE.replace("-   Fix the parser. :issue:`1`\n", "-   Log less.\n")

    assert _merge(BASE, ours, theirs) is None
    assert _merge(BASE, entry_ours, entry_theirs) is None


def test_a_release_with_entries_deleted_by_one_side_is_refused() -> None:
    theirs = BASE.replace(V11, "")
    ours = HEAD + V12 + V11 + V10

    assert _merge(BASE, ours, theirs) is None


def test_markdown_changelogs_merge_by_hash_headings() -> None:
    base = "# Changelog\n\n## 1.1 (unreleased)\n\n- Fix a.\n\n## 1.0\n\n- First.\n"
    ours = base.replace("# Changelog\n\n", "# Changelog\n\n## 1.2 (unreleased)\n\n- New b.\n\n")
    theirs = base.replace("## 1.1 (unreleased)", "## 1.1 (2024-05-05)").replace("- Fix a.\n", "- Fix a.\n- Fix c.\n")

    merged = _merge(base, ours, theirs)

    assert merged is not None
    assert merged.text == ours.replace("## 1.1 (unreleased)", "## 1.1 (2024-05-05)").replace(
        "- Fix a.\n", "- Fix a.\n- Fix c.\n"
    )


@pytest.mark.parametrize(
    ("path", "claimed"),
    [("CHANGES.rst", True), ("CHANGELOG.md", True), ("HISTORY", True), ("docs/changes.rst", True),
     ("NEWS.md", True), ("src/changes.py", False), ("docs/changelog.txt", False)],
)  # fmt: skip
def test_the_changelog_merger_claims_changelogs_by_name(path: str, claimed: bool) -> None:
    merger = StructuredResolver().merger_for(path)

    assert isinstance(merger, ChangelogMerger) is claimed


@pytest.fixture
def box(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Sandbox:
    return sandbox(tmp_path, monkeypatch)


def test_a_changelog_conflict_is_resolved_through_the_ladder(box: Sandbox) -> None:
    base = box.start({"CHANGES.rst": BASE})
    ours_text = HEAD + V12 + V11 + V10
    theirs_text = BASE.replace(
        "Version 1.1\n-----------\n\nUnreleased", "Version 1.1.0\n-------------\n\nReleased 2024"
    )
    ours = box.branch("ours", {"CHANGES.rst": ours_text}, parent=base)
    theirs = box.branch("theirs", {"CHANGES.rst": theirs_text}, parent=base)
    assert box.repo is not None

    outcome = merge_commits_sync(box.repo, ours, theirs)

    assert outcome.commit is not None and outcome.unresolved == []
    assert [r.rung for r in outcome.resolutions] == ["structured"]
    assert box.show(outcome.commit, "CHANGES.rst") + "\n" == HEAD + V12 + theirs_text[len(HEAD) :]
