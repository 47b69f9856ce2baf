"""`plait bench reconcile --repo PATH`: the merge ladder against a repository's real history, beside plain git."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Annotated, Literal

import typer
from rich.table import Table

from plait.errors import UsageError
from plait.reconcile.bench import TrackA, TrackB, run_track_a, run_track_b, scratch_clone
from plait.reconcile.ladder import default_resolvers
from plait.ui._common import JsonOpt, err, out

__all__ = ["register"]

bench = typer.Typer(help="Measure plait on real history.", no_args_is_help=True)


def _pct(part: int, whole: int) -> str:
    return f"{part} ({100 * part / whole:.0f}%)" if whole else str(part)


def _table_a(a: TrackA) -> Table:
    s = a.summary()
    merges, conflicts = len(a.cases), a.count(git="conflict")
    table = Table("", "git", "plait", title=f"Track A: historical merges of {a.repo} ({merges} two-parent merges)")
    clean_same = a.count(git="clean_same")
    table.add_row("clean, equal to the commit", str(clean_same), str(a.count(git="clean_same", plait="same")))
    table.add_row(
        "clean, not equal to the commit",
        str(a.count(git="clean_differs")),
        str(s["plait_clean_differs_fixed"]) + " fixed",
    )
    table.add_row("conflicting", str(conflicts), "")
    table.add_row("  resolved to the committed tree", "0", _pct(a.count(git="conflict", plait="same"), conflicts))
    table.add_row("  resolved differently", "0", _pct(a.count(git="conflict", plait="differs"), conflicts))
    table.add_row("    of which only in formatting", "0", str(s["conflicts_resolved_differs_in_format_only"]))
    table.add_row("  left unresolved", str(conflicts), _pct(a.count(git="conflict", plait="unresolved"), conflicts))
    rungs = ", ".join(f"{rung} {n}" for rung, n in sorted(a.rung_files().items())) or "none"
    table.caption = f"no-regression set: {len(a.regressions)} changed; conflicted files resolved by rung: {rungs}"
    return table


def _table_b(b: TrackB) -> Table:
    s = b.summary()
    title = (
        f"Track B: parallel replay of {b.repo}, K={b.k}: {s['windows']} windows, {s['branches']} branches "
        f"({s['transplant_conflicts']} forced transplants)"
    )
    table = Table("", "git", "plait", title=title)
    table.add_row("branches integrated unaided", str(s["git_integrated"]), str(s["plait_integrated"]))
    table.add_row("windows with every branch in", str(s["git_windows_all_in"]), str(s["plait_windows_all_in"]))
    table.add_row("final tree equal to the real one", str(s["git_equal_real"]), str(s["plait_equal_real"]))
    table.add_row(
        "windows with new static breakage", str(s["git_windows_new_breakage"]), str(s["plait_windows_new_breakage"])
    )
    return table


@bench.command("reconcile")
def reconcile(
    repo_path: Annotated[
        Path, typer.Option("--repo", help="A local clone of the repository to study (never written).")
    ],
    limit: Annotated[int | None, typer.Option("--limit", min=1, help="Track A: only the newest N merges.")] = None,
    track: Annotated[Literal["a", "b", "both"], typer.Option("--track", help="Which track to run.")] = "both",
    k: Annotated[
        list[int] | None, typer.Option("--k", min=1, help="Track B: branches per window (repeatable).")
    ] = None,
    windows: Annotated[int, typer.Option("--windows", min=1, help="Track B: windows per K.")] = 30,
    seed: Annotated[int, typer.Option("--seed", help="Track B: seed of the window sample.")] = 42,
    jobs: Annotated[int, typer.Option("--jobs", min=1, help="Merges run at once.")] = 4,
    as_json: JsonOpt = False,
) -> None:
    """Re-merge historical merges (Track A) and replay commits as parallel branches (Track B), git vs plait."""
    if not repo_path.exists():
        raise UsageError(f"{repo_path} does not exist: give --repo a local clone of a repository")
    name = repo_path.resolve().name
    name = repo_path.resolve().parent.name if name in ("repo", ".git") else name
    result: dict[str, object] = {"repo": name}
    with scratch_clone(repo_path) as repo:
        if track in ("a", "both"):
            err.print(f"Track A: re-merging the merges of {name}...")
            a = run_track_a(repo, name=name, resolvers=default_resolvers(), limit=limit, jobs=jobs)
            result["track_a"] = a.summary()
            result["track_a_conflicts"] = [asdict(c) for c in a.cases if c.git == "conflict"]
            if not as_json:
                out.print(_table_a(a))
        if track in ("b", "both"):
            result["track_b"] = []
            for size in k or [5]:
                err.print(f"Track B: replaying {windows} windows of {size} commits of {name}...")
                b = run_track_b(
                    repo, name=name, resolvers=default_resolvers(), k=size, windows=windows, seed=seed, jobs=jobs
                )
                result["track_b"].append({**b.summary(), "windows_detail": [asdict(w) for w in b.windows]})  # type: ignore[attr-defined]
                if not as_json:
                    out.print(_table_b(b))
    if as_json:
        out.print_json(json.dumps(result))


def register(app: typer.Typer) -> None:
    """Add `plait bench` to the command line."""
    app.add_typer(bench, name="bench")
