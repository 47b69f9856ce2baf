"""The gate on a combined commit: parse, then the cross-branch semantic check, then the verify command.

Each stage is recorded as a `GateChecked` event; the first that fails ends the check. A tree that was
checked before is not checked again: the same tree, landing on the same commit, gives the same answer.

The verify stage judges a commit by the failures it introduces where it lands (`against`: the integration
head it is merged onto), test by test when the command's output names its tests (pytest, unittest), by
exit status otherwise; what is held against it, and what a plan may defer, is told in `_judge`. Each tree
is tested once: the landing point's run, made when it was itself checked, is the comparison.

The verify command runs the tests agents wrote, so it runs as their commands do: give the gate a sandboxed
runner (`runner_for`, called with the integration worktree's path). Without one it runs unconfined.
"""

from __future__ import annotations

import asyncio
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from plait.events.runlog import RunLog
from plait.events.types import GateChecked
from plait.reconcile._judge import ALL, STRICT, Allowance, Verdict, by_exit_status, by_test
from plait.reconcile._parsecheck import parse_findings
from plait.reconcile._sources import Sources
from plait.reconcile._testrun import Report, deselecting, read_report
from plait.reconcile._trees import changed_paths, read_blobs, tree_paths
from plait.reconcile.semantic import Breakage, attribute, find_breakage
from plait.reconcile.verify import DETECTED_FROM, KEEP_ON_CLEAN, IntegrationWorktree, detect_verify_command
from plait.workspace import LocalShell, Repo, Shell, cap_output

__all__ = ["Allowance", "Gate", "GateResult", "Stage"]

Stage = Literal["parse", "semantic", "verify"]

_PYTEST_NOTHING_COLLECTED = 5
_NOT_RUN = 126
"""The exit status of a command the sandbox refused or could not confine (or that cannot execute)."""
_MAX_HINTED = 5
_MAX_RERUNS = 6
"""Runs again of a suite stopped at its first failures (`-x`), each with the failures known so far left out."""


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
    failing: tuple[str, ...] = ()
    """The tests held against it (`*`: the verify command as a whole)."""
    deferred: tuple[str, ...] = ()
    """Tests it broke that the plan leaves to the tasks built on it (`Allowance.defer`)."""


@dataclass(frozen=True)
class _Run:
    """The verify command on one tree: its output (reruns after it), exit, report, and whether it ran at all."""

    ok: bool
    output: str
    ran: bool = True
    report: Report | None = None


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
        log: RunLog | None = None,
        verify_command: str | None = None,
        detect: bool = True,
        runner: Shell | None = None,
        runner_for: Callable[[Path], Shell] | None = None,
        worktree: Path | None = None,
        python: str | None = None,
        timeout: float = 1800.0,
        output_limit: int = 16_000,
        keep: Sequence[str] = KEEP_ON_CLEAN,
    ) -> None:
        """`verify_command` wins over detection; `detect=False` with no command skips the verify stage.

        `runner_for` makes the runner of the verify command for the integration worktree, on first need; the gate
        closes it in `close`. A `runner` given instead is the caller's to close; with neither, commands run
        unconfined (`LocalShell`).
        """
        self.repo, self.base, self.log = repo, base, log
        self.verify_command, self.detect = verify_command, detect
        where = log.run_id if log is not None and log.run_id else "gate"
        path = worktree or repo.plait_dir() / "worktrees" / where / "_integration"
        self.worktree = IntegrationWorktree(repo, path, keep=keep)
        self._runner, self._runner_for = runner, runner_for
        self._made: Shell | None = None
        self.python = python or _default_python(repo)
        self.timeout, self.output_limit = timeout, output_limit
        self.runs = 0
        """Checks made (a cached answer is not counted)."""
        self._trees: dict[str, str] = {}
        self.sources = Sources(repo)
        """The blobs the parse and semantic stages read, each read and parsed once for the life of the gate."""
        self._seen: dict[tuple[str, str, Allowance], GateResult] = {}
        self._runs: dict[tuple[str, str], _Run] = {}
        self.base_fails: bool | None = None
        """Whether the verify command fails at the base (then the failures it shares are not held against a commit)."""
        self._lock = asyncio.Lock()

    async def check(
        self,
        commit: str,
        *,
        tasks: Sequence[str] = (),
        branches: Mapping[str, str] | None = None,
        against: str | None = None,
        allow: Allowance = STRICT,
    ) -> GateResult:
        """Run the stages on `commit`, landing on `against` (the base by default), under the plan's `allow`.

        `tasks` label the events, `branches` (task -> commit) feed the hint.
        """
        async with self._lock:
            against = against or self.base
            await asyncio.to_thread(self._learn_trees, commit, against)
            key = (self._tree(commit), self._tree(against), allow)
            if key in self._seen:
                return replace(self._seen[key], commit=commit)
            self.runs += 1
            result = await self._stages(commit, list(tasks), dict(branches or {}), against, allow)
            self._seen[key] = result
            return result

    def share_worktree(self) -> None:
        """Verify in the repository's kept integration worktree, moved from run to run instead of made anew (a run
        that finds another using it makes its own, as without this)."""
        self.worktree.shared = self.repo.plait_dir() / "worktrees" / "_gate" / "integration"

    def _learn_trees(self, *commits: str) -> None:
        """The trees of `commits` not known yet, asked of git in one call."""
        wanted = [c for c in dict.fromkeys(commits) if c not in self._trees]
        if wanted:
            found = self.repo.git("rev-parse", *(f"{c}^{{tree}}" for c in wanted)).split()
            self._trees.update(zip(wanted, found, strict=True))

    def _tree(self, commit: str) -> str:
        if commit not in self._trees:
            self._trees[commit] = self.repo.git("rev-parse", f"{commit}^{{tree}}").strip()
        return self._trees[commit]

    async def _stages(
        self, commit: str, tasks: list[str], branches: dict[str, str], against: str, allow: Allowance
    ) -> GateResult:
        started = time.monotonic()
        changes = await asyncio.to_thread(changed_paths, self.repo, self.base, commit)
        problems, files = await asyncio.to_thread(self._parse, commit, changes)
        hint = await asyncio.to_thread(self._hint_files, files, branches)
        if not self._record(commit, "parse", not files, tasks, problems, started):
            return GateResult(False, "parse", problems, hint, commit)
        started = time.monotonic()
        breakage = await asyncio.to_thread(find_breakage, self.repo, self.base, commit, changes, self.sources)
        output = "\n".join(str(b) for b in breakage)
        if not self._record(commit, "semantic", not breakage, tasks, output, started):
            hint = await asyncio.to_thread(self._hint_breakage, breakage, branches)
            return GateResult(False, "semantic", output, hint, commit)
        started = time.monotonic()
        verdict, output = await self._verify(commit, against, allow)
        self._record(commit, "verify", verdict.passed, tasks, output, started)
        return GateResult(verdict.passed, "verify", output, (), commit, verdict.held, verdict.deferred)

    def _record(self, commit: str, stage: Stage, passed: bool, tasks: list[str], output: str, started: float) -> bool:
        if self.log is not None:
            self.log.append(
                GateChecked(
                    run_id=self.log.run_id,
                    commit=commit,
                    stage=stage,
                    passed=passed,
                    tasks=tasks,
                    output=cap_output(output, self.output_limit),
                    duration_s=round(time.monotonic() - started, 3),
                )
            )
        return passed

    def _parse(self, commit: str, changes: Mapping[str, str]) -> tuple[str, list[str]]:
        """Problems held against `commit` (then notes on those that are not), and the files of those held; the files
        the semantic stage reads at the base are read with those of `commit`, in one call."""
        py_before = [p for p, status in changes.items() if status != "A" and p.endswith(".py")]
        self.sources.read_all([(commit, [p for p, s in changes.items() if s != "D"]), (self.base, py_before)])
        found = parse_findings(self.repo, self.base, commit, changes, self.sources)
        return "\n".join([*found.problems, *(f"note: {n}" for n in found.notes)]), found.files

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
        cache = read_blobs(self.repo, commit, sorted(files & DETECTED_FROM))  # one read for every file looked at

        def read(path: str) -> str | None:
            if path not in cache:
                cache.update(read_blobs(self.repo, commit, [path]))
            return cache[path]

        return detect_verify_command(files, read, python=self.python)

    @property
    def runner(self) -> Shell:
        """The runner of the verify command (made by `runner_for` on first use)."""
        if self._runner is None:
            if self._runner_for is None:
                self._runner = LocalShell()
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

    async def _run(self, commit: str, command: str, *, label: str = "") -> _Run:
        """The verify command's first run on `commit`'s tree (made once; `label` records a comparison run)."""
        key = (self._tree(commit), command)
        if key not in self._runs:
            started = time.monotonic()
            ok, output, ran = await self._run_verify(commit, command)
            report = Report(frozenset()) if ok else read_report(output) if ran else None
            self._runs[key] = _Run(ok, output, ran, report)
            if label:
                self._record(commit, "verify", ok, [], f"{label}, for comparison\n{output}", started)
        return self._runs[key]

    async def _complete(self, commit: str, command: str, run: _Run) -> _Run:
        """`run` with the failures its suite never reached: run again leaving out those known, until it ends."""
        report = run.report
        if report is None or report.complete:
            return run
        failed, outputs = set(report.failed), [run.output]
        for _ in range(_MAX_RERUNS):
            _, output, ran = await self._run_verify(commit, deselecting(command, failed))
            again = read_report(output) if ran else None
            outputs.append(output)
            if again is None or not (again.failed - failed) and not again.complete:
                break  # unreadable, or stopped again without a new failure: the rest stays unknown
            failed |= again.failed
            if again.complete:
                done = _Run(run.ok, "\n\n".join(outputs), True, Report(frozenset(failed), True, report.runner))
                self._runs[(self._tree(commit), command)] = done
                return done
        return _Run(run.ok, "\n\n".join(outputs), True, None)

    async def _verify(self, commit: str, against: str, allow: Allowance) -> tuple[Verdict, str]:
        command = await asyncio.to_thread(self.command_for, commit)
        if not command:
            return Verdict(True, ""), "skipped: no verify command configured or detected"
        now = await self._run(commit, command)
        if not now.ran:
            return Verdict(False, "", (ALL,)), "the verify command did not run, so nothing is verified\n" + now.output
        if commit == self.base:
            self.base_fails = not now.ok
        if now.ok or commit == against == self.base:
            return Verdict(now.ok, ""), now.output
        where = "the base commit" if against == self.base else f"the integration head it lands on ({against[:10]})"
        before = await self._run(against, command, label="the base" if against == self.base else "the landing point")
        if not before.ran:
            return Verdict(False, "", (ALL,)), "the verify command did not run at the landing point\n" + before.output
        if against == self.base:
            self.base_fails = not before.ok
        verdict, output = await self._by_test(commit, against, command, now, before, allow, where)
        if verdict is None:
            verdict = by_exit_status(before_ok=before.ok, allow=allow, where=where)
        return verdict, f"{verdict.headline}\n{output}"

    async def _by_test(
        self, commit: str, against: str, command: str, now: _Run, before: _Run, allow: Allowance, where: str
    ) -> tuple[Verdict | None, str]:
        """The verdict test by test, and the output it rests on; None when a side's output does not name its tests."""
        if before.report is not None and not before.report.complete:
            before = await self._complete(against, command, before)
        if before.report is None:
            return None, now.output
        changed = await asyncio.to_thread(changed_paths, self.repo, against, commit)
        files = await asyncio.to_thread(tree_paths, self.repo, commit)
        while now.report is not None:
            verdict = by_test(now.report, before.report, changed=changed, files=files, allow=allow, where=where)
            if verdict is not None:
                return verdict, now.output
            now = await self._complete(commit, command, now)
        return None, now.output

    def close(self) -> None:
        """Remove the integration worktree, if one was made, and close the runner the gate made."""
        self.worktree.remove()
        made, self._made = self._made, None
        if made is not None:
            self._runner = None
            close = getattr(made, "close", None)
            if callable(close):
                close()
