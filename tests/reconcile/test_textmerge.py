"""git's merge without a work tree: merge-tree results, conflict stages, attributes, trees and commits."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from gitrepo import Sandbox, git, sandbox

from plait.errors import EnvironmentProblem
from plait.reconcile.textmerge import (
    Hunk,
    Stable,
    commit_merge,
    diff3_regions,
    has_conflict_markers,
    load_conflicts,
    merge_attributes,
    merge_file,
    merge_tree,
    write_tree,
)
from plait.reconcile.types import Resolution
from plait.workspace import Repo

LINES = "".join(f"line {n}\n" for n in range(1, 21))


@pytest.fixture
def box(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Sandbox:
    return sandbox(tmp_path, monkeypatch)


def _repo(box: Sandbox) -> Repo:
    assert box.repo is not None
    return box.repo


def test_a_clean_merge_gives_the_merged_tree_and_no_conflicts(box: Sandbox) -> None:
    base = box.start({"a.txt": LINES})
    ours = box.branch("ours", {"a.txt": LINES.replace("line 2\n", "line two\n")}, parent=base)
    theirs = box.branch("theirs", {"a.txt": LINES.replace("line 19\n", "line nineteen\n")}, parent=base)

    merged = merge_tree(_repo(box), ours, theirs)

    assert merged.clean and merged.conflicts == ()
    text = git(box.root, "cat-file", "blob", f"{merged.tree}:a.txt")
    assert "line two" in text and "line nineteen" in text


def test_a_content_conflict_has_all_three_sides_and_a_diff3_attempt(box: Sandbox) -> None:
    base = box.start({"a.txt": LINES, "same.txt": "x\n"})
    ours = box.branch("ours", {"a.txt": LINES.replace("line 5\n", "ours 5\n")}, parent=base)
    theirs = box.branch("theirs", {"a.txt": LINES.replace("line 5\n", "theirs 5\n")}, parent=base)

    merged = merge_tree(_repo(box), ours, theirs)
    ((pc, conflict, binary),) = load_conflicts(_repo(box), merged)

    assert not merged.clean and pc.path == "a.txt" and pc.textual and not binary
    assert conflict.base == LINES and conflict.ours is not None and "ours 5" in conflict.ours
    assert conflict.theirs is not None and "theirs 5" in conflict.theirs
    assert (
        "<<<<<<< ours" in conflict.merged
        and "||||||| base" in conflict.merged
        and has_conflict_markers(conflict.merged)
    )


def test_modify_delete_and_add_add_leave_a_side_or_the_base_empty(box: Sandbox) -> None:
    base = box.start({"gone.txt": LINES})
    ours = box.branch("ours", {"gone.txt": LINES + "more\n", "new.txt": "ours\n"}, parent=base)
    theirs = box.branch("theirs", {"gone.txt": None, "new.txt": "theirs\n"}, parent=base)

    loaded = {pc.path: (pc, fc) for pc, fc, _ in load_conflicts(_repo(box), merge_tree(_repo(box), ours, theirs))}

    gone_pc, gone = loaded["gone.txt"]
    assert gone.theirs is None and gone.ours == LINES + "more\n" and "CONFLICT (modify/delete)" in gone_pc.kinds
    assert gone_pc.textual
    _, new = loaded["new.txt"]
    assert new.base is None and new.ours == "ours\n" and new.theirs == "theirs\n"


def test_a_rename_on_one_side_is_followed_to_the_new_path(box: Sandbox) -> None:
    base = box.start({"old.txt": LINES})
    ours = box.branch("ours", {"old.txt": None, "moved.txt": LINES.replace("line 3\n", "ours 3\n")}, parent=base)
    theirs = box.branch("theirs", {"old.txt": LINES.replace("line 3\n", "theirs 3\n")}, parent=base)

    ((pc, conflict, _),) = load_conflicts(_repo(box), merge_tree(_repo(box), ours, theirs))

    assert pc.path == "moved.txt" and conflict.base == LINES
    assert conflict.theirs is not None and "theirs 3" in conflict.theirs


def test_merge_tree_ignores_the_checkout_and_attributes_come_from_the_ours_commit(box: Sandbox) -> None:
    """The user's checked-out .gitattributes must not change a merge; the commit's own attributes are read instead."""
    base = box.start({".gitattributes": "notes.txt merge=union\nlock.txt -merge\n", "notes.txt": "a\n"})
    ours = box.branch("ours", {"notes.txt": "a\nours\n"}, parent=base)
    theirs = box.branch("theirs", {"notes.txt": "a\ntheirs\n"}, parent=base)

    merged = merge_tree(_repo(box), ours, theirs)

    assert [pc.path for pc in merged.conflicts] == ["notes.txt"]
    attrs = merge_attributes(_repo(box), ours, ["notes.txt", "lock.txt", "other.txt"])
    assert attrs == {"notes.txt": "union", "lock.txt": "unset", "other.txt": "unspecified"}


def test_a_tree_with_resolutions_and_a_merge_commit_touch_no_ref_index_or_file(box: Sandbox) -> None:
    base = box.start({"a.txt": LINES, "b.txt": "b\n"})
    ours = box.branch("ours", {"a.txt": LINES.replace("line 5\n", "ours 5\n")}, parent=base)
    theirs = box.branch("theirs", {"a.txt": LINES.replace("line 5\n", "theirs 5\n")}, parent=base)
    (box.root / "b.txt").write_text("uncommitted\n")
    before = (box.state(), git(box.root, "for-each-ref"), (box.root / ".git" / "index").read_bytes())

    merged = merge_tree(_repo(box), ours, theirs)
    resolved = [Resolution("a.txt", "resolved\n", "deterministic", "test"), Resolution("b.txt", None, "llm", "test")]
    tree = write_tree(_repo(box), merged.tree, resolved, {"a.txt": "100644"})
    commit = commit_merge(_repo(box), tree, ours, theirs, "merge\n")

    assert git(box.root, "rev-parse", f"{commit}^1", f"{commit}^2").split() == [ours, theirs]
    assert git(box.root, "ls-tree", "--name-only", commit) == "a.txt"
    assert box.show(commit, "a.txt") == "resolved"
    assert git(box.root, "log", "-1", "--format=%an", commit) == "plait"
    assert (box.state(), git(box.root, "for-each-ref"), (box.root / ".git" / "index").read_bytes()) == before


def test_diff3_regions_are_not_fooled_by_marker_like_lines() -> None:
    base = "Title\n=======\n\nold\n"
    ours = "Title\n=======\n\nours\n"
    theirs = "Title\n=======\n\ntheirs\n"

    regions = diff3_regions(base, ours, theirs)

    assert regions == [Stable(("Title\n", "=======\n", "\n")), Hunk(("ours\n",), ("old\n",), ("theirs\n",))]


def test_merge_file_styles() -> None:
    assert merge_file("a\n", "a\nb\n", "a\n") == ("a\nb\n", True)
    text, clean = merge_file("x\n", "o\n", "t\n", style="union")
    assert (text, clean) == ("o\nt\n", True)
    assert merge_file("x\n", "o\n", "t\n", style="theirs") == ("t\n", True)
    assert not merge_file("x\n", "o\n", "t\n")[1]


def test_an_old_git_is_named_in_one_line(box: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base = box.start({"a.txt": LINES})
    real = git(box.root, "--exec-path")
    shim = tmp_path / "bin" / "git"
    shim.parent.mkdir()
    shim.write_text(
        "#!/bin/sh\n"
        'for a in "$@"; do case "$a" in merge-tree) echo "unknown option" >&2; exit 129;; '
        'version) echo "git version 2.34.1"; exit 0;; esac; done\n'
        f'exec {real}/git "$@"\n'
    )
    shim.chmod(shim.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{shim.parent}{os.pathsep}{os.environ['PATH']}")

    with pytest.raises(EnvironmentProblem, match=r"git 2\.34 is too old .* 2\.38 or newer"):
        merge_tree(_repo(box), base, base)
