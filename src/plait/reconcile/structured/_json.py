"""JSON files written one member per line, merged member by member with their indentation kept.

Members are read without their separating commas (so that a member added after the last one needs no edit of
its neighbour) and the commas are written back after the merge; nested objects are containers, arrays and
one-line values are kept whole. The result must load and equal the key-by-key merge of the three loaded values.
"""

from __future__ import annotations

import json
import re
from typing import Any

from plait.reconcile._mergefile import split_lines
from plait.reconcile.structured._tree import END, Notes, merge_tree
from plait.reconcile.structured.base import Entity, EntityMerge

__all__ = ["JsonMerger", "json_entities"]

_MEMBER = re.compile(r'^\s*"((?:[^"\\\n]|\\.)*)"\s*:\s*(.*?)\s*$')
_COMMA = re.compile(r",([ \t]*\r?\n?)$")
_MISSING = object()


class _Clash(Exception):
    """Both sides changed one value differently."""


def _strip(line: str) -> str:
    return _COMMA.sub(r"\1", line)


def _closing(lines: list[str], first: int, close: str) -> int | None:
    """The line that closes the object or array opened at the end of line `first`, at the same indentation."""
    indent = len(lines[first]) - len(lines[first].lstrip())
    for i in range(first + 1, len(lines)):
        stripped = lines[i].strip().rstrip(",")
        if stripped == close and len(lines[i]) - len(lines[i].lstrip()) == indent:
            return i
    return None


def _members(lines: list[str], start: int, end: int, path: str) -> list[Entity] | None:
    entities: list[Entity] = []
    lead = ""
    i = start
    while i < end:
        line = lines[i]
        member = _MEMBER.match(line)
        if not line.strip():
            lead, i = lead + line, i + 1
            continue
        if member is None:
            return None
        name, value = f"{path}.{member[1]}" if path else member[1], member[2].rstrip(",").strip()
        if value in ("{", "["):
            close = _closing(lines, i, "}" if value == "{" else "]")
            if close is None or close >= end:
                return None
            if value == "{":
                children = _members(lines, i + 1, close, name)
                if children is None:
                    return None
                tail = Entity(END, f"end of {name}", "", _strip(lines[close]))
                entities.append(Entity(("member", name), name, lead, line, (*children, tail)))
            else:
                entities.append(Entity(("member", name), name, lead, "".join(lines[i:close]) + _strip(lines[close])))
            lead, i = "", close + 1
            continue
        try:
            json.loads(value)
        except json.JSONDecodeError:
            return None
        entities.append(Entity(("member", name), name, lead, _strip(line)))
        lead, i = "", i + 1
    return [*entities, Entity(("<blank>",), "blank lines", lead, "")] if lead else entities


def json_entities(text: str) -> list[Entity] | None:
    """An object's opening line, its members and its closing line; None if the file is not written that way."""
    lines = split_lines(text)
    filled = [i for i, line in enumerate(lines) if line.strip()]
    if not filled or lines[filled[0]].strip() != "{" or lines[filled[-1]].strip() != "}":
        return None
    members = _members(lines, filled[0] + 1, filled[-1], "")
    if members is None:
        return None
    head = Entity(("<head>",), "start", "", "".join(lines[: filled[0] + 1]))
    return [head, *members, Entity(END, "end of file", "", "".join(lines[filled[-1] :]))]


def _commas(text: str) -> str:
    """A comma after each line that ends a value and is followed by another member."""
    lines = split_lines(text)
    filled = [i for i, line in enumerate(lines) if line.strip()]
    for here, after in zip(filled, filled[1:], strict=False):
        stripped = lines[here].rstrip()
        if lines[after].lstrip().startswith('"') and not stripped.endswith((",", "{", "[")):
            lines[here] = stripped + "," + lines[here][len(stripped) :]
    return "".join(lines)


def _merge3(base: Any, ours: Any, theirs: Any) -> Any:
    if ours == theirs or theirs == base:
        return ours
    if ours == base:
        return theirs
    if not all(isinstance(x, dict) for x in (base, ours, theirs)):
        raise _Clash
    merged = {}
    for key in [*ours, *(k for k in theirs if k not in ours)]:
        value = _merge3(base.get(key, _MISSING), ours.get(key, _MISSING), theirs.get(key, _MISSING))
        if value is not _MISSING:
            merged[key] = value
    return merged


class JsonMerger:
    """Merges pretty-printed JSON objects member by member; arrays and one-line values are whole."""

    extensions: tuple[str, ...] = (".json",)
    file_names: tuple[str, ...] = ()

    def merge(self, base: str, ours: str, theirs: str) -> EntityMerge | None:
        b, o, t = (json_entities(text) for text in (base, ours, theirs))
        if b is None or o is None or t is None:
            return None
        merged = merge_tree(b, o, t, lambda *_: None, Notes())
        if merged is None:
            return None
        text = _commas(merged.text)
        try:
            expected = _merge3(json.loads(base), json.loads(ours), json.loads(theirs))
            if json.loads(text) != expected:
                return None
        except (json.JSONDecodeError, _Clash):
            return None
        return EntityMerge(text, merged.ours_changed, merged.theirs_changed, merged.notes, merged.low_confidence)
