"""The LLM rung: a model answers each conflict block of related files in one call, and plait splices its answers in.

The model sees each conflict hunk inside its enclosing function (or a few lines), the file's imports, what each
side changed nearby, the commits that touched those lines, the notes about that code and the places the semantic
check says may need a change. It must call `resolve_conflicts` (forced), giving the lines that replace each
block; plait splices them into git's merge, so the rest of the file cannot change, and refuses (then asks again,
a bounded number of times) an answer that misses a block, re-types the code around it, edits elsewhere, leaves
markers or does not parse. A file whose hunks cannot be isolated is sent whole, and its resolution says so.

Each call is journaled (agent `resolver-<hash>`), so a conflict met again (a rebuilt batch, a resumed run) is
read back, never paid twice; plait works from the reply as the log keeps it (redacted), so that a resumed
integration decides what the live one did.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, replace

from plait.agent.instructions import ProjectInstructions
from plait.agent.journal import ModelCallJournal
from plait.errors import ModelError
from plait.events.runlog import RunLog
from plait.events.store import redaction
from plait.events.types import NotePosted
from plait.messages import Message, Model, ModelRequest, ModelResponse, ToolSpec, UserMessage
from plait.models.pricing import PriceTable
from plait.reconcile._deleted import RESOLVE_DELETED, deleted_prompt, sides
from plait.reconcile._intent import board_notes
from plait.reconcile._locate import Located, NotIsolated, locate
from plait.reconcile._related import group_of
from plait.reconcile._replies import answer as _answer
from plait.reconcile._replies import feedback as _feedback
from plait.reconcile._replies import hunk_answer as _hunk_answer
from plait.reconcile._replies import newline as _newline
from plait.reconcile._replies import problem as _problem
from plait.reconcile._resolver_prompt import (
    RESOLVE_CONFLICTS,
    SYSTEM,
    Facts,
    gather,
    hunk_prompt,
    relevant_findings,
    settled,
    with_instructions,
)
from plait.reconcile._splice import Refused, blocks_from_whole, splice
from plait.reconcile._whole_prompt import RESOLVE, WHOLE_SYSTEM, whole_file_prompt
from plait.reconcile.types import FileConflict, MergeContext, Resolution, Rung
from plait.redact import scrub_strings

__all__ = ["Call", "LLMResolver"]

_MIN_OUTPUT, _MAX_OUTPUT = 2048, 32_000
SYSTEM_DELETED = """You resolve a git merge conflict over a whole file: one side deleted it, the other changed it. \
Decide from what each side meant to do whether the file stays, and answer by calling `resolve_deleted`."""


@dataclass(frozen=True)
class Call:
    """One model call of the rung, for measurement: the files it was about, what was sent and what came back."""

    paths: tuple[str, ...]
    request: ModelRequest
    response: ModelResponse
    whole_file: bool


def _zones(loc: Located, context: MergeContext, facts: Facts) -> list[tuple[int, int]]:
    """Where edits may go: the code shown around the hunks and where moved code went, and two lines around
    each finding in the file."""
    zones = [(s.start, s.end) for s in loc.sections]
    zones += [(a, b) for a, b, _ in facts.places.get(loc.conflict.path, [])]
    for f in context.findings:
        if f.path == loc.conflict.path and f.text.strip():
            zones += [(i - 2, i + 3) for i, line in enumerate(loc.view) if line.strip() == f.text.strip()]
    return zones


class LLMResolver:
    """The `llm` rung, backed by `model`; with a `log`, every call is journaled in it."""

    rung: Rung = "llm"

    def __init__(
        self,
        model: Model,
        log: RunLog | None = None,
        *,
        prices: PriceTable | None = None,
        attempts: int = 3,
        max_chars: int = 200_000,
    ) -> None:
        """`attempts` bounds the tries per call; no prompt over `max_chars` is sent (for a whole file: its sides)."""
        self.model, self.log = model, log
        self.prices = prices or PriceTable()
        self.attempts, self.max_chars = attempts, max_chars
        self.cost_usd = 0.0
        self.calls: list[Call] = []
        self._answers: dict[str, dict[str, Resolution | None]] = {}
        self._instructions: dict[str, ProjectInstructions] = {}
        self._settled: dict[tuple[str, str], list[str]] = {}
        """Per merge (ours, theirs): its blocks resolved so far, told to the calls that come after."""

    async def _system(self, system: str, context: MergeContext, paths: Sequence[str]) -> str:
        """`system` with the project instructions that bear on `paths` (redacted, as an agent's prompt is)."""
        text = await asyncio.to_thread(with_instructions, system, context.site, paths, self._instructions)
        return redaction(self.log.store)(text) if self.log is not None and text != system else text

    def _sendable(self, conflict: FileConflict) -> bool:
        return not any("\0" in (s or "") for s in (conflict.base, conflict.ours, conflict.theirs))

    async def resolve(self, conflict: FileConflict, context: MergeContext) -> Resolution | None:
        """A resolution the model wrote and the checks accepted, or None."""
        if not self._sendable(conflict):
            return None
        group = [c for c in group_of(conflict, context.siblings) if self._sendable(c)]
        context = await asyncio.to_thread(self._board, context, [c.path for c in group])
        key = hashlib.sha256(
            json.dumps(
                [[c.path, c.base, c.ours, c.theirs] for c in group]
                + [context.ours_task, context.theirs_task, context.ours_intent, context.theirs_intent]
                + [list(context.notes), [repr(f) for f in context.findings]]
            ).encode()
        ).hexdigest()
        if key not in self._answers:
            self._answers[key] = await self._resolve_group(group, context)
        return self._answers[key].get(conflict.path)

    def _board(self, context: MergeContext, paths: Sequence[str]) -> MergeContext:
        """`context` with the notes the run's board holds about `paths` (when the merge is one of a run's)."""
        if self.log is None or not self.log.run_id:
            return context
        found = board_notes((e for e in self.log.events(kinds=["note"]) if isinstance(e, NotePosted)), paths)
        return replace(context, notes=tuple(dict.fromkeys([*found, *context.notes]))) if found else context

    async def _resolve_group(
        self, group: Sequence[FileConflict], context: MergeContext
    ) -> dict[str, Resolution | None]:
        located: list[Located] = []
        whole: list[tuple[FileConflict, str]] = []
        for conflict in group:
            try:
                loc = await asyncio.to_thread(locate, conflict, 1 + sum(len(x.pieces) for x in located))
            except NotIsolated as exc:
                whole.append((conflict, str(exc)))
                continue
            located.append(loc)
        results: dict[str, Resolution | None] = {}
        if located:
            results |= await self._by_hunks(located, context)
        for conflict, why in whole:
            if conflict.ours is None or conflict.theirs is None:
                results[conflict.path] = await self._deleted(conflict, context)
            else:
                results[conflict.path] = await self._whole(conflict, context, why)
        return results

    def _request(self, messages: Sequence[Message], tool: ToolSpec, system: str, budget: int) -> ModelRequest:
        return ModelRequest(
            system=system,
            messages=tuple(messages),
            tools=(tool,),
            max_output_tokens=min(max(_MIN_OUTPUT, budget), _MAX_OUTPUT),
            tool_choice=tool.name,
        )

    async def _call(self, journal: ModelCallJournal | None, request: ModelRequest) -> ModelResponse:
        """The model's reply as the log keeps it (redacted), so that a resumed integration decides the same."""
        if journal is None:
            return await self.model.complete(request)
        response, cost = await journal.complete(self.model, request)
        self.cost_usd += cost
        assert self.log is not None
        data = response.model_dump(mode="json")
        clean = scrub_strings(data, redaction(self.log.store))
        return response if clean == data else ModelResponse.model_validate(clean)

    def _journal(self, request: ModelRequest) -> ModelCallJournal | None:
        if self.log is None:
            return None
        return ModelCallJournal(self.log, f"resolver-{request.fingerprint()[:12]}", self.prices)

    async def _by_hunks(self, located: list[Located], context: MergeContext) -> dict[str, Resolution | None]:
        facts = await asyncio.to_thread(gather, context.site, located)
        merge = (context.site.ours, context.site.theirs) if context.site else None
        earlier = self._settled.setdefault(merge, []) if merge else []
        prompt = hunk_prompt(located, context, facts, earlier)
        paths = tuple(loc.conflict.path for loc in located)
        if len(prompt) > self.max_chars:
            return dict.fromkeys(paths)
        messages: list[Message] = [UserMessage(text=prompt)]
        chars = sum(len(x) for loc in located for p in loc.pieces for x in (*p.hunk.ours, *p.hunk.theirs))
        budget = chars // 2 + 1024
        system = await self._system(SYSTEM, context, paths)
        journal = self._journal(self._request(messages, RESOLVE_CONFLICTS, system, budget))
        done: dict[str, Resolution] = {}
        for attempt in range(1, self.attempts + 1):
            request = self._request(messages, RESOLVE_CONFLICTS, system, budget)
            try:
                response = await self._call(journal, request)
            except ModelError:
                break
            self.calls.append(Call(paths, request, response, whole_file=False))
            problems = self._take(response, located, context, facts, done, attempt)
            if not problems:
                break
            kept = [p for p in paths if p in done]
            again = "" if not kept else f" The blocks of {', '.join(kept)} were accepted; give only the others."
            text = "That cannot be used: " + "; ".join(problems) + "." + again + " Call `resolve_conflicts` again."
            messages.append(response.as_message())
            messages.extend(_feedback(response, text))
        for loc in located:
            res = done.get(loc.conflict.path)
            texts = blocks_from_whole(loc, res.text) if res is not None and res.text is not None else None
            earlier.extend(settled(loc, texts) if texts is not None else [])
        return {p: done.get(p) for p in paths}

    def _take(
        self,
        response: ModelResponse,
        located: list[Located],
        context: MergeContext,
        facts: Facts,
        done: dict[str, Resolution],
        attempt: int,
    ) -> list[str]:
        """Accept each file the reply resolves well (into `done`); return what is wrong with the rest."""
        answer = _hunk_answer(response, located)
        if isinstance(answer, str):
            return [answer]
        texts, edits = answer
        known = {p.id for loc in located for p in loc.pieces}
        problems = [f"there is no block {i}" for i in sorted(set(texts) - known)]
        paths = {loc.conflict.path for loc in located}
        problems += [f"`{e.path}` is not one of the files being resolved" for e in edits if e.path not in paths]
        if problems:  # a reply about blocks or files that are not there is not trusted for the others either
            return problems
        for loc in located:
            path = loc.conflict.path
            if path in done:
                continue
            mine = [e for e in edits if e.path == path]
            try:
                text: str | None = splice(loc, texts, mine, _zones(loc, context, facts))
            except Refused as exc:
                problems.append(str(exc))
                continue
            why = _problem(loc.conflict, text, False)
            if why is not None:
                problems.append(f"{path}: {why}")
                continue
            blocks = f"{len(loc.pieces)} conflict block(s)" + (f" and {len(mine)} edit(s) near them" if mine else "")
            reason = f"the model resolved {blocks} (attempt {attempt}, {self.model.name})"
            done[path] = Resolution(path, text, self.rung, reason)
        return problems

    async def _whole(self, conflict: FileConflict, context: MergeContext, why: str) -> Resolution | None:
        """The whole-file fallback for a file whose hunks cannot be isolated (`why`)."""
        if sum(len(s or "") for s in (conflict.base, conflict.ours, conflict.theirs)) > self.max_chars:
            return None
        prompt = whole_file_prompt(conflict, context)
        findings = relevant_findings(context.findings, [conflict.path])
        if findings:
            prompt += "\n\n## Places that may need a change\n" + "\n".join(
                f"- {f.path}:{f.line}: {f.message}" for f in findings
            )
        messages: list[Message] = [UserMessage(text=prompt)]
        longest = max(len(s or "") for s in (conflict.base, conflict.ours, conflict.theirs))
        budget = longest // 3 + 1024
        system = await self._system(WHOLE_SYSTEM, context, [conflict.path])
        journal = self._journal(self._request(messages, RESOLVE, system, budget))
        for attempt in range(1, self.attempts + 1):
            request = self._request(messages, RESOLVE, system, budget)
            try:
                response = await self._call(journal, request)
            except ModelError:
                return None
            self.calls.append(Call((conflict.path,), request, response, whole_file=True))
            answer = _answer(response)
            problem = (
                "no `resolve` call and no fenced file in the reply" if answer is None else _problem(conflict, *answer)
            )
            if problem is None and answer is not None:
                content, delete = answer
                text = None if delete else _newline(content or "", conflict)
                did = "deleted the file" if delete else "rewrote the whole file"
                reason = (
                    f"the model {did}, as its hunks could not be isolated: {why} (attempt {attempt}, {self.model.name})"
                )
                return Resolution(conflict.path, text, self.rung, reason)
            messages.append(response.as_message())
            messages.extend(
                _feedback(
                    response, f"That cannot be used: {problem}. Call `resolve` again with the whole corrected file."
                )
            )
        return None

    async def _deleted(self, conflict: FileConflict, context: MergeContext) -> Resolution | None:
        """A file one side deleted and the other changed: keep it, or leave it deleted."""
        prompt = await asyncio.to_thread(deleted_prompt, conflict, context)
        if len(prompt) > self.max_chars:
            return None
        gone, kept = sides(conflict)
        messages: list[Message] = [UserMessage(text=prompt)]
        budget = len(getattr(conflict, kept) or "") // 3 + 1024
        system = await self._system(SYSTEM_DELETED, context, [conflict.path])
        journal = self._journal(self._request(messages, RESOLVE_DELETED, system, budget))
        for attempt in range(1, self.attempts + 1):
            request = self._request(messages, RESOLVE_DELETED, system, budget)
            try:
                response = await self._call(journal, request)
            except ModelError:
                return None
            self.calls.append(Call((conflict.path,), request, response, whole_file=False))
            args = next((c.arguments for c in response.tool_calls if c.name == RESOLVE_DELETED.name), None) or {}
            action, content = args.get("action"), args.get("content")
            how = f"(attempt {attempt}, {self.model.name})"
            if action == "delete":
                why = f"the model left it deleted as {gone} did; {kept}' change to it is not carried over {how}"
                return Resolution(conflict.path, None, self.rung, why)
            if action == "keep":
                text = _newline(content, conflict) if isinstance(content, str) and content else getattr(conflict, kept)
                problem = _problem(conflict, text, False)
                if problem is None:
                    return Resolution(conflict.path, text, self.rung, f"the model kept the file {kept} changed {how}")
            else:
                problem = "call `resolve_deleted` with `action` delete or keep"
            messages.append(response.as_message())
            messages.extend(_feedback(response, f"That cannot be used: {problem}. Call `resolve_deleted` again."))
        return None
