"""`plait doctor` and `plait gc`: check a repository's plait state and repair what is safe to repair."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from plait.run.maintenance import Finding, diagnose
from plait.ui._common import JsonOpt, RepoOpt, err, out
from plait.ui._safe import escaped
from plait.workspace import Repo

__all__ = ["register"]


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


def register(app: typer.Typer) -> None:
    @app.command()
    def doctor(
        repo_path: RepoOpt = Path(),
        fix: Annotated[
            bool, typer.Option("--fix", help="Repair what can be repaired without losing anything.")
        ] = False,
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

    @app.command()
    def gc(repo_path: RepoOpt = Path(), as_json: JsonOpt = False) -> None:
        """Remove what ended or crashed runs left (worktrees, checkpoint refs, stale locks); say the disk freed."""
        repo = Repo.discover(repo_path)
        garbage = [f for f in diagnose(repo) if f.kind in ("worktree", "refs", "lock") and f.repair is not None]
        freed = sum(f.freed for f in garbage)
        done = _apply(garbage)
        if as_json:
            out.print_json(json.dumps({"removed": done, "freed_bytes": freed}))
            return
        for line in done:
            out.print(f"  {escaped(line)}")
        out.print(f"freed {_size(freed)}" if done else "nothing to collect")
