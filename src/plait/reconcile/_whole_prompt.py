"""Today's whole-file prompt: every side of a conflicted file in full and git's marked attempt. The LLM rung
sends it only for a file whose hunks cannot be isolated; the benchmark counts it for every file."""

from __future__ import annotations

import re

from plait.messages import ToolSpec
from plait.reconcile.types import FileConflict, MergeContext

__all__ = ["RESOLVE", "WHOLE_SYSTEM", "fence", "whole_file_prompt"]

WHOLE_SYSTEM = """You resolve one git merge conflict. Two tasks changed the same file, each from the same base.
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


def fence(text: str) -> str:
    """A backtick fence longer than any run of backticks in `text`."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def _fenced(label: str, text: str | None) -> str:
    if text is None:
        return f"## {label}\n(the file does not exist on this side)\n"
    mark = fence(text)
    return f"## {label}\n{mark}\n{text}{'' if text.endswith(chr(10)) else chr(10)}{mark}\n"


def whole_file_prompt(conflict: FileConflict, context: MergeContext) -> str:
    """The whole-file prompt: every side of the file in full, and git's marked attempt."""
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
