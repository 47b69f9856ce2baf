"""`plait integrate` and `plait apply` end to end: the real CLI on real branches of a real repository."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import Plait, git

GREET = 'def greet(name):\n    return "hello " + name\n'
TWO = GREET + '\n\ndef part(name):\n    return "bye " + name\n'
PYTEST = f"{sys.executable} -m pytest -q -p no:cacheprovider"


def branch(root: Path, name: str, files: dict[str, str], parent: str = "main") -> str:
    """Commit `files` on top of `parent` as branch `name`, without touching the checkout."""
    env = {**os.environ, "GIT_INDEX_FILE": str(root / ".git" / "test-index")}

    def run(*args: str, stdin: str | None = None) -> str:
        done = subprocess.run(["git", *args], cwd=root, env=env, input=stdin, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    run("read-tree", parent)
    for path, text in files.items():
        blob = run("hash-object", "-w", "--stdin", stdin=text)
        run("update-index", "--add", "--cacheinfo", f"100644,{blob},{path}")
    sha = run("commit-tree", run("write-tree"), "-p", parent, "-m", f"{name}: change {', '.join(files)}")
    run("update-ref", f"refs/heads/{name}", sha)
    return sha


def state(root: Path) -> tuple[str, str, str]:
    return (
        git(root, "status", "--porcelain", "--untracked-files=all"),
        git(root, "rev-parse", "HEAD"),
        git(root, "branch", "--show-current"),
    )


@pytest.fixture
def two_functions(project: Path) -> Path:
    git(project, "commit", "-qam", "two functions", "--allow-empty")
    (project / "greet.py").write_text(TWO)
    git(project, "commit", "-qam", "add part")
    return project


def test_integrate_merges_edits_to_different_functions_and_leaves_the_checkout_alone(
    plait: Plait, two_functions: Path
) -> None:
    root = two_functions
    branch(root, "feat-a", {"greet.py": TWO.replace('"hello "', '"hello, "')})
    branch(root, "feat-b", {"greet.py": TWO.replace('"bye "', '"goodbye "')})
    before = state(root)
    result = plait("integrate", "feat-a", "feat-b", "--no-llm", "--json", cwd=root)
    assert result.code == 0, result.err
    data = result.json()
    assert data["branch"] == f"plait/{data['run_id']}/integration" and data["run_id"].startswith("integrate-")
    assert [(b["branch"], b["outcome"], b["resolutions"]) for b in data["branches"]] == [
        ("feat-a", "integrated", []),
        ("feat-b", "integrated", []),
    ]
    merged = git(root, "show", f"{data['branch']}:greet.py")
    assert '"hello, "' in merged and '"goodbye "' in merged
    assert git(root, "rev-parse", data["branch"]) == data["head"]
    assert state(root) == before and (root / "greet.py").read_text() == TWO
    assert not list((root / ".git" / "plait" / "worktrees").glob("*/_integration"))


def _conflicting(root: Path) -> None:
    branch(root, "comma", {"greet.py": GREET.replace('"hello "', '"hello, "')})
    branch(root, "shout", {"greet.py": GREET.replace('"hello "', '"HELLO "')})


def test_integrate_without_the_llm_ejects_what_it_cannot_resolve(plait: Plait, project: Path) -> None:
    _conflicting(project)
    result = plait("integrate", "comma", "shout", "--no-llm", "--json", cwd=project)
    assert result.code == 1, result.err
    comma, shout = result.json()["branches"]
    assert comma["outcome"] == "integrated"
    assert shout["outcome"] == "ejected" and shout["stage"] == "merge" and shout["conflicts"] == ["greet.py"]
    human = plait("integrate", "comma", "shout", "--no-llm", cwd=project)
    assert "ejected shout: conflicts no rung could resolve in greet.py" in human.out


def test_integrate_resolves_a_conflict_with_the_llm_rung(plait: Plait, project: Path, tmp_path: Path) -> None:
    _conflicting(project)
    resolved = GREET.replace('"hello "', '"HELLO, "')
    script = tmp_path / "resolver.yaml"
    script.write_text(
        json.dumps({"turns": [{"tool_calls": [{"name": "resolve", "arguments": {"content": resolved}}]}]})
    )
    result = plait("integrate", "comma", "shout", "--model", f"scripted:{script}", "--json", cwd=project)
    assert result.code == 0, result.err
    data = result.json()
    rungs = [(r["path"], r["rung"]) for r in data["branches"][1]["resolutions"]]
    assert rungs == [("greet.py", "llm")]
    assert git(project, "show", f"{data['branch']}:greet.py") == resolved.rstrip("\n")
    log = plait("show", data["run_id"], "--json", cwd=project).out
    steps = [json.loads(line) for line in log.splitlines() if '"kind":"merge"' in line.replace(" ", "")]
    assert ("shout", "llm", "resolved") in [(s["task"], s["rung"], s["outcome"]) for s in steps]


def test_integrate_ejects_the_branch_that_breaks_the_tests(plait: Plait, project: Path) -> None:
    (project / "test_greet.py").write_text(
        "from greet import greet\n\n\ndef test_greet():\n    assert greet('a') == 'hello a'\n"
    )
    git(project, "add", "-A")
    git(project, "commit", "-qm", "tests")
    branch(project, "docs", {"README.md": "hello\n"})
    branch(project, "breaks", {"greet.py": GREET.replace('"hello "', '"hi "')})
    branch(project, "more", {"extra.py": "X = 1\n"})
    result = plait("integrate", "docs", "breaks", "more", "--no-llm", "--verify", PYTEST, "--json", cwd=project)
    assert result.code == 1, result.err
    outcomes = {b["branch"]: (b["outcome"], b.get("stage")) for b in result.json()["branches"]}
    assert outcomes == {"docs": ("integrated", None), "breaks": ("ejected", "verify"), "more": ("integrated", None)}


def _integrated(plait: Plait, root: Path) -> dict[str, str]:
    branch(root, "feat", {"greet.py": GREET.replace('"hello "', '"hello, "'), "new.py": "X = 1\n"})
    result = plait("integrate", "feat", "--no-llm", "--json", cwd=root)
    assert result.code == 0, result.err
    data: dict[str, str] = result.json()
    return data


def test_apply_fast_forwards_the_current_branch(plait: Plait, project: Path) -> None:
    data = _integrated(plait, project)
    (project / "notes.txt").write_text("mine\n")
    result = plait("apply", data["run_id"], cwd=project)
    assert result.code == 0, result.err
    assert "fast-forward" in result.out
    assert git(project, "rev-parse", "HEAD") == data["head"] and git(project, "branch", "--show-current") == "main"
    assert '"hello, "' in (project / "greet.py").read_text() and (project / "new.py").exists()
    assert (project / "notes.txt").read_text() == "mine\n"
    again = plait("apply", data["run_id"], cwd=project)
    assert again.code == 0 and "nothing to apply" in again.out


def test_apply_makes_a_merge_commit_when_the_branch_moved_on(plait: Plait, project: Path) -> None:
    data = _integrated(plait, project)
    (project / "other.txt").write_text("meanwhile\n")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "meanwhile")
    moved = git(project, "rev-parse", "HEAD")
    result = plait("apply", data["run_id"][:20], cwd=project)
    assert result.code == 0, result.err
    assert "merge" in result.out
    assert git(project, "rev-parse", "HEAD^1", "HEAD^2").split() == [moved, data["head"]]
    assert (project / "other.txt").exists() and (project / "new.py").exists()
    assert git(project, "status", "--porcelain") == ""


def test_apply_refuses_when_local_changes_are_in_the_way(plait: Plait, project: Path) -> None:
    data = _integrated(plait, project)
    (project / "greet.py").write_text(GREET + "# my work in progress\n")
    before = state(project)
    result = plait("apply", data["run_id"], cwd=project)
    assert result.code == 3
    assert result.err.strip().count("\n") == 0 and "uncommitted changes in greet.py" in result.err
    assert state(project) == before and "my work in progress" in (project / "greet.py").read_text()


def test_apply_brings_in_a_single_agent_run(plait: Plait, project: Path, tmp_path: Path) -> None:
    script = tmp_path / "agent.yaml"
    write = {"name": "write_file", "arguments": {"path": "hello.txt", "content": "hi\n"}}
    finish = {"name": "finish", "arguments": {"summary": "wrote hello.txt"}}
    script.write_text(json.dumps({"turns": [{"tool_calls": [write]}, {"tool_calls": [finish]}]}))
    run = plait("run", "write hello", "--single", "--model", f"scripted:{script}", "--json", "--quiet", cwd=project)
    assert run.code == 0, run.err
    run_id = run.json()["run_id"]
    result = plait("apply", run_id, cwd=project)
    assert result.code == 0, result.err
    assert (project / "hello.txt").read_text() == "hi\n" and git(project, "rev-parse", f"plait/{run_id}/main") == git(
        project, "rev-parse", "HEAD"
    )
