"""`plait doctor` and `plait gc`: check a repository's plait state and repair what is safe to repair."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from plait.cli._options import JsonOpt, RepoOpt
from plait.run.maintenance import Finding, collect, diagnose
from plait.ui._reading import err, out
from plait.ui._safe import escaped
from plait.workspace import Repo

__all__ = ["doctor", "gc"]


def _size(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n //= 1024
    return f"{n} B"


def _apply(findings: list[Finding]) -> list[str]:
    done = []
    for finding in findings:
        if finding.repair is not None:
            done.append(finding.repair())
    return done


def doctor(
    repo_path: RepoOpt = Path(),
    fix: Annotated[bool, typer.Option("--fix", help="Repair what can be repaired without losing anything.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Check this repository's plait state: the event log, worktrees, branches, checkpoints, ref locks."""
    repo = Repo.discover(repo_path)
    findings = diagnose(repo)
    repaired = _apply(findings) if fix else []
    if as_json:
        rows = [
            {"kind": f.kind, "severity": f.severity, "message": f.message, "repairable": f.repair is not None}
            for f in findings
        ]
        out.print_json(json.dumps({"findings": rows, "repaired": repaired}))
    elif not findings:
        out.print("[green]all good[/]: the event log reads back whole, and nothing is left behind")
    else:
        table = Table("severity", "what", "repair")
        for f in findings:
            table.add_row(f.severity, escaped(f.message), "yes" if f.repair else "by hand")
        out.print(table)
        for line in repaired:
            out.print(f"  repaired: {escaped(line)}")
        if not fix and any(f.repair for f in findings):
            err.print("run `plait doctor --fix` to repair what can be repaired")
    unrepaired = [f for f in findings if f.severity == "error" and (not fix or f.repair is None)]
    raise typer.Exit(5 if unrepaired else 0)


def gc(
    repo_path: RepoOpt = Path(),
    dry_run: Annotated[bool, typer.Option("--dry-run", "-n", help="Say what would go; remove nothing.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Remove what ended runs left or no longer need (worktrees, refs, stale locks, spent branches)."""
    repo = Repo.discover(repo_path)
    garbage, kept = collect(repo)
    freed = sum(f.freed for f in garbage)
    done = [f.message for f in garbage] if dry_run else _apply(garbage)
    if as_json:
        kept_rows = [{"branch": v.branch, "why": v.why} for v in kept]
        data = {"removed": [] if dry_run else done, "freed_bytes": freed, "kept": kept_rows}
        out.print_json(json.dumps(data | ({"would_remove": done} if dry_run else {})))
        return
    if kept:
        out.print(f"kept {len(kept)} plait branch(es):")
        for verdict in kept:
            out.print(f"  {escaped(verdict.branch)}: {escaped(verdict.why)}", highlight=False)
    if done and dry_run:
        out.print("would remove:")
    for line in done:
        out.print(f"  {escaped(line)}", highlight=False)
    if not done:
        out.print("nothing to collect")
    elif dry_run:
        out.print(f"would free {_size(freed)}: `plait gc` removes them")
    else:
        out.print(f"freed {_size(freed)}")
