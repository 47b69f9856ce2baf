"""Repo and Worktree against real git, in a home with no git identity configured."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from plait.errors import EnvironmentProblem
from plait.workspace import GitError, Repo

HOOKS = ("pre-commit", "commit-msg", "post-commit", "post-checkout", "reference-transaction", "post-index-change")


@pytest.fixture(autouse=True)
def no_identity(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """A HOME with no git user, and git told never to guess one."""
    home = tmp_path_factory.mktemp("home")
    config = home / "gitconfig"
    config.write_text("[user]\n\tuseConfigOnly = true\n[init]\n\tdefaultBranch = main\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path_factory.getbasetemp()))
    for var in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL", "GIT_DIR"):
        monkeypatch.delenv(var, raising=False)


def git(cwd: Path, *args: str) -> str:
    """Plain git, as a user would run it (hooks enabled), with an identity given on the command line."""
    return subprocess.run(
        ["git", "-c", "user.name=Test", "-c", "user.email=test@example.com", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    ).stdout


@pytest.fixture
def repo_dir(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    (root / "README.md").write_text("hello\n")
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("print('hi')\n")
    (root / ".gitignore").write_text("build/\n*.log\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "init")
    return root


def state(root: Path) -> tuple[str, str, str, str]:
    """Everything a user could see change: status, HEAD, branches, and the staged tree."""
    return (
        git(root, "status", "--porcelain", "--untracked-files=all"),
        git(root, "rev-parse", "HEAD"),
        git(root, "branch", "--list", "--all"),
        git(root, "write-tree"),
    )


def test_discover_refuses_a_directory_outside_git(tmp_path: Path) -> None:
    with pytest.raises(
        EnvironmentProblem, match="is not inside a git repository: run plait from a git checkout"
    ) as err:
        Repo.discover(tmp_path)
    assert err.value.exit_code == 3
    assert "\n" not in str(err.value)


def test_discover_refuses_a_repository_without_commits(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    with pytest.raises(EnvironmentProblem, match="has no commits yet: commit something first"):
        Repo.discover(tmp_path)


def test_discover_from_a_subdirectory_and_from_a_worktree(repo_dir: Path, tmp_path: Path) -> None:
    repo = Repo.discover(repo_dir / "src")
    assert repo.root == repo_dir.resolve()
    assert repo.common_dir == (repo_dir / ".git").resolve()
    wt = repo.add_worktree(tmp_path / "wt", "agent/one", "HEAD")
    inner = Repo.discover(wt.path)
    assert inner.root == wt.path.resolve()
    assert inner.common_dir == repo.common_dir
    assert repo.plait_dir() == repo.common_dir / "plait"
    assert repo.plait_dir().is_dir()


def test_head_and_head_ref(repo_dir: Path) -> None:
    repo = Repo.discover(repo_dir)
    assert repo.head() == git(repo_dir, "rev-parse", "HEAD").strip()
    assert repo.head_ref() == "main"
    git(repo_dir, "checkout", "-q", "--detach")
    assert repo.head_ref() == "HEAD"


def test_dirty_paths_lists_changes_and_untracked_but_not_ignored(repo_dir: Path) -> None:
    repo = Repo.discover(repo_dir)
    assert repo.dirty_paths() == []
    (repo_dir / "README.md").write_text("changed\n")
    (repo_dir / "new" / "deep").mkdir(parents=True)
    (repo_dir / "new" / "deep" / "file.txt").write_text("x")
    (repo_dir / "debug.log").write_text("ignored")
    (repo_dir / "build").mkdir()
    (repo_dir / "build" / "out.o").write_text("ignored")
    assert sorted(repo.dirty_paths()) == ["README.md", "new/deep/file.txt"]


def test_git_error_names_the_command_and_git_complaint(repo_dir: Path) -> None:
    repo = Repo.discover(repo_dir)
    with pytest.raises(GitError, match=r"git rev-parse --verify no-such-ref failed: fatal: ") as err:
        repo.git("rev-parse", "--verify", "no-such-ref")
    assert err.value.exit_code == 3
    assert repo.git("rev-parse", "--verify", "no-such-ref", check=False) == ""


def test_snapshot_commits_the_work_tree_without_touching_anything(repo_dir: Path) -> None:
    repo = Repo.discover(repo_dir)
    (repo_dir / "README.md").write_text("edited, unstaged\n")
    (repo_dir / "staged.txt").write_text("staged\n")
    git(repo_dir, "add", "staged.txt")
    (repo_dir / "untracked.txt").write_text("untracked\n")
    (repo_dir / "src" / "app.py").unlink()
    (repo_dir / "debug.log").write_text("ignored\n")
    before = state(repo_dir)

    sha = repo.snapshot("plait: snapshot")

    assert state(repo_dir) == before
    assert git(repo_dir, "rev-parse", f"{sha}^").strip() == before[1].strip()
    files = git(repo_dir, "ls-tree", "-r", "--name-only", sha).split()
    assert sorted(files) == [".gitignore", "README.md", "staged.txt", "untracked.txt"]
    assert git(repo_dir, "show", f"{sha}:README.md") == "edited, unstaged\n"
    assert git(repo_dir, "show", f"{sha}:untracked.txt") == "untracked\n"
    assert git(repo_dir, "log", "-1", "--format=%an <%ae>|%s", sha).strip() == "plait <plait@localhost>|plait: snapshot"
    assert git(repo_dir, "for-each-ref", "--format=%(objectname)", "refs/plait/snapshots/").split() == [sha]


def test_snapshot_of_a_clean_tree_has_the_head_tree(repo_dir: Path) -> None:
    repo = Repo.discover(repo_dir)
    sha = repo.snapshot("clean")
    assert git(repo_dir, "rev-parse", f"{sha}^{{tree}}") == git(repo_dir, "rev-parse", "HEAD^{tree}")


def test_worktree_lifecycle(repo_dir: Path, tmp_path: Path) -> None:
    repo = Repo.discover(repo_dir)
    base = repo.head()
    before = state(repo_dir)
    wt = repo.add_worktree(tmp_path / "wt", "agent/one", "HEAD")
    assert wt.base == base
    assert wt.head() == base
    assert (wt.path / "src" / "app.py").read_text() == "print('hi')\n"
    assert wt.path.resolve() in [p.resolve() for p in repo.worktrees()]
    assert repo.branch_exists("agent/one")

    assert wt.commit_all("nothing") is None
    (wt.path / "src" / "app.py").write_text("print('bye')\n")
    (wt.path / "notes.md").write_text("new\n")
    (wt.path / "README.md").unlink()
    sha = wt.commit_all("agent work")
    assert sha is not None
    assert sha == wt.head()
    assert wt.commit_all("again") is None
    assert git(repo_dir, "log", "-1", "--format=%an <%ae>|%cn <%ce>|%s", "agent/one").strip() == (
        "plait <plait@localhost>|plait <plait@localhost>|agent work"
    )
    assert wt.changed_files(base) == ["README.md", "notes.md", "src/app.py"]
    diff = wt.diff(base)
    assert "-print('hi')" in diff
    assert "+print('bye')" in diff
    assert "notes.md" in wt.diff(base, stat=True)
    assert "|" in wt.diff(base, stat=True)
    assert state(repo_dir)[:2] == before[:2]

    wt.remove(delete_branch=True)
    assert not wt.path.exists()
    assert not repo.branch_exists("agent/one")
    assert [p.resolve() for p in repo.worktrees()] == [repo_dir.resolve()]


def test_remove_keeps_the_branch_unless_asked_and_survives_a_deleted_directory(repo_dir: Path, tmp_path: Path) -> None:
    repo = Repo.discover(repo_dir)
    wt = repo.add_worktree(tmp_path / "wt", "agent/keep", "HEAD")
    subprocess.run(["rm", "-rf", str(wt.path)], check=True)
    wt.remove()
    assert repo.branch_exists("agent/keep")
    assert len(repo.worktrees()) == 1
    repo.delete_branch("agent/keep")
    assert not repo.branch_exists("agent/keep")


def test_add_worktree_refuses_an_existing_branch(repo_dir: Path, tmp_path: Path) -> None:
    repo = Repo.discover(repo_dir)
    git(repo_dir, "branch", "taken")
    with pytest.raises(GitError, match="branch 'taken' already exists") as err:
        repo.add_worktree(tmp_path / "wt", "taken", "HEAD")
    assert err.value.exit_code == 3
    assert not (tmp_path / "wt").exists()


def test_plain_git_cannot_commit_here_but_plait_can(repo_dir: Path, tmp_path: Path) -> None:
    (repo_dir / "x.txt").write_text("x")
    git(repo_dir, "add", "x.txt")
    refused = subprocess.run(["git", "commit", "-qm", "x"], cwd=repo_dir, capture_output=True, text=True)
    assert refused.returncode != 0
    git(repo_dir, "reset", "-q")
    wt = Repo.discover(repo_dir).add_worktree(tmp_path / "wt", "agent/id", "HEAD")
    (wt.path / "x.txt").write_text("x")
    assert wt.commit_all("works") is not None


def test_repository_hooks_never_run(repo_dir: Path, tmp_path: Path) -> None:
    marker = tmp_path / "hook-ran"
    hooks = repo_dir / ".git" / "hooks"
    for name in HOOKS:
        hook = hooks / name
        hook.write_text(f"#!/bin/sh\necho {name} >> '{marker}'\n")
        hook.chmod(0o755)
    # The hooks work: plain git runs them.
    subprocess.run(["git", "checkout", "-q", "-b", "probe"], cwd=repo_dir, check=True)
    assert "post-checkout" in marker.read_text()
    git(repo_dir, "checkout", "-q", "main")
    marker.unlink()

    repo = Repo.discover(repo_dir)
    (repo_dir / "untracked.txt").write_text("u")
    repo.snapshot("snap")
    wt = repo.add_worktree(tmp_path / "wt", "agent/hooks", "HEAD")
    (wt.path / "f.txt").write_text("f")
    assert wt.commit_all("no hooks") is not None
    wt.diff(repo.head())
    wt.remove(delete_branch=True)
    repo.prune_worktrees()
    assert not marker.exists()


def test_many_worktrees_made_and_removed_at_once_all_succeed(repo_dir: Path, tmp_path: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    repo = Repo.discover(repo_dir)
    head = repo.head()

    def cycle(i: int) -> str:
        wt = repo.add_worktree(tmp_path / "many" / f"w{i}", f"many/{i}", head)
        (wt.path / f"f{i}.txt").write_text(str(i))
        sha = wt.commit_all(f"work {i}") or ""
        wt.remove()
        return sha

    with ThreadPoolExecutor(max_workers=12) as pool:
        shas = list(pool.map(cycle, range(24)))
    assert all(shas) and len(set(shas)) == 24
    assert len(git(repo_dir, "worktree", "list").splitlines()) == 1
