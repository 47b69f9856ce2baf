"""Cost per command of each sandbox layer: none, limits only, Landlock, bubblewrap.

Baselines, measured in the same run: "bare" starts `bash -c COMMAND` with asyncio and reads its output, nothing
more; "bare bwrap" does the same with the argv the bwrap layer prepares (bubblewrap's own cost); "local" is
`LocalShell` (new session, scrubbed environment, capped output, tree kill) with no policy, limits or OS layer.
The runners take turns, so drift in the machine's load hits all alike, with a pause between two commands (an
agent's commands come seconds apart, and some kernel costs, such as moving a process into a cgroup, are paid
again after a pause). The table gives the median and p90 of each, the median's ratio to bare, and the
milliseconds added to bare.
Run: .venv/bin/python benchmarks/bench_sandbox.py [--runs N] [--gap SECONDS] [--no-cgroup]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from plait.sandbox_settings import Limits, SandboxSettings
from plait.settings import Settings
from plait.workspace import CommandResult, LocalShell, Shell
from plait.workspace.policy import Policy
from plait.workspace.sandbox import SandboxedShell, probe, sandboxed_shell

COMMANDS = {"true": "true", "python -c pass": f"{sys.executable} -c pass"}


class Bare:
    """`bash -c` and its output read to the end: the floor every runner builds on."""

    async def run(self, command: str, *, cwd: Path, timeout: float, output_limit: int) -> CommandResult:  # noqa: ASYNC109
        proc = await asyncio.create_subprocess_exec(
            "bash", "-c", command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
        )
        out, _ = await proc.communicate()
        return CommandResult(exit_code=proc.returncode, output=out.decode()[:output_limit])


class BareBwrap:
    """The very argv the bwrap layer prepares, started like `Bare`: bubblewrap's own cost, with no plait around it."""

    def __init__(self, sandboxed: SandboxedShell) -> None:
        self._layer = sandboxed.layer

    async def run(self, command: str, *, cwd: Path, timeout: float, output_limit: int) -> CommandResult:  # noqa: ASYNC109
        argv, _, fds = self._layer.prepare(["bash", "-c", command], cwd=cwd, network=False)
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, pass_fds=fds
            )
        finally:
            for fd in fds:
                os.close(fd)
        out, _ = await proc.communicate()
        return CommandResult(exit_code=proc.returncode, output=out.decode()[:output_limit])


def workspace(tmp: Path) -> tuple[Path, Path]:
    repo = tmp / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    common = repo / ".git"
    worktree = common / "plait" / "worktrees" / "bench" / "a"
    worktree.mkdir(parents=True)
    return worktree, common


def runners(worktree: Path, common: Path, cgroup: bool) -> dict[str, Shell]:
    found = probe()
    out: dict[str, Shell] = {"bare": Bare(), "local": LocalShell()}
    layers = [("limits only", "none")] + [(name, name) for name in ("landlock", "bwrap") if name in found.usable()]
    for label, layer in layers:
        limits = Limits(cgroup=cgroup)
        settings = Settings(sandbox=SandboxSettings(layer=layer, allow_unsandboxed=True, limits=limits))
        out[label] = sandboxed_shell(
            settings,
            worktree=worktree,
            common_dir=common,
            log=None,
            agent="a",
            interactive=False,
            found=found,
        )
    bwrap = out.get("bwrap")
    if isinstance(bwrap, SandboxedShell):
        out = {"bare": out.pop("bare"), "bare bwrap": BareBwrap(bwrap), **out}
    for name in ("landlock", "bwrap"):
        if name not in found.usable():
            print(f"{name}: not measured, {found.problem(name)}")
    return out


async def measure(chosen: dict[str, Shell], command: str, cwd: Path, runs: int, gap: float) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {name: [] for name in chosen}
    for runner in chosen.values():  # one warm-up each
        await runner.run(command, cwd=cwd, timeout=60, output_limit=1000)
    for _ in range(runs):
        for name, runner in chosen.items():
            await asyncio.sleep(gap)
            started = time.perf_counter()
            result = await runner.run(command, cwd=cwd, timeout=60, output_limit=1000)
            times[name].append((time.perf_counter() - started) * 1000)
            if result.exit_code != 0:
                raise SystemExit(f"{name}: {command!r} failed: {result.output}")
    return times


def policy_check_us(n: int) -> float:
    policy = Policy.from_settings(SandboxSettings())
    line = "cd src && FOO=1 python -m pytest -q tests/ 2>&1 | tail -n 20"
    started = time.perf_counter()
    for _ in range(n):
        policy.check_command(line, cwd=Path.cwd())
    return (time.perf_counter() - started) / n * 1e6


def table(results: dict[str, dict[str, list[float]]], names: list[str]) -> str:
    header = f"{'runner':<12}"
    for label in COMMANDS:
        header += f" | {label + ' ms':>17} {'p90':>6} {'ratio':>5} {'added':>6}"
    lines = [header]
    for name in names:
        row = f"{name:<12}"
        for label in COMMANDS:
            samples = results[label][name]
            median = statistics.median(samples)
            p90 = statistics.quantiles(samples, n=10)[-1]
            base = statistics.median(results[label]["bare"])
            row += f" | {median:>17.1f} {p90:>6.1f} {median / base:>5.2f} {median - base:>+6.1f}"
        lines.append(row)
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--gap", type=float, default=0.1, help="Seconds of pause before each command.")
    parser.add_argument("--no-cgroup", action="store_true", help="Bound processes with the watchdog only.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        worktree, common = workspace(Path(tmp))
        chosen = runners(worktree, common, cgroup=not args.no_cgroup)
        results = {
            label: asyncio.run(measure(chosen, cmd, worktree, args.runs, args.gap)) for label, cmd in COMMANDS.items()
        }
        for runner in chosen.values():
            if isinstance(runner, SandboxedShell):
                runner.close()
    print(probe().report(probe().usable()[0], Limits(cgroup=not args.no_cgroup)))
    print(
        f"\n{args.runs} runs each, {args.gap} s apart; milliseconds per command: median, p90, ratio of medians to "
        "bare, ms added to bare"
    )
    print(table(results, list(chosen)))
    print(f"\npolicy check of one command line: {policy_check_us(2000):.0f} µs")


if __name__ == "__main__":
    main()
