"""plait's own stand-ins for git processes, against git itself: a commit message cleaned up as `git stripspace`
cleans it, and a run's pool of worktrees emptied without a git process per worktree."""

from __future__ import annotations

import random
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from plait.run._opening import make_worktree, pool_of
from plait.workspace import GitError, Repo
from plait.workspace._gitmsg import stripspace
from plait.workspace._pool import POOLED, empty, give_back


def test_a_message_is_cleaned_up_as_git_stripspace_cleans_it() -> None:
    rng = random.Random(14)
    alphabet = ["a", "b", " ", "\t", "\r", "\n", "\n", "\v", "\f", "é"]
    messages = ["", "\n", "subject", "subject\n\n\nbody  \n\n", "  \n\nx\t\n\n\n\ny\r\n  "]
    messages += ["".join(rng.choice(alphabet) for _ in range(rng.randrange(30))) for _ in range(300)]
    for message in messages:
        expected = subprocess.run(["git", "stripspace"], input=message.encode(), capture_output=True, check=True)
        assert stripspace(message) == expected.stdout.decode(), repr(message)


def test_an_emptied_pool_leaves_no_worktree_behind(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    run = ["git", "-c", "user.name=T", "-c", "user.email=t@example.com"]
    subprocess.run([*run, "init", "-q", "-b", "main"], cwd=root, check=True)
    (root / "a.txt").write_text("a\n")
    subprocess.run([*run, "add", "-A"], cwd=root, check=True)
    subprocess.run([*run, "commit", "-qm", "one"], cwd=root, check=True)
    repo = Repo.discover(root)
    pool = pool_of(repo, "r")
    trees = [
        make_worktree(repo, pool / f"t{n}", f"plait/r/t{n}", repo.head(), fresh=True, run_id="r") for n in range(3)
    ]
    for tree in trees:
        (tree.path / "nested").mkdir()
        subprocess.run(["git", "init", "-q"], cwd=tree.path / "nested", check=True)  # a repository of its own
        assert give_back(tree, pool)
    assert len(list(pool.glob(f"{POOLED}*"))) == 3
    empty(repo, pool)
    assert repo.worktrees() == [repo.root]
    assert not list(pool.glob(f"{POOLED}*"))
    assert not list((repo.common_dir / "worktrees").glob("*"))


def _one_commit(root: Path) -> Repo:
    root.mkdir()
    run = ["git", "-c", "user.name=T", "-c", "user.email=t@example.com"]
    subprocess.run([*run, "init", "-q", "-b", "main"], cwd=root, check=True)
    (root / "a.txt").write_text("a\n")
    subprocess.run([*run, "add", "-A"], cwd=root, check=True)
    subprocess.run([*run, "commit", "-qm", "one"], cwd=root, check=True)
    return Repo.discover(root)


def test_a_worktree_registered_without_git_is_one_git_knows(tmp_path: Path) -> None:
    repo = _one_commit(tmp_path / "repo")
    ours = repo.add_worktree(tmp_path / "wt" / "t1", "plait/r/t1", "HEAD")
    subprocess.run(["git", "worktree", "add", "-q", "-b", "plain", str(tmp_path / "wt" / "plain")], cwd=repo.root)

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=ours.path, capture_output=True, text=True, check=True).stdout

    listed = subprocess.run(["git", "worktree", "list", "--porcelain"], cwd=repo.root, capture_output=True, text=True)
    assert f"worktree {ours.path}\nHEAD {repo.head()}\nbranch refs/heads/plait/r/t1\n" in listed.stdout
    assert git("symbolic-ref", "HEAD") == "refs/heads/plait/r/t1\n"
    assert git("status", "--porcelain", "--untracked-files=all") == ""
    assert (ours.path / "a.txt").read_text() == "a\n"
    ours_admin = Path(repo.location(ours.path)["GIT_DIR"])
    plain_admin = Path(repo.location(tmp_path / "wt" / "plain")["GIT_DIR"])
    for name in ("commondir", "gitdir"):
        assert (ours_admin / name).read_text().replace("t1", "X") == (plain_admin / name).read_text().replace(
            "plain", "X"
        )
    subprocess.run(["git", "worktree", "prune"], cwd=repo.root, check=True)
    subprocess.run(["git", "worktree", "remove", str(ours.path)], cwd=repo.root, check=True)
    assert not ours.path.exists()


def test_worktrees_made_side_by_side_all_get_their_own_records(tmp_path: Path) -> None:
    repo = _one_commit(tmp_path / "repo")
    with ThreadPoolExecutor(8) as pool:
        made = list(pool.map(lambda n: repo.add_worktree(tmp_path / str(n) / "t", f"plait/r/t{n}", "HEAD"), range(16)))
    assert len({Path(repo.location(w.path)["GIT_DIR"]) for w in made}) == 16  # one name each, though all are "t"
    assert sorted(repo.worktrees()) == sorted([repo.root, *(w.path for w in made)])
    with pytest.raises(GitError):
        repo.add_worktree(made[0].path, "plait/r/again", "HEAD")  # not empty: refused, and no branch is left
    assert not repo.branch_exists("plait/r/again")
