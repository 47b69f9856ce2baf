"""The gate on a combined commit: parse, then the cross-branch semantic check, then the verify command.

Each stage is recorded as a `GateChecked` event; the first that fails ends the check. A tree that was
checked before is not checked again: the same tree gives the same answer.

The verify command runs the tests agents wrote, so it runs as their commands do: give the gate a sandboxed
runner (`runner_for`, called with the integration worktree's path). Without one it runs unconfined.
"""

from __future__ import annotations

import asyncio
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import Literal

from plait.events.store import EventStore
from plait.events.types import GateChecked
from plait.reconcile._syntax import CHECKED_SUFFIXES, conflict_markers, syntax_error
from plait.reconcile._trees import changed_paths, read_blobs, tree_paths
from plait.reconcile.semantic import Breakage, attribute, find_breakage
from plait.reconcile.verify import KEEP_ON_CLEAN, IntegrationWorktree, detect_verify_command
from plait.workspace import CommandRunner, LocalRunner, Repo, cap_output

__all__ = ["Gate", "GateResult", "Stage"]

Stage = Literal["parse", "semantic", "verify"]

_PYTEST_NOTHING_COLLECTED = 5
_NOT_RUN = 126
"""The exit status of a command the sandbox refused or could not confine (or that cannot execute)."""
_MAX_HINTED = 5


@dataclass(frozen=True)
class GateResult:
    """Whether a commit passed; `stage` is the one that failed (or the last one run), `output` says why.

    `culprit_hint` names the tasks (of those given to `check`) that changed the files at fault, when known.
    """

    passed: bool
    stage: Stage
    output: str
    culprit_hint: tuple[str, ...] = ()
    commit: str = ""


def _default_python(repo: Repo) -> str:
    for candidate in (repo.root / ".venv" / "bin" / "python", repo.root / "venv" / "bin" / "python"):
        if candidate.exists():
            return str(candidate)
    return "python3" if shutil.which("python3") else "python"


class Gate:
    """Checks combined commits of one run against its base, in one integration worktree made on first need."""

    def __init__(
        self,
        repo: Repo,
        *,
        base: str,
        store: EventStore | None = None,
        run_id: str = "",
        verify_command: str | None = None,
        detect: bool = True,
        runner: CommandRunner | None = None,
        runner_for: Callable[[Path], CommandRunner] | None = None,
        worktree: Path | None = None,
        python: str | None = None,
        timeout: float = 1800.0,
        output_limit: int = 16_000,
        keep: Sequence[str] = KEEP_ON_CLEAN,
    ) -> None:
        """`verify_command` wins over detection; `detect=False` with no command skips the verify stage.

        `runner_for` makes the runner of the verify command for the integration worktree, on first need; the gate
        closes it in `close`. A `runner` given instead is the caller's to close; with neither, commands run
        unconfined (`LocalRunner`).
        """
        self.repo, self.base, self.store, self.run_id = repo, base, store, run_id
        self.verify_command, self.detect = verify_command, detect
        path = worktree or repo.plait_dir() / "worktrees" / (run_id or "gate") / "_integration"
        self.worktree = IntegrationWorktree(repo, path, keep=keep)
        self._runner, self._runner_for = runner, runner_for
        self._made: CommandRunner | None = None
        self.python = python or _default_python(repo)
        self.timeout, self.output_limit = timeout, output_limit
        self.runs = 0
        """Checks made (a cached answer is not counted)."""
        self._seen: dict[str, GateResult] = {}
        self.base_fails: bool | None = None
        """Whether the verify command fails at the base too (then its failures are not held against a commit)."""
        self._lock = asyncio.Lock()

    async def check(
        self, commit: str, *, tasks: Sequence[str] = (), branches: Mapping[str, str] | None = None
    ) -> GateResult:
        """Run the stages on `commit`; `tasks` label the events, `branches` (task -> commit) feed the hint."""
        async with self._lock:
            tree = self.repo.git("rev-parse", f"{commit}^{{tree}}").strip()
            if tree in self._seen:
                return replace(self._seen[tree], commit=commit)
            self.runs += 1
            result = await self._stages(commit, list(tasks), dict(branches or {}))
            self._seen[tree] = result
            return result

    async def _stages(self, commit: str, tasks: list[str], branches: dict[str, str]) -> GateResult:
        started = time.monotonic()
        problems, files = await asyncio.to_thread(self._parse, commit)
        hint = await asyncio.to_thread(self._hint_files, files, branches)
        if not self._record(commit, "parse", not problems, tasks, problems, started):
            return GateResult(False, "parse", problems, hint, commit)
        started = time.monotonic()
        breakage = await asyncio.to_thread(find_breakage, self.repo, self.base, commit)
        output = "\n".join(str(b) for b in breakage)
        if not self._record(commit, "semantic", not breakage, tasks, output, started):
            hint = await asyncio.to_thread(self._hint_breakage, breakage, branches)
            return GateResult(False, "semantic", output, hint, commit)
        started = time.monotonic()
        passed, output = await self._verify(commit)
        self._record(commit, "verify", passed, tasks, output, started)
        return GateResult(passed, "verify", output, (), commit)

    def _record(self, commit: str, stage: Stage, passed: bool, tasks: list[str], output: str, started: float) -> bool:
        if self.store is not None:
            self.store.append(
                GateChecked(
                    run_id=self.run_id,
                    commit=commit,
                    stage=stage,
                    passed=passed,
                    tasks=tasks,
                    output=cap_output(output, self.output_limit),
                    duration_s=round(time.monotonic() - started, 3),
                )
            )
        return passed

    def _parse(self, commit: str) -> tuple[str, list[str]]:
        """Problems found in the files changed since the base, and the files they are in."""
        changed = [p for p, status in changed_paths(self.repo, self.base, commit).items() if status != "D"]
        now = read_blobs(self.repo, commit, changed)
        before = read_blobs(self.repo, self.base, changed)
        problems: list[str] = []
        bad: list[str] = []
        for path in changed:
            text, old = now.get(path), before.get(path)
            if text is None or "\0" in text:
                continue
            error = None
            if PurePosixPath(path).suffix.lower() in CHECKED_SUFFIXES:
                error = syntax_error(path, text)
                if error and old is not None and syntax_error(path, old):
                    error = None  # it did not parse at the base either: not this merge's doing
            if error is None and conflict_markers(text, old):
                error = f"{path}: conflict markers left in the file"
            if error:
                problems.append(error)
                bad.append(path)
        return "\n".join(problems), bad

    def _hint_files(self, files: Sequence[str], branches: Mapping[str, str]) -> tuple[str, ...]:
        if not files or not branches:
            return ()
        return tuple(
            task for task, sha in branches.items() if set(files) & set(changed_paths(self.repo, self.base, sha))
        )

    def _hint_breakage(self, breakage: Sequence[Breakage], branches: Mapping[str, str]) -> tuple[str, ...]:
        found: dict[str, None] = {}
        for item in breakage[:_MAX_HINTED]:
            found.update(dict.fromkeys(attribute(self.repo, self.base, item, branches)))
        return tuple(task for task in branches if task in found)

    def command_for(self, commit: str) -> str | None:
        """The verify command for `commit`: the configured one, else the one detected in its tree."""
        if self.verify_command or not self.detect:
            return self.verify_command
        files = set(tree_paths(self.repo, commit))
        cache: dict[str, str | None] = {}

        def read(path: str) -> str | None:
            if path not in cache:
                cache.update(read_blobs(self.repo, commit, [path]))
            return cache[path]

        return detect_verify_command(files, read, python=self.python)

    @property
    def runner(self) -> CommandRunner:
        """The runner of the verify command (made by `runner_for` on first use)."""
        if self._runner is None:
            if self._runner_for is None:
                self._runner = LocalRunner()
            else:
                self._runner = self._made = self._runner_for(self.worktree.path)
        return self._runner

    async def _run_verify(self, commit: str, command: str) -> tuple[bool, str, bool]:
        """Whether `command` passed on `commit`, its output, and whether it ran at all."""
        cwd = await asyncio.to_thread(self.worktree.checkout, commit)
        result = await self.runner.run(command, cwd=cwd, timeout=self.timeout, output_limit=self.output_limit)
        detected = command != self.verify_command and "pytest" in command
        ok = result.exit_code == 0 or (detected and result.exit_code == _PYTEST_NOTHING_COLLECTED)
        status = "timed out" if result.timed_out else f"exit {result.exit_code}"
        return ok, f"$ {command}\n[{status}]\n{result.output}", result.exit_code != _NOT_RUN

    async def _verify(self, commit: str) -> tuple[bool, str]:
        command = await asyncio.to_thread(self.command_for, commit)
        if not command:
            return True, "skipped: no verify command configured or detected"
        ok, output, ran = await self._run_verify(commit, command)
        if not ran:
            return False, "the verify command did not run, so nothing is verified\n" + output
        if ok or commit == self.base:
            return ok, output
        if self.base_fails is None:
            started = time.monotonic()
            base_ok, base_output, base_ran = await self._run_verify(self.base, command)
            self.base_fails = not base_ok if base_ran else None  # a refusal says nothing of the base
            self._record(self.base, "verify", base_ok, [], "the base, for comparison\n" + base_output, started)
        if self.base_fails:
            return True, "not held against it: the verify command fails at the base commit too\n" + output
        return False, output

    def close(self) -> None:
        """Remove the integration worktree, if one was made, and close the runner the gate made."""
        self.worktree.remove()
        made, self._made = self._made, None
        if made is not None:
            self._runner = None
            close = getattr(made, "close", None)
            if callable(close):
                close()
