"""Where code went that one side removed from a conflict hunk while the other side changed it: within the file
(the same class, for a method) or elsewhere in that side's tree."""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence

from plait.reconcile._intent import defined_names, where_defined
from plait.reconcile._locate import Located, Piece
from plait.reconcile._mergefile import split_lines
from plait.reconcile.types import MergeSite

__all__ = ["def_lines", "moved"]


def _extent(view: Sequence[str], at: int, limit: int = 60) -> int:
    """The end of the def or class whose header is at line `at` (by indentation), at most `limit` lines on."""
    indent = len(view[at]) - len(view[at].lstrip())
    end = at + 1
    while end < len(view) and end - at < limit:
        line = view[end]
        if line.strip() and not line.lstrip().startswith("#") and len(line) - len(line.lstrip()) <= indent:
            break
        end += 1
    while end > at + 1 and not view[end - 1].strip():
        end -= 1
    return end


def _owner(lines: Sequence[str], at: int, indent: int) -> str:
    """The class whose body holds line `at` (indented `indent`), or "" at the top level."""
    for i in range(min(at, len(lines)) - 1, -1, -1):
        line = lines[i]
        if line.strip() and len(line) - len(line.lstrip()) < indent:
            match = re.match(r"\s*class\s+(\w+)", line)
            if match:
                return match.group(1)
            if not line.lstrip().startswith(("#", "@", ")", "]", "}")):
                indent = len(line) - len(line.lstrip())
    return ""


_DEF = re.compile(r"^\s*(?:async\s+def|def|class)\s+(\w+)")


def def_lines(text: str) -> set[int] | None:
    """The (0-based) lines of a Python text where a def or class statement starts; None if it does not parse."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    return {node.lineno - 1 for node in ast.walk(tree) if isinstance(node, kinds)}


def moved(
    site: MergeSite | None,
    loc: Located,
    piece: Piece,
    places: dict[str, list[tuple[int, int, str]]],
    real: set[int] | None,
) -> list[str]:
    """Where a def or class went that one side removed from a hunk the other side edited: within the file (in
    the same class, for a method), else, for a top-level one, elsewhere in that side's tree. `real`: the base's
    lines where a def or class starts (None: unknown), so that one in a docstring's example is not taken."""
    said: list[str] = []
    if not loc.python:  # a `def` in a document's or a config's block is an example, not code that moved
        return said
    hunk = piece.hunk
    inside = {i for p in loc.pieces for i in range(p.start, p.end)}
    base = split_lines(loc.conflict.base or "")
    first = piece.spans["base"][0]
    removable = [  # a `def` or `class` in a docstring's example is not one
        (m.group(1), k)
        for k, line in enumerate(hunk.base)
        if (m := _DEF.match(line)) and (real is None or first + k in real)
    ]
    for side, other in (("ours", "theirs"), ("theirs", "ours")):
        kept = set(defined_names(getattr(hunk, side)))
        if list(getattr(hunk, other)) == list(hunk.base):
            continue
        for name, at in [(n, k) for n, k in removable if n not in kept]:
            header = re.compile(rf"(\s*)(async\s+def|def|class)\s+{name}\b")
            depth = len(hunk.base[at]) - len(hunk.base[at].lstrip())
            owner = _owner(base, piece.spans["base"][0] + at, depth + 1) if depth else ""
            own = split_lines(getattr(loc.conflict, side) or "")
            a, b = piece.spans[side]
            has = any(header.match(line) for i, line in enumerate(own) if not a <= i < b)
            here = [
                i
                for i, line in enumerate(loc.view)
                if has and i not in inside and header.match(line) and _owner(loc.view, i, depth + 1) == owner
            ]
            if here:
                end = _extent(loc.view, here[0])
                places.setdefault(loc.conflict.path, []).append((here[0], end, name))
                where = f"it is now at line {here[0] + 1} of this file (shown below; you may edit it)"
            elif depth:
                where = f"{side} has no `{name}` in class `{owner}` any more" if owner else f"{side} dropped it"
            else:
                found = where_defined(site, side, [name]).get(name, []) if site else []
                where = f"{side} defines it at {', '.join(found)}" if found else f"{side} defines it nowhere"
            said.append(f"{side} removed `{name}` from {piece.id} while {other} changed it; {where}.")
    return said
