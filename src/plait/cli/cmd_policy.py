"""`plait policy check CMD` explains what the rules do with a command; `plait sandbox` reports the OS layer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from plait.cli._options import JsonOpt, RepoOpt
from plait.errors import EnvironmentProblem
from plait.settings import Settings, load_settings
from plait.shell_parse import parse
from plait.ui._reading import err, out
from plait.workspace import Repo
from plait.workspace.policy import Decision, Policy
from plait.workspace.sandbox import probe

__all__ = ["check", "sandbox"]

PresetOpt = Annotated[
    str | None,
    typer.Option("--preset", help="strict, standard or trusted (default: the configured one).", show_default=False),
]
_COLOR = {"allow": "green", "ask": "yellow", "deny": "red"}


def _settings(repo: Path) -> Settings:
    try:
        root: Path | None = Repo.discover(repo).root
    except EnvironmentProblem:
        root = None
    return load_settings(root).settings


def _check_json(command: str, policy: Policy, decision: Decision) -> dict[str, Any]:
    return {
        "command": command,
        "preset": policy.name,
        "network": policy.network,
        "commands": [list(argv) for argv in parse(command).commands],
        "verdict": decision.verdict,
        "rule": decision.rule,
        "reason": decision.reason,
        "instead": decision.instead,
        "matches": [{"rule": rule, "verdict": verdict} for rule, verdict in decision.matched],
    }


def _pattern(policy: Policy, label: str) -> str:
    """The pattern behind a named rule, shortened, for the explanation."""
    rule = next((r for r in policy.commands if r.label == label and r.name), None)
    if rule is None:
        return ""
    if rule.prefix:
        text = " ".join(w if isinstance(w, str) else "[" + "|".join(w) + "]" for w in rule.prefix)
    else:
        text = rule.glob or f"/{rule.regex}/"
    return f"  ({text[:77] + '...' if len(text) > 80 else text})"


def _print_check(command: str, policy: Policy, decision: Decision) -> None:
    out.print(f"[bold]preset[/] {policy.name} (network: {policy.network})")
    out.print(f"[bold]command[/] {escape(command)}")
    for argv in parse(command).commands:
        out.print(f"  judged as: {escape(' '.join(argv))}")
    if decision.matched:
        out.print("[bold]matching rules[/] (the strictest wins):")
        for rule, verdict in decision.matched:
            out.print(f"  [{_COLOR[verdict]}]{verdict:5}[/] {escape(rule)}{escape(_pattern(policy, rule))}")
    else:
        out.print("no rule matches: allowed, and the OS sandbox still confines it")
    color = _COLOR[decision.verdict]
    by = f" by rule {escape(decision.rule)}" if decision.rule else ""
    out.print(f"[bold]verdict[/] [{color}]{decision.verdict}[/]{by}")
    if decision.reason and decision.matched:
        out.print(f"  why: {escape(decision.reason)}")
    if decision.instead:
        out.print(f"  instead: {escape(decision.instead)}")
    if decision.verdict == "ask":
        out.print("  asked of the user in interactive use; denied in unattended runs")


def check(
    command: Annotated[str, typer.Argument(metavar="CMD", help="The shell command to judge.")],
    preset: PresetOpt = None,
    repo: RepoOpt = Path(),
    as_json: JsonOpt = False,
) -> None:
    """Explain which rules match a command and what the policy decides; exit 1 when it denies the command."""
    settings = _settings(repo)
    if preset is not None and preset not in ("strict", "standard", "trusted"):
        raise typer.BadParameter(f"unknown preset {preset!r}: use strict, standard or trusted", param_hint="--preset")
    policy = Policy.from_settings(settings.sandbox, preset)
    decision = policy.check_command(command, cwd=repo.absolute())
    if as_json:
        out.print_json(json.dumps(_check_json(command, policy, decision)))
    else:
        _print_check(command, policy, decision)
    if decision.verdict == "deny":  # a script can test the verdict as it tests any check (ask and allow: 0)
        raise typer.Exit(1)


def sandbox(repo: RepoOpt = Path(), as_json: JsonOpt = False) -> None:
    """Probe the OS sandbox layers that work here and say which one agents' commands get."""
    settings = _settings(repo).sandbox
    found = probe()
    try:
        layer: str = found.choose(settings.layer)
        problem = ""
    except EnvironmentProblem as exc:
        layer, problem = "none", str(exc)
    line = found.report(layer, settings.limits, allow_unsandboxed=settings.allow_unsandboxed)
    if as_json:
        data = {"layer": layer, "report": line, "problem": problem, "probe": found.model_dump()}
        out.print_json(json.dumps(data))
    else:
        out.print(escape(line), highlight=False)
        for name in ("bwrap", "landlock", "seatbelt"):
            state = "[green]works[/]" if name in found.usable() else f"[dim]{escape(found.problem(name))}[/]"
            out.print(f"  {name:9} {state}")
        cgroup = found.cgroup or found.cgroup_problem
        out.print(f"  {'cgroup':9} {escape(cgroup)}")
        memory = found.memory_cgroup or found.memory_cgroup_problem
        out.print(f"  {'memory':9} {escape(memory)}")
    if problem:
        err.print(f"[red]plait: error:[/] {escape(problem)}", highlight=False)
        raise typer.Exit(EnvironmentProblem.exit_code)
