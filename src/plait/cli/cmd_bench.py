"""`plait bench reconcile --repo PATH`: the merge ladder against a repository's real history, beside plain git."""

from __future__ import annotations

import asyncio
import json
from dataclasses import asdict
from pathlib import Path
from typing import Annotated, Literal

import typer
from rich.table import Table

from plait.cli._options import JsonOpt
from plait.errors import UsageError
from plait.events.runlog import RunLog
from plait.events.store import SQLiteEventStore
from plait.models.registry import make_model
from plait.reconcile.bench import TrackA, TrackB, historical_merges, run_track_a, run_track_b, scratch_clone
from plait.reconcile.bench.track_llm import TrackLLM, candidates, run_llm_case
from plait.reconcile.ladder import default_resolvers
from plait.reconcile.llm_resolver import LLMResolver
from plait.settings import load_settings
from plait.ui._reading import err, out
from plait.workspace import Repo

__all__ = ["reconcile"]


def _pct(part: int, whole: int) -> str:
    return f"{part} ({100 * part / whole:.0f}%)" if whole else str(part)


def _table_a(a: TrackA, gated: bool = False) -> Table:
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
    if a.count(plait="refused") or gated:
        table.add_row("refused by the gate (parse, semantic)", "", str(a.count(plait="refused")))
        table.add_row("  of which git merged cleanly", "", str(s["clean_refused_by_gate"]))
    rungs = ", ".join(f"{rung} {n}" for rung, n in sorted(a.rung_files().items())) or "none"
    table.caption = f"no-regression set: {len(a.regressions)} changed; conflicted files resolved by rung: {rungs}"
    if a.skipped:
        table.caption += f"; {len(a.skipped)} merge(s) git itself cannot re-merge (unrelated histories?) skipped"
    return table


def _table_b(b: TrackB, gated: bool = False) -> Table:
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
    if gated:
        table.add_row("branches refused by the gate (parse, semantic)", "", str(s["plait_refused_by_gate"]))
    return table


def _table_llm(t: TrackLLM) -> Table:
    s = t.summary()
    title = f"LLM track: {s['merges']} merges of {t.repo} left by the model-free rungs ({s['files']} files)"
    table = Table("", "files", title=title)
    for key in ("exact", "whitespace", "different", "unresolved", "harmful"):
        table.add_row(key.replace("whitespace", "whitespace only"), _pct(int(str(s[key])), int(str(s["files"]))))
    table.add_row("merges exactly as committed", str(s["merges_exact"]))
    table.add_row(
        "prompt tokens per file",
        f"{s['tokens_per_file']} (today's whole-file prompt: {s['whole_file_tokens_per_file']})",
    )
    table.add_row("output tokens per file", str(s["output_tokens_per_file"]))
    table.add_row("whole-file fallbacks", str(s["whole_file_fallbacks"]))
    return table


def _track_llm(repo: Repo, name: str, spec: str, cases: int, max_files: int, log: Path | None) -> TrackLLM:
    model = make_model(spec, load_settings(Path.cwd(), {}).settings)
    store = SQLiteEventStore(log) if log else None
    resolver = LLMResolver(model, RunLog(store, f"bench-llm-{name}") if store else None)
    track = TrackLLM(name)

    async def work() -> None:
        found = await candidates(repo, historical_merges(repo), cases, max_files)
        err.print(f"LLM track: {len(found)} merges of {name} left unresolved by the model-free rungs")
        for row, left in found:
            track.cases.append(await run_llm_case(repo, row, left, resolver))
            verdicts = ", ".join(f"{f.path} {f.verdict}" for f in track.cases[-1].files)
            err.print(f"  {row[0][:10]}: {verdicts}")

    asyncio.run(work())
    return track


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
    llm: Annotated[
        str | None, typer.Option("--llm", help="The LLM track instead, with this model (e.g. openai:NAME).")
    ] = None,
    cases: Annotated[int, typer.Option("--cases", min=1, help="LLM track: merges to resolve.")] = 30,
    max_files: Annotated[int, typer.Option("--max-files", min=1, help="LLM track: most files left per merge.")] = 3,
    llm_log: Annotated[
        Path | None, typer.Option("--llm-log", help="LLM track: an event log, so a rerun pays no call twice.")
    ] = None,
    gated: Annotated[
        bool,
        typer.Option("--gate", help="Tracks A and B: plait's merges must pass the gate's parse and semantic checks."),
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Re-merge historical merges (Track A) and replay commits as parallel branches (Track B), git vs plait;
    with --llm, resolve the merges the model-free rungs leave, against the committed trees."""
    if not repo_path.exists():
        raise UsageError(f"{repo_path} does not exist: give --repo a local clone of a repository")
    name = repo_path.resolve().name
    name = repo_path.resolve().parent.name if name in ("repo", ".git") else name
    result: dict[str, object] = {"repo": name}
    with scratch_clone(repo_path) as repo:
        if llm:
            t = _track_llm(repo, name, llm, cases, max_files, llm_log)
            result["track_llm"] = t.summary()
            result["track_llm_cases"] = [asdict(c) for c in t.cases]
            if not as_json:
                out.print(_table_llm(t))
        if track in ("a", "both") and not llm:
            err.print(f"Track A: re-merging the merges of {name}...")
            a = run_track_a(repo, name=name, resolvers=default_resolvers(), limit=limit, jobs=jobs, gated=gated)
            result["track_a"] = a.summary()
            result["track_a_conflicts"] = [asdict(c) for c in a.cases if c.git == "conflict"]
            if not as_json:
                out.print(_table_a(a, gated))
        if track in ("b", "both") and not llm:
            result["track_b"] = []
            for size in k or [5]:
                err.print(f"Track B: replaying {windows} windows of {size} commits of {name}...")
                b = run_track_b(
                    repo,
                    name=name,
                    resolvers=default_resolvers(),
                    k=size,
                    windows=windows,
                    seed=seed,
                    jobs=jobs,
                    gated=gated,
                )
                result["track_b"].append({**b.summary(), "windows_detail": [asdict(w) for w in b.windows]})  # type: ignore[attr-defined]
                if not as_json:
                    out.print(_table_b(b, gated))
    if as_json:
        out.print_json(json.dumps(result))
