"""The LLM rung: a model sees a conflicted file's base, ours and theirs and both tasks' intents, and writes it whole.

Its answer counts only when it is free of new conflict markers and, for the kinds of file that can be
checked, parses. Each distinct conflict is its own journal (agent `resolver-<hash>`), so a call is logged
before it is sent and a conflict met again (a rebuilt batch, a resumed run) is read back, never paid twice.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from plait.errors import ModelError
from plait.events.journal import Journal
from plait.events.store import EventStore, redaction
from plait.models.base import (
    Message,
    Model,
    ModelRequest,
    ModelResponse,
    ToolResultMessage,
    ToolSpec,
    UserMessage,
)
from plait.models.pricing import PriceTable
from plait.reconcile._syntax import conflict_markers, syntax_error
from plait.reconcile.types import FileConflict, MergeContext, Resolution, Rung
from plait.redact import scrub_strings

__all__ = ["LLMResolver"]

SYSTEM = """You resolve one git merge conflict. Two tasks changed the same file, each from the same base.
Write the whole file as it must be once both changes are combined: keep what each side meant to do, and
when they truly contradict, choose what fits the rest of the file and both tasks' goals.
Answer by calling the `resolve` tool with the complete file in `content` (every line, not only the
conflicted parts); set `delete` to true only when the file should no longer exist.
Never leave conflict markers, and add no commentary inside the file."""

RESOLVE = ToolSpec(
    name="resolve",
    description="Give the complete resolved file.",
    parameters={
        "type": "object",
        "properties": {
            "content": {"type": "string", "description": "The whole file, as it must be after the merge."},
            "delete": {"type": "boolean", "description": "True when the file should be deleted instead."},
        },
        "required": ["content"],
    },
)

_FENCE = re.compile(r"^(`{3,}|~{3,})[^\n]*\n(.*?)^\1[ \t]*$", re.DOTALL | re.MULTILINE)
_MIN_OUTPUT, _MAX_OUTPUT = 4096, 32_000


def _fenced(label: str, text: str | None) -> str:
    if text is None:
        return f"## {label}\n(the file does not exist on this side)\n"
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"## {label}\n{fence}\n{text}{'' if text.endswith(chr(10)) else chr(10)}{fence}\n"


def _prompt(conflict: FileConflict, context: MergeContext) -> str:
    parts = [f"# Conflict in `{conflict.path}`\n"]
    for side, task, intent in (
        ("ours", context.ours_task, context.ours_intent),
        ("theirs", context.theirs_task, context.theirs_intent),
    ):
        if task or intent:
            parts.append(f"## The task behind {side}\n{task.strip()}\n\nWhat it did: {intent.strip() or '?'}\n")
    if context.notes:
        parts.append("## Notes the agents posted\n" + "\n".join(f"- {n.strip()}" for n in context.notes) + "\n")
    parts.append(_fenced("base (the common ancestor)", conflict.base))
    parts.append(_fenced("ours (already integrated)", conflict.ours))
    parts.append(_fenced("theirs (being merged in)", conflict.theirs))
    if conflict.merged:
        parts.append(_fenced("git's attempt, with conflict markers", conflict.merged))
    parts.append("Call `resolve` with the whole resolved file.")
    return "\n".join(parts)


def _answer(response: ModelResponse) -> tuple[str | None, bool] | None:
    """(content, delete) from a reply: the `resolve` call, else the longest fenced block; None when absent."""
    for call in response.tool_calls:
        args = call.arguments or {}
        if isinstance(args.get("content"), str) or args.get("delete") is True:
            return (None, True) if args.get("delete") is True else (args["content"], False)
    blocks = [m.group(2) for m in _FENCE.finditer(response.text)]
    return (max(blocks, key=len), False) if blocks else None


def _problem(conflict: FileConflict, content: str | None, delete: bool) -> str | None:
    """Why an answer cannot be used, or None when it can."""
    if delete:
        return None if None in (conflict.ours, conflict.theirs) else "both sides keep this file: do not delete it"
    assert content is not None
    if _HIDDEN in content and not any(_HIDDEN in (s or "") for s in (conflict.base, conflict.ours, conflict.theirs)):
        # The reply was redacted as the log keeps it: what plait would write is not what the model wrote.
        return "the answer holds text that looks like a secret, which plait does not write into a merged file"
    if conflict_markers(content, conflict.base, conflict.ours, conflict.theirs):
        return "the file still has conflict markers (<<<<<<< or >>>>>>> lines)"
    sides = [s for s in (conflict.ours, conflict.theirs) if s is not None]
    if any(syntax_error(conflict.path, s) is None for s in sides):
        return syntax_error(conflict.path, content)
    return None


def _newline(content: str, conflict: FileConflict) -> str:
    sides = [s for s in (conflict.ours, conflict.theirs) if s]
    if content and sides and all(s.endswith("\n") for s in sides) and not content.endswith("\n"):
        return content + "\n"
    return content


_HIDDEN = "[REDACTED]"


class LLMResolver:
    """The `llm` rung, backed by `model`; with a `store`, every call is journaled under `run_id`."""

    rung: Rung = "llm"

    def __init__(
        self,
        model: Model,
        store: EventStore | None = None,
        run_id: str = "",
        *,
        prices: PriceTable | None = None,
        attempts: int = 2,
        max_chars: int = 200_000,
    ) -> None:
        """`attempts` bounds the tries per conflict; conflicts over `max_chars` (all sides) are not sent."""
        self.model, self.store, self.run_id = model, store, run_id
        self.prices = prices or PriceTable()
        self.attempts, self.max_chars = attempts, max_chars
        self.cost_usd = 0.0
        self._answers: dict[str, Resolution | None] = {}

    async def resolve(self, conflict: FileConflict, context: MergeContext) -> Resolution | None:
        """A whole-file resolution the model wrote and the checks accepted, or None."""
        sides = (conflict.base, conflict.ours, conflict.theirs)
        if sum(len(s or "") for s in sides) > self.max_chars or any("\0" in (s or "") for s in sides):
            return None
        first = UserMessage(text=_prompt(conflict, context))
        request = self._request([first], conflict)
        key = request.fingerprint()
        if key not in self._answers:
            self._answers[key] = await self._converse(conflict, [first], f"resolver-{key[:12]}")
        return self._answers[key]

    def _request(self, messages: Sequence[Message], conflict: FileConflict) -> ModelRequest:
        longest = max(len(s or "") for s in (conflict.base, conflict.ours, conflict.theirs))
        budget = min(max(_MIN_OUTPUT, longest // 3 + 1024), _MAX_OUTPUT)
        return ModelRequest(system=SYSTEM, messages=tuple(messages), tools=(RESOLVE,), max_output_tokens=budget)

    async def _call(self, journal: Journal | None, request: ModelRequest) -> ModelResponse:
        """The model's reply as the log keeps it (redacted), so that a resumed integration decides the same."""
        if journal is None:
            return await self.model.complete(request)
        response, cost = await journal.complete(self.model, request)
        self.cost_usd += cost
        assert self.store is not None
        data = response.model_dump(mode="json")
        clean = scrub_strings(data, redaction(self.store))
        return response if clean == data else ModelResponse.model_validate(clean)

    async def _converse(self, conflict: FileConflict, messages: list[Message], agent: str) -> Resolution | None:
        journal = Journal(self.store, self.run_id, agent, self.prices) if self.store is not None else None
        for attempt in range(1, self.attempts + 1):
            try:
                response = await self._call(journal, self._request(messages, conflict))
            except ModelError:
                return None
            answer = _answer(response)
            problem = (
                "no `resolve` call and no fenced file in the reply" if answer is None else _problem(conflict, *answer)
            )
            if problem is None and answer is not None:
                content, delete = answer
                text = None if delete else _newline(content or "", conflict)
                why = "the model deleted the file" if delete else "the model rewrote the file"
                return Resolution(conflict.path, text, self.rung, f"{why} (attempt {attempt}, {self.model.name})")
            messages.append(response.as_message())
            messages.extend(_feedback(response, problem or ""))
        return None


def _feedback(response: ModelResponse, problem: str) -> list[Message]:
    """What to tell the model after an unusable answer: a tool result per call, or a user message."""
    text = f"That cannot be used: {problem}. Call `resolve` again with the whole corrected file."
    if not response.tool_calls:
        return [UserMessage(text=text)]
    return [ToolResultMessage(call_id=c.id, name=c.name, content=text, is_error=True) for c in response.tool_calls]
