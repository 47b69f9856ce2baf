"""plait starts git in one place, `plait.workspace.gitcall`, and its hardening holds in both of its modes.

The first tests read plait's code: no module but the git layer hands an argv starting with `git` to anything that
starts a process. The others arm a repository's own `.git/config` and hooks with commands that touch a marker
file, and run git through the layer in bytes mode: no marker may appear.
"""

from __future__ import annotations

import ast
import shlex
import subprocess
from pathlib import Path

import pytest

from plait.workspace import gitcall
from plait.workspace.gitcall import run, run_bytes

ROOT = Path(__file__).resolve().parents[2] / "src" / "plait"
LAYER = ROOT / "workspace" / "gitcall.py"
SPAWNERS = frozenset(
    {
        "run",
        "Popen",
        "call",
        "check_call",
        "check_output",
        "getoutput",
        "getstatusoutput",
        "create_subprocess_exec",
        "create_subprocess_shell",
        "system",
        "popen",
        "execv",
        "execvp",
        "execvpe",
        "execl",
        "execlp",
        "spawnv",
        "spawnvp",
        "posix_spawn",
        "posix_spawnp",
    }
)
"""Names of the functions (of subprocess, asyncio, os) that start a process."""


def _starts_with_git(node: ast.expr, lists: dict[str, ast.expr]) -> bool:
    """Whether an argument is, or names a list literal that is, a command line whose first word is git."""
    if isinstance(node, ast.Name) and node.id in lists:
        node = lists[node.id]
    if _is_git_path(node):
        return True
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value == "git" or node.value.startswith("git ")
    if isinstance(node, ast.List | ast.Tuple) and node.elts:
        return _starts_with_git(node.elts[0], {})
    if isinstance(node, ast.BinOp):  # ["git"] + args
        return _starts_with_git(node.left, lists)
    return False


def git_spawns(path: Path) -> list[int]:
    """Lines of `path` that start git themselves: a process-starting call whose command begins with `git`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    lists = {
        target.id: node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    found: list[int] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        if name in SPAWNERS and node.args and _starts_with_git(node.args[0], lists):
            found.append(node.lineno)
    return found


def _is_git_path(node: ast.expr) -> bool:
    """A `shutil.which("git")`: the program's path, handed to the spawn as its first word."""
    return (
        isinstance(node, ast.Call)
        and getattr(node.func, "attr", getattr(node.func, "id", "")) == "which"
        and bool(node.args)
        and isinstance(node.args[0], ast.Constant)
        and node.args[0].value == "git"
    )


def private_uses(path: Path) -> list[int]:
    """Lines of `path` that use more of the layer than its public names: its argv and environment would let a
    module start git itself, hardened or not."""
    public = set(gitcall.__all__)
    found: list[int] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("gitcall"):
            found += [node.lineno] if any(a.name not in public for a in node.names) else []
        elif isinstance(node, ast.Attribute) and getattr(node.value, "id", "") == "gitcall" and node.attr not in public:
            found.append(node.lineno)
    return found


def test_no_module_but_the_git_layer_starts_git() -> None:
    found = [
        f"{path.relative_to(ROOT.parent)}:{line}"
        for path in sorted(ROOT.rglob("*.py"))
        if path != LAYER
        for line in git_spawns(path) + private_uses(path)
    ]
    assert not found, "git started outside plait.workspace.gitcall (use its run or run_bytes): " + ", ".join(found)


def test_every_form_of_starting_git_is_caught(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "import asyncio, os, shutil, subprocess\n"
        "from subprocess import Popen\n"
        "subprocess.run(['git', 'status'])\n"
        "Popen(('git', 'log'))\n"
        "argv = ['git', 'diff']\n"
        "subprocess.check_output(argv)\n"
        "subprocess.run(['git'] + rest)\n"
        "asyncio.create_subprocess_exec('git', 'show')\n"
        "os.system('git gc')\n"
        "subprocess.run([shutil.which('git'), 'fetch'])\n"
        "os.execvp(shutil.which('git'), args)\n"
        "subprocess.run(['gh', 'pr', 'create'])\n"
        "shlex.join(['git', 'push'])\n",
        encoding="utf-8",
    )
    assert git_spawns(module) == [3, 4, 6, 7, 8, 9, 10, 11]


def test_reaching_past_the_layers_public_names_is_caught(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "from plait.workspace import gitcall\n"
        "from plait.workspace.gitcall import GitError, _argv\n"
        "subprocess.run(gitcall._argv(args), env=gitcall._environment())\n"
        "gitcall.run_bytes(args, root)\n",
        encoding="utf-8",
    )
    assert private_uses(module) == [2, 3, 3]


@pytest.fixture
def armed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A repository with a commit and a changed file, whose own config and hooks run commands touching markers."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    repo, marks = tmp_path / "repo", tmp_path / "marks"
    repo.mkdir()
    marks.mkdir()

    def git(*args: str) -> None:
        subprocess.run(["git", "-c", "core.hooksPath=/dev/null", *args], cwd=repo, check=True, capture_output=True)

    git("init", "-q")
    (repo / "a.txt").write_text("one\n")
    git("add", "a.txt")
    git("-c", "user.name=T", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "one")
    (repo / "a.txt").write_text("two\n")
    (repo / ".gitattributes").write_text("* diff=x\n")

    def touch(name: str) -> str:
        return f"touch {shlex.quote(str(marks / name))}"

    config = repo / ".git" / "config"
    for key, value in {
        "core.fsmonitor": f"{touch('fsmonitor')}; false",
        "core.pager": f"{touch('pager')}; cat",
        "diff.external": touch("diff-external"),
        "diff.x.textconv": f"{touch('textconv')}; cat",
    }.items():
        subprocess.run(["git", "config", "--file", str(config), key, value], check=True)
    for hook in ("post-index-change", "reference-transaction", "post-checkout"):
        script = repo / ".git" / "hooks" / hook
        script.write_text(f"#!/bin/sh\n{touch(hook)}\n")
        script.chmod(0o755)
    return repo, marks


def _exercise(repo: Path, mode: str) -> None:
    """git commands that would run each armed command, through the layer in one mode."""
    commands = (
        ("diff", "HEAD"),
        ("log", "-p", "-1"),
        ("status", "--porcelain"),
        ("update-index", "--refresh"),
        ("read-tree", "HEAD"),
        ("update-ref", "refs/heads/other", "HEAD"),
        ("checkout", "-q", "other"),
    )
    for args in commands:
        done = run_bytes(args, repo) if mode == "bytes" else run(args, repo)
        assert done.returncode in (0, 1), (args, done.stderr)


def test_the_armed_commands_would_run_under_a_bare_git(armed: tuple[Path, Path]) -> None:
    repo, marks = armed
    subprocess.run(["git", "diff", "HEAD"], cwd=repo, capture_output=True, check=False)
    subprocess.run(["git", "update-ref", "refs/heads/x", "HEAD"], cwd=repo, capture_output=True, check=False)
    assert {"fsmonitor", "diff-external", "reference-transaction"} <= {p.name for p in marks.iterdir()}


@pytest.mark.parametrize("mode", ["bytes", "text"])
def test_git_through_the_layer_runs_nothing_the_repository_armed(armed: tuple[Path, Path], mode: str) -> None:
    repo, marks = armed
    _exercise(repo, mode)
    assert sorted(p.name for p in marks.iterdir()) == []
