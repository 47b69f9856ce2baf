"""A file one side deleted and the other changed: the change as a diff, and where the deleted code went.

The model decides to keep the file (as the side that changed it wrote it, or rewritten) or to leave it deleted;
it never re-reads the file four times over.
"""

from __future__ import annotations

import difflib
import re

from plait.messages import ToolSpec
from plait.reconcile._intent import clean_message, where_defined
from plait.reconcile.types import FileConflict, MergeContext, MergeSite

__all__ = ["RESOLVE_DELETED", "deleted_prompt", "sides"]

RESOLVE_DELETED = ToolSpec(
    name="resolve_deleted",
    description="Decide the fate of a file one side deleted and the other changed.",
    parameters={
        "type": "object",
        "properties": {
            "action": {
                "type": "string",
                "enum": ["delete", "keep"],
                "description": "delete: the file stays deleted; keep: it stays, as the side that changed it wrote it.",
            },
            "content": {"type": "string", "description": "Only with keep, to change it: the whole file."},
        },
        "required": ["action"],
    },
)

_TOP = re.compile(r"^(?:async\s+def|def|class)\s+(\w+)", re.MULTILINE)
_DIFF_LINES = 400


def sides(conflict: FileConflict) -> tuple[str, str]:
    """(the side that deleted the file, the side that changed it)."""
    return ("ours", "theirs") if conflict.ours is None else ("theirs", "ours")


def _diff(conflict: FileConflict, kept: str) -> str:
    old = (conflict.base or "").splitlines(keepends=True)
    new = (getattr(conflict, kept) or "").splitlines(keepends=True)
    lines = [x if x.endswith("\n") else x + "\n" for x in difflib.unified_diff(old, new, "base", kept, n=2)]
    for i, line in enumerate(lines):
        at = re.match(r"@@ -(\d+)", line)
        heads = [m for m in _TOP.finditer("".join(old[: int(at.group(1))]))] if at else []
        if heads:
            lines[i] = line.rstrip("\n") + f" {heads[-1].group(0)}\n"
    if len(lines) > _DIFF_LINES:
        lines = [*lines[:_DIFF_LINES], f"… ({len(lines) - _DIFF_LINES} more diff lines)\n"]
    return "".join(lines[2:])


def _where(site: MergeSite | None, conflict: FileConflict, gone: str) -> str:
    names = list(dict.fromkeys(_TOP.findall(conflict.base or "")))
    if site is None or not names:
        return ""
    found = where_defined(site, gone, names)
    moved = [f"- `{n}`: {', '.join(found[n])}" for n in names if n in found][:25]
    lost = [n for n in names if n not in found]
    text = f"## Where {gone} has the file's top-level definitions now\n" + "\n".join(moved)
    if lost:
        text += f"\n{gone} defines none of: " + ", ".join(f"`{n}`" for n in lost[:25])
    return text


def deleted_prompt(conflict: FileConflict, context: MergeContext) -> str:
    """The prompt for a file one side deleted and the other changed."""
    gone, kept = sides(conflict)
    parts = [f"# `{conflict.path}`: {gone} deleted this file, {kept} changed it"]
    for side, task, summary in (
        ("ours", context.ours_task, context.ours_intent),
        ("theirs", context.theirs_task, context.theirs_intent),
    ):
        brief = clean_message(task or summary, 800)
        if brief:
            parts.append(f"## The task behind {side}\n{brief}")
    diff = _diff(conflict, kept)
    fence = "`" * max(3, 1 + max((len(m) for m in re.findall(r"`+", diff)), default=0))
    parts.append(f"## What {kept} changed in it (diff against the base)\n{fence}diff\n{diff}{fence}")
    where = _where(context.site, conflict, gone)
    if where:
        parts.append(where)
    parts.append(
        f"Call `resolve_deleted` with `delete` to leave the file deleted, or `keep` to keep the version {kept} "
        f"changed (give `content` only to change it). Deleting it drops {kept}' change above: plait cannot carry "
        "it to the files the code went to, so delete only when that change is not needed there or is already there."
    )
    return "\n\n".join(parts) + "\n"
