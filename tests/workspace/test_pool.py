"""A run's pool of worktrees, against real git: a recycled worktree is indistinguishable from a fresh one, a
recycling cut short is made good on resume, and the run's clean-up leaves nothing."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from plait.run._opening import make_worktree, pool_of
from plait.run.maintenance import tidy_run
from plait.workspace import Repo, Worktree
from plait.workspace._pool import POOLED, give_back

RUN = "r1"


def git(cwd: Path, *args: str, check: bool = True) -> str:
    """Plain git, as an agent would run it in its worktree."""
    done = subprocess.run(
        ["git", "-c", "user.name=T", "-c", "user.email=t@example.com", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=check,
    )
    return done.stdout


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    root = tmp_path / "repo"
    (root / "src" / "pkg").mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    (root / ".gitignore").write_text("build/\n*.log\n")
    (root / "README.md").write_text("hello\n")
    (root / "src" / "app.py").write_text("print('hi')\n")
    (root / "src" / "pkg" / "mod.py").write_text("X = 1\n")
    (root / "run.sh").write_text("echo run\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "one")
    (root / "src" / "pkg" / "mod.py").write_text("X = 2\n")
    (root / "NEW.md").write_text("new\n")
    git(root, "rm", "-q", "run.sh")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "two")
    return Repo.discover(root)


def _make(repo: Repo, name: str, base: str, *, fresh: bool = True) -> Worktree:
    path = pool_of(repo, RUN) / name
    return make_worktree(repo, path, f"plait/{RUN}/{name}", base, fresh=fresh, run_id=RUN)


def _mess_up(path: Path) -> None:
    """What an agent can leave: commits, edits, staged and flagged files, build output, a nested repository,
    a merge in progress, per-worktree refs, a file turned into a directory."""
    (path / "README.md").write_text("changed\n")
    git(path, "commit", "-qam", "agent's work")
    (path / "src" / "app.py").write_text("edited, not committed\n")
    git(path, "update-index", "--assume-unchanged", "src/app.py")
    (path / "src" / "pkg" / "mod.py").unlink()
    (path / "staged.py").write_text("staged\n")
    git(path, "add", "staged.py")
    (path / "notes.txt").write_text("untracked\n")
    (path / "build").mkdir()
    (path / "build" / "out.o").write_text("object\n")
    (path / "debug.log").write_text("log\n")
    (path / "vendor").mkdir()
    git(path / "vendor", "init", "-q")
    (path / "NEW.md").chmod(0o755) if (path / "NEW.md").exists() else None
    git(path, "update-ref", "refs/worktree/mine", "HEAD")
    git(path, "update-ref", "MERGE_HEAD", "HEAD")
    (path / "run.sh").unlink(missing_ok=True)
    (path / "run.sh").mkdir()
    (path / "run.sh" / "inside").write_text("x\n")


def _look(path: Path) -> dict[str, object]:
    """Everything an agent sees of a worktree."""
    files: dict[str, tuple[bytes, bool]] = {}
    for root, dirs, names in os.walk(path):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in names:
            if name == ".git":
                continue
            full = Path(root) / name
            files[full.relative_to(path).as_posix()] = (full.read_bytes(), os.access(full, os.X_OK))
    git_path = lambda name: Path(git(path, "rev-parse", "--git-path", name).strip())  # noqa: E731
    return {
        "files": files,
        "status": git(path, "status", "--porcelain", "--ignored", "--untracked-files=all"),
        "head": git(path, "rev-parse", "HEAD"),
        "branch": git(path, "symbolic-ref", "--short", "HEAD"),
        "index": git(path, "ls-files", "-s", "-v"),
        "refs": git(path, "for-each-ref", "refs/worktree/", "refs/bisect/"),
        # a fresh worktree's ORIG_HEAD and reflog tell only of its own checkout, at the base
        "state": [n for n in ("MERGE_HEAD", "rebase-merge", "config.worktree", "info") if git_path(n).exists()],
        "reflog": set(git(path, "reflog", "--format=%H").split()),
        "stashes": git(path, "stash", "list"),
    }


def _as_fresh(view: dict[str, object], branch: str) -> dict[str, object]:
    return {**view, "branch": f"{branch}\n"}


def test_a_recycled_worktree_is_a_fresh_one(repo: Repo) -> None:
    one, two = repo.git("rev-parse", "HEAD~1").strip(), repo.head()
    first = _make(repo, "t1", one)
    _mess_up(first.path)
    admin = Path(repo.location(first.path)["GIT_DIR"])
    assert give_back(first, pool_of(repo, RUN))
    assert not first.path.exists() and repo.branch_exists(first.branch)
    repo.delete_branch(first.branch)  # let go: the branch of a finished attempt is the integrator's

    reused = _make(repo, "t2", two)
    assert Path(repo.location(reused.path)["GIT_DIR"]) == admin  # the same worktree, not a new one
    fresh = repo.add_worktree(repo.plait_dir() / "fresh", f"plait/{RUN}/fresh", two)
    seen, expected = _look(reused.path), _look(fresh.path)
    assert seen["status"] == ""
    assert seen == _as_fresh(expected, f"plait/{RUN}/t2")
    assert not list(pool_of(repo, RUN).glob(f"{POOLED}*"))


def test_a_worktree_goes_back_to_an_older_commit_as_fresh_too(repo: Repo) -> None:
    one, two = repo.git("rev-parse", "HEAD~1").strip(), repo.head()
    first = _make(repo, "t1", two)
    _mess_up(first.path)
    assert give_back(first, pool_of(repo, RUN))
    reused = _make(repo, "t2", one)
    fresh = repo.add_worktree(repo.plait_dir() / "fresh", f"plait/{RUN}/fresh", one)
    assert _look(reused.path) == _as_fresh(_look(fresh.path), f"plait/{RUN}/t2")


def test_a_recycling_cut_short_is_made_good_by_the_resumed_process(repo: Repo) -> None:
    first = _make(repo, "t1", repo.head())
    _mess_up(first.path)
    assert give_back(first, pool_of(repo, RUN))
    # killed right after taking the worktree from the pool, half-way through recycling it
    free = next(pool_of(repo, RUN).glob(f"{POOLED}*"))
    target = pool_of(repo, RUN) / "t2"
    git(repo.root, "worktree", "move", str(free), str(target))
    (target / "src" / "app.py").write_text("half written\n")
    branch = f"plait/{RUN}/t2"
    git(repo.root, "branch", branch, "HEAD~1")
    lock = repo.common_dir / "refs" / "heads" / f"{branch}.lock"
    lock.write_text("")  # the branch update the kill cut short

    resumed = _make(repo, "t2", repo.head(), fresh=False)
    fresh = repo.add_worktree(repo.plait_dir() / "fresh", f"plait/{RUN}/fresh", repo.head())
    assert _look(resumed.path) == _as_fresh(_look(fresh.path), branch)
    assert not lock.exists()


def test_the_runs_clean_up_leaves_nothing_of_the_pool(repo: Repo) -> None:
    trees = [_make(repo, f"t{n}", repo.head()) for n in range(3)]
    for tree in trees:
        _mess_up(tree.path)
        assert give_back(tree, pool_of(repo, RUN))
    _make(repo, "t9", repo.head())  # one taken, two still free
    assert len(list(pool_of(repo, RUN).glob(f"{POOLED}*"))) == 2
    tidy_run(repo, RUN)
    assert repo.worktrees() == [repo.root]
    assert not pool_of(repo, RUN).exists()
    assert not list((repo.common_dir / "worktrees").glob("*"))


def test_a_worktree_not_made_for_the_pool_is_not_kept(repo: Repo) -> None:
    plain = repo.add_worktree(pool_of(repo, RUN) / "x", f"plait/{RUN}/x", repo.head())
    assert not give_back(plain, pool_of(repo, RUN))
    assert plain.path.exists()  # the caller removes it


def test_a_worktree_whose_move_was_cut_short_is_dropped_not_taken(repo: Repo) -> None:
    first = _make(repo, "t1", repo.head())
    admin = Path(repo.location(first.path)["GIT_DIR"])
    assert give_back(first, pool_of(repo, RUN))
    (admin / "gitdir").write_text(f"{first.path / '.git'}\n")  # killed between the rename and git's record

    second = _make(repo, "t2", repo.head())
    fresh = repo.add_worktree(repo.plait_dir() / "fresh", f"plait/{RUN}/fresh", repo.head())
    assert _look(second.path) == _as_fresh(_look(fresh.path), f"plait/{RUN}/t2")
    assert not list(pool_of(repo, RUN).glob(f"{POOLED}*"))
    assert sorted(repo.worktrees()) == sorted([repo.root, second.path, fresh.path])
