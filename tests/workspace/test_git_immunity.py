"""plait's own git, run outside the sandbox on the trees agents write, runs nothing a worktree set up.

Each scenario plants in an agent's worktree what a hostile agent could: a repository of its own (with commits, or
none), a submodule it filled with such a repository, or a `.git` link pointing at a git directory it made. Every
planted configuration names commands that touch a marker file: filters (clean, smudge, process, through an
include too), an fsmonitor, a pager, an editor, an ssh command, an askpass, an external diff, a textconv, a diff
command, a merge driver, a credential helper, a gpg program, and hooks. The worktree's own `.gitattributes`
names the drivers that only the planted configurations define. No marker may appear, whatever plait does.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from plait.workspace import Repo, Worktree

ATTRIBUTES = "* filter=x diff=x merge=x\n*.y filter=y\n*.z filter=z\n"
HOOKS = ("post-index-change", "post-checkout", "pre-commit", "post-commit", "post-merge", "reference-transaction")
SCENARIOS = ("nested", "empty-nested", "submodule", "git-link")


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for key in ("GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"):
        monkeypatch.setenv(key, "Test")
    for key in ("GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"):
        monkeypatch.setenv(key, "test@example.invalid")


def git(cwd: Path, *args: str) -> str:
    """The test's own git, for setting up (before anything is planted, so it runs nothing planted)."""
    done = subprocess.run(
        ["git", "-c", "core.hooksPath=/dev/null", *args], cwd=cwd, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def plant_config(config: Path, marks: Path) -> None:
    """Write into the git config file `config` every setting that runs a command, each touching its own marker."""

    def touch(name: str) -> str:
        return f"touch {shlex.quote(str(marks / name))}"

    included = config.parent / "included.cfg"
    subprocess.run(["git", "config", "--file", str(included), "filter.z.clean", f"{touch('include')}; cat"], check=True)
    settings = {
        "filter.x.clean": f"{touch('filter-clean')}; cat",
        "filter.x.smudge": f"{touch('filter-smudge')}; cat",
        "filter.y.process": touch("filter-process"),
        "core.fsmonitor": f"{touch('fsmonitor')}; false",
        "core.pager": f"{touch('pager')}; cat",
        "core.editor": touch("editor"),
        "core.sshCommand": touch("ssh"),
        "core.askPass": touch("askpass"),
        "diff.external": touch("diff-external"),
        "diff.x.textconv": f"{touch('textconv')}; cat",
        "diff.x.command": touch("diff-command"),
        "merge.x.driver": f"{touch('merge-driver')}; false",
        "credential.helper": f"!{touch('credential')}",
        "gpg.program": touch("gpg"),
        "commit.gpgSign": "true",
        "include.path": str(included),
    }
    for key, value in settings.items():
        subprocess.run(["git", "config", "--file", str(config), key, value], check=True)


def plant_hooks(hooks: Path, marks: Path) -> None:
    hooks.mkdir(parents=True, exist_ok=True)
    for name in HOOKS:
        (hooks / name).write_text(f"#!/bin/sh\ntouch {shlex.quote(str(marks / ('hook-' + name)))}\n")
        (hooks / name).chmod(0o755)


def nested_repo(where: Path, marks: Path, *, commit: bool = True) -> str:
    """A repository at `where` (an agent's `git init`, maybe a commit), then armed; returns its HEAD ("" if none)."""
    where.mkdir(parents=True, exist_ok=True)
    git(where, "init", "-q")
    files = {"f.txt": "hello\n", "g.y": "why\n", "h.z": "zed\n", ".gitattributes": ATTRIBUTES}
    for name, text in files.items():
        (where / name).write_text(text)
    head = ""
    if commit:
        git(where, "add", "-A")
        git(where, "-c", "alias.ci=commit", "ci", "-q", "-m", "nested")
        head = git(where, "rev-parse", "HEAD")
    plant_config(where / ".git" / "config", marks)
    plant_hooks(where / ".git" / "hooks", marks)
    return head


def dirty(where: Path) -> None:
    """Change tracked files without changing their size, so git must read them (through their filters) to tell."""
    for name in ("f.txt", "g.y", "h.z"):
        path = where / name
        if path.exists():
            text = path.read_text()
            path.write_text(text.upper())
            stamp = path.stat().st_mtime + 10
            os.utime(path, (stamp, stamp))


@dataclass
class Planted:
    repo: Repo
    wt: Worktree
    marks: Path
    other: str
    """A commit on another branch, changing a file the worktree does not: what a claim merges in."""
    left_out: list[str]
    """What plait's commits must leave out."""

    def fired(self) -> list[str]:
        return sorted(p.name for p in self.marks.iterdir())


def _main_repo(root: Path, gitlink: str) -> Repo:
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "README.md").write_text("hello\n")
    (root / "other.txt").write_text("other\n")
    git(root, "add", "-A")
    if gitlink:
        (root / ".gitmodules").write_text('[submodule "lib"]\n\tpath = lib\n\turl = ./lib.git\n')
        git(root, "add", ".gitmodules")
        git(root, "update-index", "--add", "--cacheinfo", f"160000,{gitlink},lib")
    git(root, "commit", "-q", "-m", "initial")
    return Repo.discover(root)


def _other_commit(repo: Repo) -> str:
    git(repo.root, "checkout", "-q", "-b", "other")
    (repo.root / "other.txt").write_text("changed elsewhere\n")
    git(repo.root, "commit", "-q", "-a", "-m", "other")
    git(repo.root, "checkout", "-q", "main")
    return git(repo.root, "rev-parse", "other")


def _git_link(wt: Worktree, repo: Repo, marks: Path) -> None:
    """The worktree's `.git` link pointed at a git directory the agent made, sharing the repository's objects."""
    evil = wt.path / ".evil"
    git(wt.path, "init", "-q", "--bare", str(evil))
    (evil / "objects" / "info" / "alternates").write_text(str(repo.common_dir / "objects") + "\n")
    (evil / "HEAD").write_text(wt.head() + "\n")
    plant_config(evil / "config", marks)
    subprocess.run(["git", "config", "--file", str(evil / "config"), "core.bare", "false"], check=True)
    plant_hooks(evil / "hooks", marks)
    (wt.path / ".git").write_text(f"gitdir: {evil}\n")


def plant(tmp_path: Path, scenario: str) -> Planted:
    marks = tmp_path / "marks"
    marks.mkdir()
    armed = tmp_path / "armed"
    gitlink = nested_repo(armed, marks) if scenario == "submodule" else ""
    repo = _main_repo(tmp_path / "project", gitlink)
    other = _other_commit(repo)
    wt = repo.add_worktree(repo.plait_dir() / "worktrees" / "r1" / "t", "plait/r1/t", "HEAD")
    (wt.path / ".gitattributes").write_text(ATTRIBUTES)
    (wt.path / "work.txt").write_text("the agent's work\n")
    (wt.path / "README.md").write_text("HELLO\n")
    left_out: list[str] = []
    if scenario == "nested":
        nested_repo(wt.path / "sub", marks)
        left_out = ["sub"]
    elif scenario == "empty-nested":
        nested_repo(wt.path / "empty", marks, commit=False)
        left_out = ["empty"]
    elif scenario == "submodule":
        shutil.copytree(armed, wt.path / "lib", dirs_exist_ok=True, symlinks=True)
        left_out = ["lib"]
    else:
        _git_link(wt, repo, marks)
    for where in (wt.path / "sub", wt.path / "lib", wt.path):
        dirty(where)
    assert not list(marks.iterdir()), "setting up ran something"
    return Planted(repo, wt, marks, other, left_out)


@pytest.fixture(params=SCENARIOS)
def planted(request: pytest.FixtureRequest, tmp_path: Path) -> Planted:
    return plant(tmp_path, request.param)


def _restore(p: Planted) -> Any:
    saved = p.wt.checkpoint("refs/plait/checkpoints/r1/t.1", p.wt.base)
    (p.wt.path / "work.txt").write_text("changed after the checkpoint\n")
    p.wt.restore(saved or p.wt.base)


def _diffs(p: Planted) -> Any:
    p.wt.commit_all("work")
    return p.wt.diff(p.wt.base), p.wt.diff(p.wt.base, stat=True), p.wt.changed_files(p.wt.base)


OPERATIONS: dict[str, Callable[[Planted], Any]] = {
    "tree": lambda p: p.wt.tree(),
    "checkpoint": lambda p: p.wt.checkpoint("refs/plait/checkpoints/r1/t.1", p.wt.base),
    "commit_all": lambda p: p.wt.commit_all("the agent's work"),
    "merge_in": lambda p: p.wt.merge_in(p.other, "bring in the integrated work"),
    "restore": _restore,
    "put_back": lambda p: p.wt.put_back(p.wt.base, ["README.md", "work.txt"]),
    "diffs": _diffs,
    "lacks": lambda p: (p.wt.lacks(p.other, "other.txt"), p.wt.changed_between(p.wt.base, p.other)),
    "remove": lambda p: p.wt.remove(delete_branch=True),
}


@pytest.mark.parametrize("operation", list(OPERATIONS))
def test_plaits_git_runs_nothing_the_worktree_planted(planted: Planted, operation: str) -> None:
    try:
        OPERATIONS[operation](planted)
    finally:
        assert planted.fired() == []  # checked when git failed too: a planted command may be why


def _entries(repo: Repo, commit: str) -> dict[str, str]:
    out = git(repo.root, "ls-tree", "-r", "-z", commit)
    return {e.split("\t", 1)[1]: e.split()[0] for e in out.split("\0") if e}


def _gitlinks(repo: Repo, commit: str) -> dict[str, str]:
    out = git(repo.root, "ls-tree", "-r", "-z", commit)
    return {e.split("\t", 1)[1]: e.split()[2] for e in out.split("\0") if e.startswith("160000 ")}


def test_commits_keep_the_agents_work_and_leave_nested_repositories_out(planted: Planted) -> None:
    wt, repo = planted.wt, planted.repo
    assert wt.nested_repositories() == planted.left_out
    checkpoint = wt.checkpoint("refs/plait/checkpoints/r1/t.1", wt.base)
    sha = wt.commit_all("the agent's work")
    assert sha is not None and checkpoint is not None and wt.head() == sha
    assert git(repo.root, "rev-parse", "plait/r1/t") == sha  # the real branch moved, not a planted one
    for commit in (checkpoint, sha):
        entries = _entries(repo, commit)
        assert entries["work.txt"] == "100644" and entries[".gitattributes"] == "100644"
        assert git(repo.root, "show", f"{commit}:README.md") == "HELLO"
        assert not [p for p in entries if p.split("/")[0] in ("sub", "empty")]
        assert _gitlinks(repo, commit) == _gitlinks(repo, wt.base)  # a submodule stays as the base has it
    assert planted.fired() == []


def test_a_merge_in_brings_the_other_work_and_keeps_the_agents(planted: Planted) -> None:
    wt = planted.wt
    assert wt.merge_in(planted.other, "bring in the integrated work") == []
    assert (wt.path / "other.txt").read_text() == "changed elsewhere\n"
    assert (wt.path / "work.txt").read_text() == "the agent's work\n"
    # the branch took the other work alone (here a fast-forward); the agent's stays uncommitted, with no WIP commit
    assert git(planted.repo.root, "rev-parse", "plait/r1/t") == planted.other
    assert "work.txt" in wt.changed_between(wt.head(), wt.tree())
    assert planted.fired() == []


def test_a_worktree_holding_a_filled_submodule_is_removed_all_the_same(tmp_path: Path) -> None:
    p = plant(tmp_path, "submodule")
    p.wt.remove(delete_branch=True)
    assert not p.wt.path.exists() and len(p.repo.worktrees()) == 1 and not p.repo.branch_exists("plait/r1/t")
    assert p.fired() == []


def test_diffs_plait_shows_are_gits_own_text(tmp_path: Path) -> None:
    """Even the repository's own external diff and textconv do not run in the diffs plait shows (`plait show`)."""
    marks = tmp_path / "marks"
    marks.mkdir()
    repo = _main_repo(tmp_path / "project", "")
    (repo.root / ".gitattributes").write_text(ATTRIBUTES)
    git(repo.root, "add", ".gitattributes")
    git(repo.root, "commit", "-q", "-m", "attributes")
    other = _other_commit(repo)
    plant_config(repo.common_dir / "config", marks)
    shown = [
        repo.git("diff", "--stat", "--patch", "main", other),
        repo.git("show", other),
        repo.git("log", "-p", "-1", other),
        repo.git("show", f"{other}:other.txt"),
    ]
    assert "changed elsewhere" in shown[0] and "changed elsewhere" in shown[1] and "changed elsewhere" in shown[2]
    assert sorted(p.name for p in marks.iterdir()) == []


def test_a_nested_repository_stays_harmless_commit_after_commit(tmp_path: Path) -> None:
    """The first `git add` only records a new nested repository; the next ones would run `git status` inside it."""
    p = plant(tmp_path, "nested")
    p.wt.commit_all("the agent's work")
    dirty(p.wt.path / "sub")
    (p.wt.path / "work.txt").write_text("more work\n")
    p.wt.tree()
    p.wt.checkpoint("refs/plait/checkpoints/r1/t.1", p.wt.head())
    p.wt.commit_all("more of the agent's work")
    p.wt.merge_in(p.other, "bring in the integrated work")
    assert p.fired() == []
    assert not [path for path in _entries(p.repo, p.wt.head()) if path.startswith("sub")]


def test_a_merge_in_applies_the_branchs_merge_attributes(tmp_path: Path) -> None:
    """git's merge runs outside the worktree, but with the branch's `.gitattributes`, as `git merge` would."""
    repo = _main_repo(tmp_path / "project", "")
    (repo.root / ".gitattributes").write_text("CHANGES.md merge=union\n")
    (repo.root / "CHANGES.md").write_text("start\n")
    git(repo.root, "add", "-A")
    git(repo.root, "commit", "-q", "-m", "changes")
    wt = repo.add_worktree(repo.plait_dir() / "worktrees" / "r1" / "t", "plait/r1/t", "HEAD")
    git(repo.root, "checkout", "-q", "-b", "other")
    (repo.root / "CHANGES.md").write_text("start\nfrom elsewhere\n")
    git(repo.root, "commit", "-q", "-a", "-m", "other")
    (wt.path / "CHANGES.md").write_text("start\nfrom the agent\n")
    assert wt.merge_in(git(repo.root, "rev-parse", "other"), "bring it in") == []
    assert (wt.path / "CHANGES.md").read_text() == "start\nfrom the agent\nfrom elsewhere\n"
    (wt.path / "README.md").write_text("conflict\n")
    git(repo.root, "checkout", "-q", "-b", "third", "main")
    (repo.root / "README.md").write_text("elsewhere\n")
    git(repo.root, "commit", "-q", "-a", "-m", "third")
    head = wt.head()
    assert wt.merge_in(git(repo.root, "rev-parse", "third"), "bring it in") == ["README.md"]
    assert wt.head() == head and (wt.path / "README.md").read_text() == "conflict\n"  # left as it was
