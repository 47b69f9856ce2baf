"""A run's pool of worktrees, against real git: a recycled worktree is indistinguishable from a fresh one, a
recycling cut short is made good on resume, and the run's clean-up leaves nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from plait.run._opening import make_worktree, pool_of
from plait.run.maintenance import tidy_run
from plait.workspace import Repo, Worktree
from plait.workspace._pool import POOLED, give_back
from worktree_view import as_fresh, git, look, mess_up, two_commits

RUN = "r1"


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return two_commits(tmp_path)


def _make(repo: Repo, name: str, base: str, *, fresh: bool = True) -> Worktree:
    path = pool_of(repo, RUN) / name
    return make_worktree(repo, path, f"plait/{RUN}/{name}", base, fresh=fresh, run_id=RUN)


def test_a_recycled_worktree_is_a_fresh_one(repo: Repo) -> None:
    one, two = repo.git("rev-parse", "HEAD~1").strip(), repo.head()
    first = _make(repo, "t1", one)
    mess_up(first.path)
    admin = Path(repo.location(first.path)["GIT_DIR"])
    assert give_back(first, pool_of(repo, RUN))
    assert not first.path.exists() and repo.branch_exists(first.branch)
    repo.delete_branch(first.branch)  # let go: the branch of a finished attempt is the integrator's

    reused = _make(repo, "t2", two)
    assert Path(repo.location(reused.path)["GIT_DIR"]) == admin  # the same worktree, not a new one
    fresh = repo.add_worktree(repo.plait_dir() / "fresh", f"plait/{RUN}/fresh", two)
    seen, expected = look(reused.path), look(fresh.path)
    assert seen["status"] == ""
    assert seen == as_fresh(expected, f"plait/{RUN}/t2")
    assert not list(pool_of(repo, RUN).glob(f"{POOLED}*"))


def test_a_worktree_goes_back_to_an_older_commit_as_fresh_too(repo: Repo) -> None:
    one, two = repo.git("rev-parse", "HEAD~1").strip(), repo.head()
    first = _make(repo, "t1", two)
    mess_up(first.path)
    assert give_back(first, pool_of(repo, RUN))
    reused = _make(repo, "t2", one)
    fresh = repo.add_worktree(repo.plait_dir() / "fresh", f"plait/{RUN}/fresh", one)
    assert look(reused.path) == as_fresh(look(fresh.path), f"plait/{RUN}/t2")


def test_a_recycling_cut_short_is_made_good_by_the_resumed_process(repo: Repo) -> None:
    first = _make(repo, "t1", repo.head())
    mess_up(first.path)
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
    assert look(resumed.path) == as_fresh(look(fresh.path), branch)
    assert not lock.exists()


def test_the_runs_clean_up_leaves_nothing_of_the_pool(repo: Repo) -> None:
    trees = [_make(repo, f"t{n}", repo.head()) for n in range(3)]
    for tree in trees:
        mess_up(tree.path)
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
    assert look(second.path) == as_fresh(look(fresh.path), f"plait/{RUN}/t2")
    assert not list(pool_of(repo, RUN).glob(f"{POOLED}*"))
    assert sorted(repo.worktrees()) == sorted([repo.root, second.path, fresh.path])
