"""Every `plait` command, in the order the top-level help lists them: where each is defined and its help line.

This table is the one place commands are registered: `plait.cli._app.load_command` builds a command from its
entry when it runs (or shows its own help), so `plait runs` does not pay for `plait run`'s imports, and the
top-level help is drawn from it without importing any command module.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["COMMANDS", "Entry"]


class Entry(NamedTuple):
    """A command: its module, the line the top-level help shows (its docstring's first paragraph), the function
    in its module that is the command (its own name by default), or the functions of a group's subcommands."""

    module: str
    help: str
    function: str = ""
    subcommands: tuple[str, ...] = ()


COMMANDS: dict[str, Entry] = {
    "runs": Entry("plait.cli.cmd_view", "List the runs of this repository, newest last."),
    "show": Entry(
        "plait.cli.cmd_view",
        "Show a run's transcript: messages, tool calls and results, and the diff of a run that changed code.",
    ),
    "config": Entry(
        "plait.cli.cmd_init", "Print the effective settings and where each value came from (secrets masked)."
    ),
    "run": Entry(
        "plait.cli.cmd_run",
        "Plan TASK, run its parts in parallel worktrees, and integrate them on plait/RUN/integration.",
    ),
    "resume": Entry(
        "plait.cli.cmd_run",
        "Continue an interrupted run: finished work is kept, answered model calls are not paid again.",
    ),
    "demo": Entry("plait.cli.cmd_run", "Run scripted agents on a bundled repository: no network, no API key."),
    "doctor": Entry(
        "plait.cli.cmd_maint",
        "Check this repository's plait state: the event log, worktrees, branches, checkpoints, ref locks.",
    ),
    "gc": Entry(
        "plait.cli.cmd_maint",
        "Remove what ended runs left or no longer need (worktrees, refs, stale locks, spent branches).",
    ),
    "status": Entry(
        "plait.cli.cmd_view",
        "Show every agent of a run (live in a terminal), whether it runs in another process or on another machine.",
    ),
    "attach": Entry(
        "plait.cli.cmd_view",
        "Follow a run another process runs (`plait run --detach`): the live view in a terminal, else its progress "
        "lines from the start until it ends.",
    ),
    "log": Entry(
        "plait.cli.cmd_view",
        "Print a run's events in order (secrets redacted): one line each, or JSON lines with --json.",
    ),
    "cost": Entry(
        "plait.cli.cmd_view",
        "What a run spent, by agent, by model and by phase, and its speed-up over one agent after another.",
    ),
    "report": Entry(
        "plait.cli.cmd_view",
        "Summarize a run; with --html, write one HTML file (timeline, merges, cost, changes, transcripts).",
    ),
    "trace": Entry(
        "plait.cli.cmd_view",
        "Print a run as OpenTelemetry spans (JSON, one per line) with GenAI token usage; needs the otel extra.",
    ),
    "integrate": Entry(
        "plait.cli.cmd_integrate",
        "Merge BRANCHes onto a new, verified integration branch; your checkout is not touched.",
    ),
    "apply": Entry(
        "plait.cli.cmd_integrate",
        "Bring a run's verified result into your current branch (fast-forward, else a merge commit; --squash: one"
        " commit). The commits made here are yours (git's user.name and user.email).",
        function="apply_run",
    ),
    "sandbox": Entry(
        "plait.cli.cmd_policy",
        "Probe the OS sandbox layers that work here and say which one agents' commands get.",
    ),
    "ask": Entry(
        "plait.cli.cmd_session",
        "Ask read-only investigators, one per area of the code; get one answer.",
        function="ask_command",
    ),
    "session": Entry(
        "plait.cli.cmd_session",
        "Talk with a lead agent that keeps helpers and dispatches changes.",
        function="session_command",
    ),
    "trust": Entry(
        "plait.cli.cmd_trust",
        "Trust a repository with its own .plait.toml: a sandbox, limits, keys and model servers it sets are obeyed.",
    ),
    "mcp": Entry("plait.cli.cmd_mcp", "Serve this repository's runs to another agent over MCP (stdio or HTTP)."),
    "review": Entry(
        "plait.cli.cmd_review",
        "Review a run task by task: its change against the base and the integration head, its summary, cost,"
        " the merge rung that placed it and the gate's verdict. Every task is kept unless you --drop it.",
    ),
    "pr": Entry(
        "plait.cli.cmd_pr",
        "Push a run's verified result and open a pull request for it (with `gh`, else print where to open one).",
    ),
    "agent": Entry(
        "plait.cli.cmd_agent",
        "Step into one agent of a run: tell it something, pause, resume or stop it, or look at its worktree.",
    ),
    "init": Entry(
        "plait.cli.cmd_init",
        "Write a commented .plait.toml for this repository: its test command and a model for your API key.",
    ),
    "policy": Entry("plait.cli.cmd_policy", "The permission policy for agents' commands.", subcommands=("check",)),
    "bench": Entry("plait.cli.cmd_bench", "Measure plait on real history.", subcommands=("reconcile",)),
}
