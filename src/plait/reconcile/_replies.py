"""What the LLM rung makes of a model's reply: the answer it holds, why it cannot be used, and what to say back."""

from __future__ import annotations

import re
from collections.abc import Sequence

from plait.messages import Message, ModelResponse, ToolResultMessage, UserMessage
from plait.reconcile._locate import Located
from plait.reconcile._resolver_prompt import RESOLVE_CONFLICTS
from plait.reconcile._splice import Edit, blocks_from_whole
from plait.reconcile._syntax import conflict_markers, syntax_error
from plait.reconcile.types import FileConflict

__all__ = ["answer", "feedback", "hunk_answer", "newline", "problem"]

_FENCE = re.compile(r"^(`{3,}|~{3,})[^\n]*\n(.*?)^\1[ \t]*$", re.DOTALL | re.MULTILINE)
_HIDDEN = "[REDACTED]"


def answer(response: ModelResponse) -> tuple[str | None, bool] | None:
    """(content, delete) of a whole-file reply: its `resolve` call, else its longest fenced block; None if neither."""
    for call in response.tool_calls:
        args = call.arguments or {}
        if isinstance(args.get("content"), str) or args.get("delete") is True:
            return (None, True) if args.get("delete") is True else (args["content"], False)
    blocks = [m.group(2) for m in _FENCE.finditer(response.text)]
    return (max(blocks, key=len), False) if blocks else None


def problem(conflict: FileConflict, content: str | None, delete: bool) -> str | None:
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


def newline(content: str, conflict: FileConflict) -> str:
    sides = [s for s in (conflict.ours, conflict.theirs) if s]
    if content and sides and all(s.endswith("\n") for s in sides) and not content.endswith("\n"):
        return content + "\n"
    return content


def hunk_answer(response: ModelResponse, located: Sequence[Located]) -> tuple[dict[str, str], list[Edit]] | str:
    """The texts per block id and the edits of a `resolve_conflicts` reply, or why there are none."""
    texts: dict[str, str] = {}
    edits: list[Edit] = []
    calls = [c for c in response.tool_calls if c.name == RESOLVE_CONFLICTS.name]
    if not calls:
        whole = answer(response) if response.tool_calls else None
        if whole is not None and whole[0] is not None and len(located) == 1:
            # a whole file, accepted only when it keeps every line outside the blocks
            cut = blocks_from_whole(located[0], whole[0])
            return (cut, []) if cut is not None else "the file given changes code outside the conflict blocks"
        return "no `resolve_conflicts` call in the reply"
    for call in calls:
        args = call.arguments
        hunks = args.get("hunks") if args else None
        if not isinstance(hunks, list):
            return "`hunks` must be a list of {id, text} objects"
        for item in hunks:
            if (
                not isinstance(item, dict)
                or not isinstance(item.get("id"), str)
                or not isinstance(item.get("text"), str)
            ):
                return "each entry of `hunks` needs a string `id` and a string `text`"
            texts[item["id"].strip()] = item["text"]
        for item in (args or {}).get("edits") or []:
            if not isinstance(item, dict) or not all(isinstance(item.get(k), str) for k in ("path", "find", "replace")):
                return "each entry of `edits` needs strings `path`, `find` and `replace`"
            edits.append(Edit(item["path"], item["find"], item["replace"]))
    return texts, edits


def feedback(response: ModelResponse, text: str) -> list[Message]:
    """What to tell the model after an unusable answer: a tool result per call, or a user message."""
    if not response.tool_calls:
        return [UserMessage(text=text)]
    return [ToolResultMessage(call_id=c.id, name=c.name, content=text, is_error=True) for c in response.tool_calls]
