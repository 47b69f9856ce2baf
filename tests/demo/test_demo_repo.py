"""The demo's bundled project, task and script must agree.

These tests do not use plait's agent. They replay `script.yaml` against a copy of the
bundled project with small stand-ins for the agent's tools (exact search/replace, real
`pytest` and `git` runs), and check every `expect` of the script against what the
stand-ins return. If someone changes the project, the test names the turn that drifted.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

import plait
from plait.models.scripted import ScriptedModel

DEMO = Path(plait.__file__).parent / "demo"
REPO = DEMO / "repo"
SCRIPT = DEMO / "script.yaml"
TASK = DEMO / "task.txt"

TOOLS = {
    "read_file": {"path", "start_line", "end_line"},
    "list_files": {"pattern", "path"},
    "search": {"pattern", "path", "glob", "ignore_case"},
    "edit_file": {"path", "old", "new", "replace_all"},
    "write_file": {"path", "content"},
    "run": {"command", "timeout"},
    "finish": {"summary"},
}
_SKIPPED_DIRS = {".git", "__pycache__", ".pytest_cache"}
_IDENTITY = {
    "GIT_AUTHOR_NAME": "demo",
    "GIT_AUTHOR_EMAIL": "demo@example.invalid",
    "GIT_COMMITTER_NAME": "demo",
    "GIT_COMMITTER_EMAIL": "demo@example.invalid",
}


def _env() -> dict[str, str]:
    """This environment, with the interpreter running the tests first on PATH, so `python` has pytest."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return {**env, **_IDENTITY}


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "tally"
    shutil.copytree(REPO, root, ignore=shutil.ignore_patterns(*_SKIPPED_DIRS, "*.pyc"))
    return root


def _git_init(root: Path) -> None:
    for args in (["init", "-q"], ["add", "-A"], ["-c", "commit.gpgsign=false", "commit", "-q", "-m", "initial"]):
        subprocess.run(["git", *args], cwd=root, env=_env(), check=True, capture_output=True)


def _sh(command: str, root: Path) -> str:
    """What the `run` tool shows: the exit code, then stdout and stderr together."""
    done = subprocess.run(
        ["bash", "-c", command],
        cwd=root,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=60,
    )
    return f"exit code {done.returncode}\n{done.stdout}"


def _passed(output: str) -> int:
    found = re.search(r"(\d+) passed", output)
    assert found, f"no tests passed:\n{output}"
    return int(found.group(1))


def _files(root: Path, base: Path) -> list[Path]:
    return sorted(p for p in base.rglob("*") if p.is_file() and not _SKIPPED_DIRS & set(p.relative_to(root).parts))


@dataclass
class Replay:
    """Stand-ins for the agent's tools, working on `root`."""

    root: Path
    runs: list[tuple[str, str]] = field(default_factory=list)
    """(command, what the run tool showed) of each `run` call."""
    written: list[str] = field(default_factory=list)
    summary: str | None = None

    def call(self, name: str, arguments: dict[str, Any]) -> str:
        tool: Callable[..., str] = getattr(self, name)
        return tool(**arguments)

    def read_file(self, path: str, start_line: int | None = None, end_line: int | None = None) -> str:
        lines = (self.root / path).read_text().splitlines()
        first = start_line or 1
        last = end_line or len(lines)
        return "\n".join(f"{n:>4}| {lines[n - 1]}" for n in range(first, last + 1))

    def list_files(self, pattern: str = "**/*", path: str = ".") -> str:
        base = self.root / path
        files = _files(self.root, base)
        if "/" in pattern:
            matched = set(base.glob(pattern))
            files = [f for f in files if f in matched]
        else:
            files = [f for f in files if f.match(pattern)]
        return "\n".join(f.relative_to(self.root).as_posix() for f in files)

    def search(self, pattern: str, path: str = ".", glob: str | None = None, ignore_case: bool = False) -> str:
        regex = re.compile(pattern, re.IGNORECASE if ignore_case else 0)
        hits = []
        for file in _files(self.root, self.root / path):
            if glob and not file.match(glob):
                continue
            for number, line in enumerate(file.read_text().splitlines(), start=1):
                if regex.search(line):
                    hits.append(f"{file.relative_to(self.root).as_posix()}:{number}: {line}")
        return "\n".join(hits)

    def edit_file(self, path: str, old: str, new: str, replace_all: bool = False) -> str:
        target = self.root / path
        text = target.read_text()
        count = text.count(old)
        assert count >= 1, f"edit_file: old not found in {path}:\n{old}"
        assert count == 1 or replace_all, f"edit_file: old occurs {count} times in {path}:\n{old}"
        target.write_text(text.replace(old, new))
        return f"edited {path}"

    def write_file(self, path: str, content: str) -> str:
        target = self.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content)
        self.written.append(path)
        return f"wrote {path}"

    def run(self, command: str, timeout: float | None = None) -> str:
        output = _sh(command, self.root)
        self.runs.append((command, output))
        return output

    def finish(self, summary: str) -> str:
        self.summary = summary
        return "finished."


def _turns() -> list[dict[str, Any]]:
    data = yaml.safe_load(SCRIPT.read_text())
    turns: list[dict[str, Any]] = data["turns"]
    return turns


def _replay(root: Path) -> Replay:
    """Play every turn of the script; each `expect` must be in the last result of the turn before."""
    replay = Replay(root)
    last = ""
    for number, turn in enumerate(_turns(), start=1):
        expect = turn.get("expect")
        assert expect is None or expect in last, f"turn {number} expects {expect!r} in:\n{last}"
        for call in turn.get("tool_calls", []):
            assert replay.summary is None, f"turn {number} calls {call['name']} after finish"
            last = replay.call(call["name"], call.get("arguments", {}))
    return replay


def test_script_is_valid_for_the_scripted_model() -> None:
    model = ScriptedModel.from_file(SCRIPT)
    assert model.turns
    for number, turn in enumerate(model.turns, start=1):
        assert turn.text, f"turn {number} has no text"
        for call in turn.tool_calls:
            assert call.name in TOOLS, f"turn {number} calls unknown tool {call.name}"
            assert isinstance(call.arguments, dict)
            assert set(call.arguments) <= TOOLS[call.name], f"turn {number}: bad arguments for {call.name}"
    assert [c.name for c in model.turns[-1].tool_calls] == ["finish"]
    assert TASK.read_text().strip()


def test_bundled_project_is_tidy() -> None:
    assert not (REPO / ".git").exists()
    assert (REPO / "README.md").is_file()
    assert (REPO / "pyproject.toml").is_file()
    assert len(list((REPO / "tally").glob("*.py"))) >= 5
    assert len(list((REPO / "tests").glob("test_*.py"))) >= 3


def test_bundled_project_tests_pass(tmp_path: Path) -> None:
    output = _sh("python -m pytest -q -p no:cacheprovider", _copy(tmp_path))
    assert output.startswith("exit code 0\n"), output
    assert _passed(output) > 0


def test_script_does_the_task(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    before = _passed(_sh("python -m pytest -q -p no:cacheprovider", root))
    _git_init(root)

    replay = _replay(root)

    assert replay.summary, "the script never finishes"
    assert "tests/test_currency.py" in replay.written
    first, *_, final = [output for command, output in replay.runs if "pytest" in command]
    # The story of the script: the first run fails for two reasons the agent then fixes.
    assert "FAILED tests/test_report.py::test_report" in first, first
    assert "FAILED tests/test_currency.py::test_saved_ledger_keeps_currencies" in first, first
    assert final.startswith("exit code 0\n"), final
    verbose = _sh("python -m pytest -v -p no:cacheprovider", root)
    assert verbose.startswith("exit code 0\n"), verbose
    assert "tests/test_currency.py::test_saved_ledger_keeps_currencies PASSED" in verbose
    after = _passed(verbose)
    assert after > before
    assert f"{after} passed" in final
    assert f"{after} tests pass" in replay.summary


@pytest.mark.parametrize("tool", ["edit_file", "write_file", "run", "read_file", "search"])
def test_script_uses_each_tool(tool: str) -> None:
    assert any(call["name"] == tool for turn in _turns() for call in turn.get("tool_calls", []))
