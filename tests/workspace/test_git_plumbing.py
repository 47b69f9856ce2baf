"""plait's own stand-ins for git processes, against git itself: a commit message cleaned up as `git stripspace`
cleans it, and a run's pool of worktrees emptied without a git process per worktree."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

from plait.run._opening import make_worktree, pool_of
from plait.workspace import Repo
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
