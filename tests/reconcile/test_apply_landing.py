"""`apply_commit` lands a result as the user: the merge commit and the squash commit are theirs, a dry run
changes nothing, and plait's internal commits are found in what would land."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from gitrepo import Sandbox, git, sandbox

from plait.reconcile.apply import apply_commit, internal_commits, user_identity
from plait.workspace import PLAIT_IDENTITY

USER = "Ada Lovelace <ada@example.invalid>"


@pytest.fixture
def box(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Sandbox:
    """A repository whose user git knows from its own configuration, the environment naming no one."""
    made = sandbox(tmp_path, monkeypatch)
    made.start({"a.txt": "a\n", "b.txt": "b\n"})
    made.git("config", "user.name", "Ada Lovelace")
    made.git("config", "user.email", "ada@example.invalid")
    for key in PLAIT_IDENTITY:
        monkeypatch.delenv(key)
    return made


def _result(box: Sandbox) -> str:
    """A run's result: an agent's commit, made as plait, on a branch of its own."""
    base = box.git("rev-parse", "HEAD")
    tree = box.git("rev-parse", box.commit({"a.txt": "A\n"}, parent=base) + "^{tree}")
    work = git(box.root, "commit-tree", tree, "-p", base, "-m", "agent work", env=dict(PLAIT_IDENTITY))
    box.git("update-ref", "refs/heads/result", work)
    return work


def _who(box: Sandbox, ref: str) -> tuple[str, str]:
    out = box.git("log", "-1", "--format=%an <%ae>%n%cn <%ce>", ref).splitlines()
    return out[0], out[1]


def test_the_merge_commit_of_an_apply_is_the_users(box: Sandbox) -> None:
    work = _result(box)
    box.git("commit", "-qm", "meanwhile", "--allow-empty")
    (box.root / "b.txt").write_text("B\n")
    box.git("commit", "-qam", "the user moved on")
    assert box.repo is not None
    applied = asyncio.run(apply_commit(box.repo, work, what="plait run r"))
    assert applied.mode == "merge" and applied.author == USER
    assert _who(box, "HEAD") == (USER, USER)
    assert _who(box, work)[0] == "plait <plait@localhost>"  # the agent's own commit keeps plait's name
    assert len(box.git("rev-list", "--parents", "-n", "1", "HEAD").split()) == 3


def test_squash_lands_one_commit_by_the_user(box: Sandbox) -> None:
    head = box.git("rev-parse", "HEAD")
    work = _result(box)
    assert box.repo is not None
    applied = asyncio.run(apply_commit(box.repo, work, what="plait run r", squash="Do the thing\n\n- a: A\n"))
    assert applied.mode == "squash" and applied.files == ("a.txt",)
    assert box.git("rev-list", f"{head}..HEAD").splitlines() == [applied.commit]
    assert box.git("log", "-1", "--format=%B").strip() == "Do the thing\n\n- a: A"
    assert _who(box, "HEAD") == (USER, USER) and (box.root / "a.txt").read_text() == "A\n"


def test_a_dry_run_says_what_would_change_and_changes_nothing(box: Sandbox) -> None:
    work = _result(box)
    before = box.state()
    assert box.repo is not None
    applied = asyncio.run(apply_commit(box.repo, work, what="plait run r", dry_run=True))
    assert applied.mode == "fast-forward" and applied.files == ("a.txt",)
    assert [c.split(" ", 1)[1] for c in applied.commits] == ["agent work"]
    assert box.state() == before
    squashed = asyncio.run(apply_commit(box.repo, work, what="plait run r", squash="One\n", dry_run=True))
    assert squashed.mode == "squash" and squashed.commits == ("(new) One",) and box.state() == before


def test_internal_commits_are_found_and_the_user_is_gits_own(box: Sandbox) -> None:
    head = box.git("rev-parse", "HEAD")
    checkpoint = box.commit({"a.txt": "x\n"}, "plait checkpoint", parent=head)
    done = box.commit({"a.txt": "y\n"}, "the task", parent=checkpoint)
    assert box.repo is not None
    assert [c.split(" ", 1)[1] for c in internal_commits(box.repo, head, done)] == ["plait checkpoint"]
    assert user_identity(box.repo) == ({}, USER)
