"""Worktrees layered over the run's one checkout, against real git and real overlay mounts: what an agent sees
is what a checked-out worktree shows, its writes stay its own, a killed process's mounts are taken away, and the
run's clean-up leaves nothing mounted. Skipped where this process may not mount (not root)."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path

import pytest

from plait.run._opening import GitThreads, make_worktree, pool_of
from plait.run.maintenance import tidy_run
from plait.workspace import Repo, Worktree
from plait.workspace._layers import BASE
from plait.workspace._mounts import LAYER, can_layer, overlays
from plait.workspace.gitcall import GitError
from worktree_view import as_fresh, git, look, mess_up, two_commits

RUN = "r1"


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    made = two_commits(tmp_path)
    if not can_layer(pool_of(made, RUN)):
        pytest.skip("this process may not mount an overlay")
    return made


def _make(repo: Repo, name: str, base: str, *, fresh: bool = True) -> Worktree:
    path = pool_of(repo, RUN) / name
    return make_worktree(repo, path, f"plait/{RUN}/{name}", base, fresh=fresh, run_id=RUN, layered=True)


def _mounts_at(path: Path) -> int:
    lines = Path("/proc/self/mountinfo").read_text().splitlines()
    return sum(1 for line in lines if line.split(" ")[4] == os.path.realpath(path))


def _fresh(repo: Repo, sha: str) -> Worktree:
    return repo.add_worktree(repo.plait_dir() / "fresh", f"plait/{RUN}/fresh", sha)


@pytest.mark.parametrize("first", ["HEAD~1", "HEAD"])
def test_a_layered_worktree_is_what_a_checkout_shows(repo: Repo, first: str) -> None:
    """The second worktree starts on the other commit than the run's shared checkout holds: the paths that
    differ (an edit, a new file, a deletion) are written into its own layer."""
    one, two = repo.git("rev-parse", "HEAD~1").strip(), repo.head()
    shas = (one, two) if first == "HEAD~1" else (two, one)
    made = [_make(repo, f"t{n}", sha) for n, sha in enumerate(shas)]
    for worktree, sha in zip(made, shas, strict=True):
        assert str(os.path.realpath(worktree.path)) in overlays()
        assert look(worktree.path)["status"] == ""
        fresh = _fresh(repo, sha)
        assert look(worktree.path) == as_fresh(look(fresh.path), worktree.branch)
        fresh.remove(delete_branch=True)


def test_an_agents_writes_stay_in_its_own_layer(repo: Repo) -> None:
    a, b = _make(repo, "a", repo.head()), _make(repo, "b", repo.head())
    (a.path / "NEW.md").write_text("the agent's\n")
    git(a.path, "commit", "-qam", "an edit")
    mess_up(a.path)
    assert look(b.path)["status"] == ""  # the other agent sees none of it
    base = next(p for p in pool_of(repo, RUN).glob(f"{BASE}*") if p.is_dir())  # the shared checkout
    assert (base / "README.md").read_text() == "hello\n" and (base / "NEW.md").read_text() == "new\n"
    assert (a.path / "README.md").read_text() == "changed\n" and (b.path / "NEW.md").read_text() == "new\n"
    assert git(repo.root, "show", f"{a.branch}~1:NEW.md") == "the agent's\n"


def test_a_directory_of_the_shared_checkout_can_be_renamed(repo: Repo) -> None:
    """Without the overlay's `redirect_dir` a rename of a lower directory fails with EXDEV, which no normal
    working tree does (`git mv`, an agent's refactoring)."""
    worktree = _make(repo, "t1", repo.head())
    git(worktree.path, "mv", "src/pkg", "src/pkg2")
    (worktree.path / "src").rename(worktree.path / "source")
    assert (worktree.path / "source" / "pkg2" / "mod.py").read_text() == "X = 2\n"
    assert not (worktree.path / "src").exists()


def test_no_device_or_set_user_id_program_is_honoured(repo: Repo) -> None:
    worktree = _make(repo, "t1", repo.head())
    options = next(
        line for line in Path("/proc/self/mountinfo").read_text().splitlines() if f" {worktree.path} " in line
    )
    assert {"nosuid", "nodev"} <= set(options.split(" ")[5].split(","))


def test_removing_unmounts_and_leaves_nothing(repo: Repo) -> None:
    worktree = _make(repo, "t1", repo.head())
    mess_up(worktree.path)
    worktree.remove()
    pool = pool_of(repo, RUN)
    assert _mounts_at(worktree.path) == 0
    assert not worktree.path.exists() and not (pool / f"{LAYER}t1").exists()
    assert worktree.path not in repo.worktrees()
    assert git(repo.root, "worktree", "list", "--porcelain").count("worktree ") == 1


def test_a_killed_processs_mount_is_taken_away_when_the_worktree_is_made_again(repo: Repo) -> None:
    """A resumed process makes the worktree again over what a killed one left mounted: one mount, not two."""
    first = _make(repo, "t1", repo.head())
    mess_up(first.path)
    again = _make(repo, "t1", repo.head(), fresh=False)
    assert _mounts_at(again.path) == 1
    assert look(again.path)["status"] == ""


def test_a_half_made_layer_is_cleared_before_the_worktree_is_made(repo: Repo) -> None:
    """Killed between its layer's directory and the mount: nothing mounted, a layer and records left."""
    first = _make(repo, "t1", repo.head())
    subprocess.run(["umount", str(first.path)], check=True)
    again = _make(repo, "t1", repo.head(), fresh=False)
    assert _mounts_at(again.path) == 1 and look(again.path)["status"] == ""


def _ended(repo: Repo, kept: str, removed: str, *, keep: bool = True) -> Worktree:
    """Two worktrees made through a run's git threads, one removed as its attempt ends (both unless `keep`); then
    the threads are closed, as at the end of a process, and the first (kept for a resume) is returned."""

    async def run() -> Worktree:
        threads = GitThreads(1)
        made = [
            await threads.run(
                make_worktree,
                repo,
                pool_of(repo, RUN) / n,
                f"plait/{RUN}/{n}",
                repo.head(),
                fresh=True,
                run_id=RUN,
                layered=True,
            )
            for n in (kept, removed)
        ]
        for worktree in made[1:] if keep else made:
            worktree.remove()
        threads.close()  # closed with nothing running, its clean-up is done at once
        return made[0]

    return asyncio.run(run())


def _bases(repo: Repo) -> list[Path]:
    return [p for p in pool_of(repo, RUN).glob(f"{BASE}*") if p.is_dir()]


def test_the_runs_clean_up_unmounts_and_deletes_the_shared_checkout(repo: Repo) -> None:
    kept = _ended(repo, "kept", "done")  # a stopped run keeps its worktrees for a resume: so does their base
    assert _bases(repo) and _mounts_at(kept.path) == 1 and look(kept.path)["status"] == ""
    tidy_run(repo, RUN)
    assert _mounts_at(kept.path) == 0
    assert not pool_of(repo, RUN).exists()
    assert git(repo.root, "worktree", "list", "--porcelain").count("worktree ") == 1


def test_the_shared_checkout_goes_when_no_worktree_uses_it(repo: Repo) -> None:
    kept = _ended(repo, "t1", "t2")
    kept.remove()
    assert _bases(repo)
    _ended(repo, "t3", "t4", keep=False)  # the next process's end
    assert not _bases(repo)


def test_a_branch_in_the_way_is_said_and_nothing_is_left_mounted(repo: Repo) -> None:
    repo.git("branch", f"plait/{RUN}/t1", "HEAD~1")
    with pytest.raises(GitError, match="already exists"):
        _make(repo, "t1", repo.head())
    path = pool_of(repo, RUN) / "t1"
    assert _mounts_at(path) == 0 and not path.exists() and not (pool_of(repo, RUN) / f"{LAYER}t1").exists()
    assert repo.git("rev-parse", f"plait/{RUN}/t1") == repo.git("rev-parse", "HEAD~1")  # the user's, untouched


def test_a_path_the_overlays_options_cannot_carry_gets_a_checkout_and_says_no_for_itself_alone(
    repo: Repo, tmp_path: Path
) -> None:
    """A comma in the repository's path would end an option of the mount: such a run falls back to a full
    checkout, and a run elsewhere on the same filesystem is still layered."""
    odd = two_commits(tmp_path / "a,b")
    made = make_worktree(
        odd, pool_of(odd, RUN) / "t1", f"plait/{RUN}/t1", odd.head(), fresh=True, run_id=RUN, layered=True
    )
    assert _mounts_at(made.path) == 0 and look(made.path)["status"] == ""
    assert not [p for p in pool_of(odd, RUN).iterdir() if p.name.startswith((BASE, LAYER))]
    assert _mounts_at(_make(repo, "t1", repo.head()).path) == 1
