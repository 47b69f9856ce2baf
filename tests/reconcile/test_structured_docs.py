"""reStructuredText and Markdown documents merged section by section and block by block by the structured rung."""

from __future__ import annotations

from pathlib import Path

import pytest
from gitrepo import Sandbox, sandbox

from plait.reconcile.ladder import merge_commits_sync
from plait.reconcile.structured import DocsMerger, StructuredResolver
from plait.reconcile.structured.base import EntityMerge

INDEX = """Guide
=====

Welcome to the guide.

.. toctree::
   :maxdepth: 2

   install
   quickstart
   usage

Install
-------

Run the installer.

Usage
-----

Call the tool::

    tool --run

Then read the output.

-   ``--run`` runs it.
-   ``--dry`` shows what would run.
"""

README = """# Tool

A tool.

## Install

```sh
pip install tool
```

## Usage

| flag | meaning |
|------|---------|
| -v   | verbose |
"""


def _merge(base: str, ours: str, theirs: str) -> EntityMerge | None:
    return DocsMerger().merge(base, ours, theirs)


def test_edits_in_different_sections_and_blocks_combine() -> None:
    ours = INDEX.replace("Run the installer.", "Run the installer twice.")
    theirs = INDEX.replace("Then read the output.", "Then read the output.\n\nOr pipe it.")

    merged = _merge(INDEX, ours, theirs)

    assert merged is not None and not merged.low_confidence
    assert merged.text == ours.replace("Then read the output.", "Then read the output.\n\nOr pipe it.")


def test_a_renamed_heading_keeps_the_other_sides_edit_beneath_it() -> None:
    ours = INDEX.replace("Install\n-------", "Installation\n------------")
    theirs = INDEX.replace("Run the installer.", "Run the installer as root.")

    merged = _merge(INDEX, ours, theirs)

    assert merged is not None and merged.text == theirs.replace("Install\n-------", "Installation\n------------")


def test_toctree_entries_both_sides_added_are_merged_as_a_list() -> None:
    ours = INDEX.replace("   quickstart\n", "   quickstart\n   tutorial\n")
    theirs = INDEX.replace("   usage\n", "   usage\n   faq\n")

    merged = _merge(INDEX, ours, theirs)

    assert merged is not None and "   quickstart\n   tutorial\n   usage\n   faq\n" in merged.text


def test_toctree_entries_added_at_one_place_are_ours_first_with_low_confidence() -> None:
    ours = INDEX.replace("   usage\n", "   usage\n   faq\n")
    theirs = INDEX.replace("   usage\n", "   usage\n   api\n")

    merged = _merge(INDEX, ours, theirs)

    assert merged is not None and merged.low_confidence
    assert "   usage\n   faq\n   api\n" in merged.text


@pytest.mark.parametrize(
    ("base", "ours", "theirs"),
    [
        (INDEX, INDEX.replace("tool --run", "tool --run --fast"), INDEX.replace("tool --run", "tool --run -q")),
        (README, README.replace("pip install tool", "pipx install tool"), README.replace("```sh", "```bash")),
        (README, README.replace("| verbose |", "| loud    |"), README.replace("| -v   |", "| -V   |")),
        (INDEX, INDEX.replace("Welcome to the guide.", "Hello."), INDEX.replace("Welcome to the guide.", "Hi.")),
    ],
    ids=["literal-block", "fenced-code", "table", "paragraph"],
)
def test_an_atom_both_sides_edited_is_left_to_the_next_rung(base: str, ours: str, theirs: str) -> None:
    assert _merge(base, ours, theirs) is None


def test_blocks_the_other_side_reordered_are_refused_rather_than_put_back() -> None:
    run, dry = "-   ``--run`` runs it.\n", "-   ``--dry`` shows what would run.\n"
    ours = INDEX.replace("Welcome to the guide.", "Welcome.")
    theirs = INDEX.replace(run + dry, dry + run)

    assert _merge(INDEX, ours, theirs) is None


def test_a_new_copy_of_a_block_the_other_side_edited_is_refused() -> None:
    base = "Authors\n=======\n\n- Ann\n- Bob <bob@example>\n- Cy\n"
    ours = base + "- Bob <bob@example>\n"
    theirs = base.replace("- Bob <bob@example>", "- Bob <bob@example.org>")

    assert _merge(base, ours, theirs) is None


def test_a_block_one_side_only_stripped_of_trailing_spaces_takes_the_other_sides_rewrite() -> None:
    base = INDEX.replace("Welcome to the guide.", "Welcome to the guide. \nRead on.")
    ours = INDEX.replace("Welcome to the guide.", "Welcome to the guide.\nRead on.")
    theirs = INDEX.replace("Welcome to the guide.", "**Welcome** to the guide.\nRead on.")
    spaced = INDEX.replace("Welcome to the guide.", "**Welcome** to the guide. \nRead on.")

    merged = _merge(base, ours, theirs)

    assert merged is not None and merged.text == theirs and not merged.low_confidence
    assert merged.notes == ("ours only stripped trailing spaces from a block the other side rewrote",)
    assert _merge(base, ours, spaced) is None


def test_a_link_target_above_a_new_heading_stays_with_it_beside_the_other_sides_addition() -> None:
    new_section = ".. _configure:\n\nConfigure\n---------\n\nSet it up.\n\n"
    ours = INDEX.replace("Usage\n-----\n", new_section + "Usage\n-----\n")
    theirs = INDEX.replace("Run the installer.\n", "Run the installer.\n\nThen restart.\n")

    merged = _merge(INDEX, ours, theirs)

    assert merged is not None and not merged.low_confidence
    assert merged.text == theirs.replace("Usage\n-----\n", new_section + "Usage\n-----\n")


def test_two_versions_of_one_new_directive_at_one_place_are_refused() -> None:
    ours = INDEX.replace("Install\n-------\n\n", "Install\n-------\n\n.. note::\n   Use a venv.\n\n")
    theirs = INDEX.replace("Install\n-------\n\n", "Install\n-------\n\n.. note::\n   Use root.\n\n")

    assert _merge(INDEX, ours, theirs) is None


def test_blocks_ours_reordered_keep_ours_order_beside_theirs_edit_but_not_theirs_addition_next_to_them() -> None:
    run, dry = "-   ``--run`` runs it.\n", "-   ``--dry`` shows what would run.\n"
    ours = INDEX.replace(run + dry, dry + run)
    theirs = INDEX.replace("Welcome to the guide.", "Welcome.")
    beside = INDEX.replace(run, run + "-   ``--fast`` runs it fast.\n")

    merged = _merge(INDEX, ours, theirs)

    assert merged is not None and merged.text == ours.replace("Welcome to the guide.", "Welcome.")
    assert _merge(INDEX, ours, beside) is None


def test_one_side_unchanged_or_both_alike_gives_the_changed_text_whatever_it_did() -> None:
    run, dry = "-   ``--run`` runs it.\n", "-   ``--dry`` shows what would run.\n"
    swapped = INDEX.replace(run + dry, dry + run)

    for base, ours, theirs in ((INDEX, INDEX, swapped), (INDEX, swapped, INDEX), (INDEX, swapped, swapped)):
        merged = _merge(base, ours, theirs)
        assert merged is not None and merged.text == swapped and not merged.notes


def test_markdown_sections_under_hash_headings_merge_independently() -> None:
    ours = README.replace("A tool.", "A small tool.")
    theirs = README.replace("pip install tool", "pip install tool==2")

    merged = _merge(README, ours, theirs)

    assert merged is not None and merged.text == ours.replace("pip install tool", "pip install tool==2")


@pytest.mark.parametrize(
    ("path", "claimed"),
    [("docs/index.rst", True), ("README.md", True), ("docs/notes.txt", False), ("CHANGES.md", False)],
)
def test_the_docs_merger_claims_rst_and_md_files(path: str, claimed: bool) -> None:
    assert isinstance(StructuredResolver().merger_for(path), DocsMerger) is claimed


@pytest.fixture
def box(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Sandbox:
    return sandbox(tmp_path, monkeypatch)


def test_a_document_conflict_is_resolved_through_the_ladder(box: Sandbox) -> None:
    base = box.start({"docs/index.rst": INDEX})
    ours_text = INDEX.replace("Usage\n-----", "Use\n---").replace("runs it.", "runs it now.")
    theirs_text = INDEX.replace("shows what would run.", "shows what would run, and stops.")
    ours = box.branch("ours", {"docs/index.rst": ours_text}, parent=base)
    theirs = box.branch("theirs", {"docs/index.rst": theirs_text}, parent=base)
    assert box.repo is not None

    outcome = merge_commits_sync(box.repo, ours, theirs)

    assert outcome.commit is not None and outcome.unresolved == []
    assert [r.rung for r in outcome.resolutions] == ["structured"]
    expected = ours_text.replace("shows what would run.", "shows what would run, and stops.")
    assert box.show(outcome.commit, "docs/index.rst") + "\n" == expected
