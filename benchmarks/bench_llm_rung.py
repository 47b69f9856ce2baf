"""The LLM rung on merges `plait bench reconcile --llm` does not reach: older ones, chosen ones, or today's
whole-file prompt on the same merges.

`plait bench reconcile --llm` takes the newest merges the model-free rungs leave unresolved. This script takes
the same candidates, skips the first `--skip` of them (those already measured) or keeps only `--only` (merge
commit prefixes), and resolves each with the LLM rung as `plait integrate` would, judged file by file against
the developer's committed tree (exact, whitespace only, different, unresolved, harmful) with the prompt tokens
per file. `--whole-file` sends every conflicted file with today's whole-file prompt instead (base, ours,
theirs and git's marked attempt in full, answered by `resolve` with the whole file), for a comparison on the
same merges.

Run (the model through a local server, e.g. a person playing it in files mode):

    OPENAI_BASE_URL=http://127.0.0.1:PORT/v1 OPENAI_API_KEY=x .venv/bin/python benchmarks/bench_llm_rung.py \
        --repo PATH --model openai-chat:NAME [--skip 10] [--cases 10] [--only SHA,SHA] [--whole-file]
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

from plait.models.registry import make_model
from plait.reconcile.bench import historical_merges, scratch_clone
from plait.reconcile.bench.track_llm import TrackLLM, candidates, run_llm_case
from plait.reconcile.llm_resolver import LLMResolver
from plait.reconcile.types import FileConflict, MergeContext, Resolution
from plait.settings import load_settings


class WholeFileResolver(LLMResolver):
    """The LLM rung as it was: every conflicted file sent whole, answered whole."""

    async def _resolve_group(
        self, group: Sequence[FileConflict], context: MergeContext
    ) -> dict[str, Resolution | None]:
        return {c.path: await self._whole(c, context, "today's whole-file prompt") for c in group}


async def _main(args: argparse.Namespace) -> TrackLLM:
    model = make_model(args.model, load_settings(Path.cwd(), {}).settings)
    kind = WholeFileResolver if args.whole_file else LLMResolver
    name = args.repo.resolve().name
    name = args.repo.resolve().parent.name if name in ("repo", ".git") else name
    track = TrackLLM(name)
    with scratch_clone(args.repo) as repo:
        rows = historical_merges(repo)
        only = [p for p in (args.only or "").split(",") if p]
        if only:
            rows = [r for r in rows if any(r[0].startswith(p) for p in only)]
        found = await candidates(repo, rows, args.skip + args.cases, args.max_files)
        resolver = kind(model, None, f"bench-llm-{name}")
        for row, left in found[args.skip :]:
            # a merge is tried alone: a group of related files is what it is in the real rung
            track.cases.append(await run_llm_case(repo, row, left, resolver))
            verdicts = ", ".join(f"{f.path} {f.verdict} ({f.tokens} tokens)" for f in track.cases[-1].files)
            print(f"{row[0][:10]}: {verdicts}", flush=True)
    return track


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--skip", type=int, default=0, help="candidates to skip (newest first)")
    parser.add_argument("--cases", type=int, default=10)
    parser.add_argument("--max-files", type=int, default=3)
    parser.add_argument("--only", help="comma-separated merge commit prefixes")
    parser.add_argument("--whole-file", action="store_true", help="today's whole-file prompt for every file")
    parser.add_argument("--out", type=Path, help="write the summary and cases as JSON here")
    args = parser.parse_args()
    track = asyncio.run(_main(args))
    summary = track.summary()
    print(json.dumps(summary))
    if args.out:
        args.out.write_text(json.dumps({"summary": summary, "cases": [asdict(c) for c in track.cases]}, indent=1))


if __name__ == "__main__":
    main()
