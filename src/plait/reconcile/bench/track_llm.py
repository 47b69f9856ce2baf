"""The LLM track: historical merges the model-free rungs leave unresolved, resolved by the LLM rung, file by file
against the developer's committed tree, with the tokens its prompts cost beside today's whole-file prompt.

Each side's intent is what `plait integrate` gives a branch: its commit messages since the other side (at most
4,000 characters) and its newest subject. Tokens are estimated as characters / 4, as the local model server
does; a call's tokens are shared among the files it resolved.
"""

from __future__ import annotations

import ast
import difflib
import json
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from plait.messages import ModelRequest, ModelResponse
from plait.reconcile._gitio import decode, git_bytes
from plait.reconcile._mergefile import Hunk, diff3_regions, has_conflict_markers
from plait.reconcile._trees import read_blobs
from plait.reconcile._whole_prompt import RESOLVE, WHOLE_SYSTEM, whole_file_prompt
from plait.reconcile.ladder import default_resolvers, merge_commits
from plait.reconcile.llm_resolver import LLMResolver
from plait.reconcile.textmerge import merge_tree
from plait.reconcile.types import FileConflict, MergeContext, Resolution
from plait.workspace import Repo

__all__ = ["FileCase", "LLMCase", "TrackLLM", "candidates", "prompt_tokens", "run_llm_case", "verdict"]

Verdict = Literal["exact", "whitespace", "different", "unresolved", "harmful"]
VERDICTS: tuple[Verdict, ...] = ("exact", "whitespace", "different", "unresolved", "harmful")
_INTENT_LIMIT = 4000


@dataclass(frozen=True)
class FileCase:
    """One conflicted file the LLM rung was given."""

    path: str
    verdict: Verdict
    tokens: int
    """Prompt tokens of the calls that covered it (shared among their files)."""
    whole_file_tokens: int
    """Today's whole-file prompt for the same conflict."""
    output_tokens: int
    calls: int
    whole_file: bool = False
    why: str = ""


@dataclass(frozen=True)
class LLMCase:
    """One historical merge and its files."""

    commit: str
    files: tuple[FileCase, ...]

    @property
    def exact(self) -> bool:
        return all(f.verdict == "exact" for f in self.files)


@dataclass
class TrackLLM:
    """The LLM track of one or more repositories."""

    repo: str
    cases: list[LLMCase] = field(default_factory=list)

    def summary(self) -> dict[str, object]:
        files = [f for c in self.cases for f in c.files]
        counts = Counter(f.verdict for f in files)
        n = len(files) or 1
        return {
            "repo": self.repo,
            "merges": len(self.cases),
            "merges_exact": sum(c.exact for c in self.cases),
            "files": len(files),
            **{v: counts.get(v, 0) for v in VERDICTS},
            "whole_file_fallbacks": sum(f.whole_file for f in files),
            "tokens_per_file": round(sum(f.tokens for f in files) / n),
            "whole_file_tokens_per_file": round(sum(f.whole_file_tokens for f in files) / n),
            "output_tokens_per_file": round(sum(f.output_tokens for f in files) / n),
        }


def _chars(request: ModelRequest) -> int:
    size = len(request.system) + sum(
        len(t.name) + len(t.description) + len(json.dumps(t.parameters)) for t in request.tools
    )
    for m in request.messages:
        data = m.model_dump(mode="json")
        size += len(data.get("text") or "") + len(data.get("content") or "")
        size += sum(len(c["name"]) + len(json.dumps(c["arguments"])) for c in data.get("tool_calls") or ())
    return size


def prompt_tokens(request: ModelRequest) -> int:
    """The prompt's tokens as a local model server estimates them (characters / 4)."""
    return math.ceil(_chars(request) / 4)


def _output_tokens(response: ModelResponse) -> int:
    return math.ceil(
        (len(response.text) + sum(len(c.name) + len(json.dumps(c.arguments)) for c in response.tool_calls)) / 4
    )


def whole_file_tokens(conflict: FileConflict, context: MergeContext) -> int:
    """Today's prompt for one conflicted file, counted without sending it."""
    from plait.messages import UserMessage

    request = ModelRequest(
        system=WHOLE_SYSTEM, messages=(UserMessage(text=whole_file_prompt(conflict, context)),), tools=(RESOLVE,)
    )
    return prompt_tokens(request)


def _parses(path: str, text: str) -> bool:
    if not path.endswith((".py", ".pyi")):
        return True
    try:
        ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return True


def _near(line: str, lines: set[str]) -> bool:
    return line in lines or any(difflib.SequenceMatcher(None, line, x).ratio() > 0.6 for x in lines)


def _dropped(conflict: FileConflict, text: str, committed: str) -> bool:
    """Whether, in some conflict hunk, the developer kept lines one side added and `text` has none of them
    (nor a line like one of them)."""
    if conflict.ours is None or conflict.theirs is None:
        return False
    mine, theirs = {x.strip() for x in text.splitlines()}, {x.strip() for x in committed.splitlines()}
    for region in diff3_regions(conflict.base or "", conflict.ours, conflict.theirs):
        if not isinstance(region, Hunk):
            continue
        base = {x.strip() for x in region.base}
        for side in (region.ours, region.theirs):
            kept = ({x.strip() for x in side if len(x.strip()) > 3} - base) & theirs
            if kept and not any(_near(x, mine - base) for x in kept):
                return True
    return False


def verdict(conflict: FileConflict, text: str | None, committed: str | None) -> Verdict:
    """How plait's text for one file compares with the developer's."""
    if text == committed:
        return "exact"
    if text is None or committed is None:
        return "different"
    if has_conflict_markers(text) and not has_conflict_markers(committed):
        return "harmful"
    if _parses(conflict.path, committed) and not _parses(conflict.path, text):
        return "harmful"
    if "".join(text.split()) == "".join(committed.split()):
        return "whitespace"
    return "harmful" if _dropped(conflict, text, committed) else "different"


def context_of(repo: Repo, ours: str, theirs: str) -> MergeContext:
    """What `plait integrate` tells the LLM rung about a branch merged onto `ours`."""
    _, out = git_bytes(repo, "log", "--no-merges", "--format=%s%n%n%b", f"{ours}..{theirs}")
    log = decode(out).strip()
    return MergeContext(theirs_task=log[:_INTENT_LIMIT], theirs_intent=log.splitlines()[0] if log else "")


async def candidates(
    repo: Repo, rows: Sequence[tuple[str, str, str, str]], want: int, max_files: int
) -> list[tuple[tuple[str, str, str, str], list[FileConflict]]]:
    """Merges (newest first) that git cannot merge and the model-free rungs leave with 1 to `max_files` files,
    every one a conflict of contents the LLM rung is given; with those files."""
    found: list[tuple[tuple[str, str, str, str], list[FileConflict]]] = []
    for row in rows:
        if len(found) >= want:
            break
        _, _, ours, theirs = row
        plain = merge_tree(repo, ours, theirs)
        if plain.clean:
            continue
        textual = {pc.path for pc in plain.conflicts if pc.textual}
        outcome = await merge_commits(repo, ours, theirs, resolvers=default_resolvers(), message="bench\n")
        left = outcome.unresolved
        if outcome.commit is None and 0 < len(left) <= max_files and all(c.path in textual for c in left):
            found.append((row, left))
    return found


async def run_llm_case(
    repo: Repo, row: tuple[str, str, str, str], left: Sequence[FileConflict], resolver: LLMResolver
) -> LLMCase:
    """Resolve one merge with the ladder and `resolver`, and judge each file the LLM rung was given."""
    merge, committed, ours, theirs = row
    context = context_of(repo, ours, theirs)
    first = len(resolver.calls)
    outcome = await merge_commits(repo, ours, theirs, resolvers=[*default_resolvers(), resolver], context=context)
    calls = resolver.calls[first:]
    made: dict[str, Resolution] = {r.path: r for r in outcome.resolutions if r.rung == "llm"}
    truth = read_blobs(repo, committed, [c.path for c in left])
    files = []
    for conflict in left:
        mine = [c for c in calls if conflict.path in c.paths]
        tokens = sum(prompt_tokens(c.request) / len(c.paths) for c in mine)
        out = sum(_output_tokens(c.response) / len(c.paths) for c in mine)
        res = made.get(conflict.path)
        judged: Verdict = "unresolved" if res is None else verdict(conflict, res.text, truth.get(conflict.path))
        files.append(
            FileCase(
                conflict.path,
                judged,
                round(tokens),
                whole_file_tokens(conflict, context),
                round(out),
                len(mine),
                whole_file=any(c.whole_file for c in mine),
                why=res.reason if res else "",
            )
        )
    return LLMCase(merge, tuple(files))
