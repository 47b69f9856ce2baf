"""A worktree handed back to the pool records what its agent left, and is recycled from that record alone (no
walk of the whole tree), as fresh as a new worktree: against real git, with what agents leave in odd shapes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from plait.run._opening import make_worktree, pool_of
from plait.workspace import GitError, Repo, Worktree
from plait.workspace._pool import _LEFT, _read_left, give_back
from plait.workspace._worktrees import REFRESHED, SAVED_INDEX
from worktree_view import git

RUN = "r1"


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    root = tmp_path / "repo"
    (root / "src" / "pkg").mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    (root / ".gitignore").write_text("build/\n")
    (root / "src" / "app.py").write_text("print('hi')\n")
    (root / "src" / "pkg" / "mod.py").write_text("X = 1\n")
    (root / "src" / "pkg" / "util.py").write_text("Y = 1\n")
    (root / "tool.sh").write_text("echo\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "one")
    (root / "src" / "pkg" / "mod.py").write_text("X = 2\n")
    (root / "docs").mkdir()
    (root / "docs" / "guide.md").write_text("guide\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "two")
    return Repo.discover(root)


def _make(repo: Repo, name: str, base: str) -> Worktree:
    return make_worktree(repo, pool_of(repo, RUN) / name, f"plait/{RUN}/{name}", base, fresh=True, run_id=RUN)


def _files(path: Path) -> dict[str, object]:
    """Every file, link and directory an agent would see, and git's view of them."""
    seen: dict[str, object] = {}
    for root, dirs, names in os.walk(path):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in [*dirs, *names]:
            full = Path(root) / name
            rel = full.relative_to(path).as_posix()
            if full.is_symlink():
                seen[rel] = ("link", str(full.readlink()))
            elif full.is_dir():
                seen[rel] = "dir"
            elif name != ".git":
                seen[rel] = (full.read_bytes(), os.access(full, os.X_OK))
    seen["status"] = git(path, "status", "--porcelain", "--ignored", "--untracked-files=all")
    seen["index"] = git(path, "ls-files", "-s")
    return seen


def _odd_shapes(path: Path, outside: Path) -> None:
    """A directory made a file, a file made a directory, empty and ignored directories, links in and out."""
    (path / "src" / "pkg" / "util.py").write_text("changed, uncommitted\n")
    for name in ("mod.py", "util.py"):
        (path / "src" / "pkg" / name).unlink()
    (path / "src" / "pkg").rmdir()
    (path / "src" / "pkg").write_text("a file where a directory was\n")
    (path / "tool.sh").unlink()
    (path / "tool.sh").mkdir()
    (path / "tool.sh" / "deep" / "er").mkdir(parents=True)
    (path / "empty" / "nested").mkdir(parents=True)
    (path / "build" / "obj").mkdir(parents=True)
    (path / "build" / "obj" / "a.o").write_bytes(b"\0" * 64)
    (path / "out-link").symlink_to(outside)
    (path / "src" / "loop").symlink_to("..")
    (path / "src" / "app.py").chmod(0o755)


def test_a_handed_back_worktree_records_what_its_agent_left(repo: Repo, tmp_path: Path) -> None:
    tree = _make(repo, "t1", repo.head())
    admin = Path(repo.location(tree.path)["GIT_DIR"])
    (tree.path / "src" / "app.py").write_text("edited\n")
    (tree.path / "docs" / "guide.md").unlink()
    (tree.path / "new.txt").write_text("new\n")
    (tree.path / "build").mkdir()
    (tree.path / "build" / "x.o").write_text("o\n")
    (tree.path / "nothing-in-it").mkdir()
    assert give_back(tree, pool_of(repo, RUN))
    base, changed, untracked = _read_left(admin)  # type: ignore[misc]
    assert base == repo.head()
    assert changed == ["docs/guide.md", "src/app.py"]
    assert sorted(untracked) == ["build/", "new.txt", "nothing-in-it/"]


@pytest.mark.parametrize("to", ["HEAD", "HEAD~1"])
def test_a_worktree_recycled_from_its_record_is_a_fresh_one(repo: Repo, tmp_path: Path, to: str) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("not the worktree's\n")
    first = _make(repo, "t1", repo.head())
    _odd_shapes(first.path, outside)
    admin = Path(repo.location(first.path)["GIT_DIR"])
    assert give_back(first, pool_of(repo, RUN))
    assert (admin / _LEFT).is_file()
    target = repo.git("rev-parse", to).strip()
    reused = _make(repo, "t2", target)
    assert Path(repo.location(reused.path)["GIT_DIR"]) == admin
    fresh = repo.add_worktree(repo.plait_dir() / "fresh", f"plait/{RUN}/fresh", target)
    assert _files(reused.path) == _files(fresh.path)
    assert (outside / "keep.txt").read_text() == "not the worktree's\n"  # a link's target is not the worktree's


def test_a_worktree_without_a_record_is_recycled_the_long_way(repo: Repo) -> None:
    first = _make(repo, "t1", repo.head())
    admin = Path(repo.location(first.path)["GIT_DIR"])
    (first.path / "stray.txt").write_text("left\n")
    (first.path / "src" / "app.py").write_text("edited\n")
    assert give_back(first, pool_of(repo, RUN))
    (admin / _LEFT).unlink()
    reused = _make(repo, "t2", repo.head())
    fresh = repo.add_worktree(repo.plait_dir() / "fresh", f"plait/{RUN}/fresh", repo.head())
    assert _files(reused.path) == _files(fresh.path)


def test_a_base_that_is_no_commit_is_refused_and_leaves_nothing(repo: Repo) -> None:
    first = _make(repo, "t1", repo.head())
    assert give_back(first, pool_of(repo, RUN))
    tree = repo.git("rev-parse", "HEAD^{tree}").strip()
    with pytest.raises(GitError):
        _make(repo, "t2", tree)
    assert not (pool_of(repo, RUN) / "t2").exists()
    assert repo.worktrees() == [repo.root]
    assert not repo.branch_exists(f"plait/{RUN}/t2")


def test_an_edit_in_the_second_of_a_recycling_is_seen_by_the_next(repo: Repo) -> None:
    tree = _make(repo, "t1", repo.head())
    for n in range(2, 5):
        assert give_back(tree, pool_of(repo, RUN))
        tree = _make(repo, f"t{n}", repo.head())
        before = (tree.path / "src" / "app.py").stat()
        (tree.path / "src" / "app.py").write_text("print('ho')\n")  # as long as it was, in the same second
        os.utime(tree.path / "src" / "app.py", ns=(before.st_atime_ns, before.st_mtime_ns))
    assert give_back(tree, pool_of(repo, RUN))
    reused = _make(repo, "t9", repo.head())
    fresh = repo.add_worktree(repo.plait_dir() / "fresh", f"plait/{RUN}/fresh", repo.head())
    assert _files(reused.path) == _files(fresh.path)


def test_a_tree_from_the_saved_index_is_the_tree_from_scratch(repo: Repo) -> None:
    tree = _make(repo, "t1", repo.head())
    assert give_back(tree, pool_of(repo, RUN))
    tree = _make(repo, "t2", repo.head())  # recycled: its saved index was written a moment ago
    app = tree.path / "src" / "app.py"
    before = app.stat()
    app.write_text("print('ho')\n")  # as long as it was, its mtime put back
    os.utime(app, ns=(before.st_atime_ns, before.st_mtime_ns))
    (tree.path / "docs" / "guide.md").unlink()
    (tree.path / "tool.sh").chmod(0o755)
    (tree.path / "new.txt").write_text("new\n")
    admin = Path(repo.location(tree.path)["GIT_DIR"])
    assert (admin / SAVED_INDEX).is_file()
    fast = tree.tree()
    (admin / SAVED_INDEX).rename(admin / "aside")
    assert fast == tree.tree()
    listed = repo.git("ls-tree", "-r", fast)
    assert "new.txt" in listed and "docs/guide.md" not in listed


def test_a_refreshed_saved_index_still_sees_what_the_agent_changed(repo: Repo) -> None:
    tree = _make(repo, "t1", repo.head())
    admin = Path(repo.location(tree.path)["GIT_DIR"])
    old = (admin / SAVED_INDEX).stat().st_mtime - 10
    os.utime(admin / SAVED_INDEX, (old, old))  # saved long enough ago to be refreshed
    (tree.path / "src" / "app.py").write_text("changed before the refresh\n")
    first = tree.tree()
    assert (admin / REFRESHED).exists()
    assert "changed before the refresh" in repo.git("show", f"{first}:src/app.py")
    (tree.path / "src" / "app.py").write_text("changed after the refresh\n")
    assert "changed after the refresh" in repo.git("show", f"{tree.tree()}:src/app.py")
