"""A function (or other block) both sides edited, merged statement by statement.

The block's header (decorators, signature) must be changed by one side at most; its body's statements merge
as a sequence when each side's changes touch different statements (an insertion next to the other side's
change or a deletion is a clash). A statement both sides replaced merges the same way when it is itself a
block with one body (a nested function, a loop, a `with`, an `if` without `else`). Anything else is left to
the next rung. `stale` tells when one side's new lines use a name the other side took out of the block.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize

from plait.reconcile._mergefile import split_lines
from plait.reconcile.structured._seqmerge import changed_items, merge_sequences

__all__ = ["merge_block", "stale"]

_FILLER = re.compile(r"^\s*(#.*)?$")
_BLOCK = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.For, ast.AsyncFor, ast.While, ast.With, ast.If)


def _first_line(node: ast.stmt) -> int:
    decorators: list[ast.expr] = getattr(node, "decorator_list", [])
    return min([node.lineno, *(d.lineno for d in decorators)]) - 1


def _cut(text: str) -> tuple[str, list[str], str] | None:
    """(header, statements, trailing lines) of a block with one body, or None."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    if len(tree.body) != 1 or not isinstance(tree.body[0], _BLOCK):
        return None
    node = tree.body[0]
    if getattr(node, "orelse", None):
        return None
    lines = split_lines(text)
    start = _first_line(node.body[0])
    if start <= node.lineno - 1 or start < _first_line(node):
        return None  # a body on the header's line
    header_end = start
    while header_end - 1 > node.lineno - 1 and _FILLER.match(lines[header_end - 1]):
        header_end -= 1
    units: list[str] = []
    end = header_end
    for stmt in node.body:
        first, last = _first_line(stmt), stmt.end_lineno or stmt.lineno
        if first < end:
            return None  # statements sharing a line
        units.append("".join(lines[end:last]))
        end = last
    return "".join(lines[:header_end]), units, "".join(lines[end:])


def _names(text: str) -> dict[int, set[str]]:
    """The names and dotted attribute chains in code (not strings or comments), by line (from 0)."""
    found: dict[int, set[str]] = {}
    chain, row, after_dot = "", 0, False
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.NAME:
                chain, row = (
                    (f"{chain}.{token.string}", row) if after_dot and chain else (token.string, token.start[0] - 1)
                )
                found.setdefault(row, set()).add(chain)
            elif not (token.type == tokenize.OP and token.string == "."):
                chain = ""
            after_dot = token.type == tokenize.OP and token.string == "."
    except (tokenize.TokenError, SyntaxError):
        return {-1: {"<unreadable>"}}
    return found


def stale(base: str, ours: str, theirs: str) -> bool:
    """Whether one side's new lines use a name or attribute the other side took out of the block."""
    lines = [split_lines(text) for text in (base, ours, theirs)]
    names = [_names(text) for text in (base, ours, theirs)]
    every = [set().union(*found.values()) for found in names]
    for side, other in ((1, 2), (2, 1)):
        gone = every[0] - every[side]
        kept = set(lines[side])
        new = [j for j in changed_items(lines[0], lines[other]) if lines[other][j] not in kept]
        if gone & set().union(*(names[other].get(j, set()) for j in new)):
            return True
    return False


def _three(base: str, ours: str, theirs: str) -> str | None:
    if ours == theirs or theirs == base:
        return ours
    return theirs if ours == base else None


def _dedent(text: str) -> tuple[str, str] | None:
    first = next((line for line in split_lines(text) if line.strip()), "")
    indent = first[: len(first) - len(first.lstrip())]
    lines = split_lines(text)
    if any(line.strip() and not line.startswith(indent) for line in lines):
        return None
    return indent, "".join(line[len(indent) :] if line.strip() else line for line in lines)


def merge_block(base: str, ours: str, theirs: str) -> str | None:
    """The block with both sides' changes to different statements of its body, or None."""
    cuts = [_cut(text) for text in (base, ours, theirs)]
    b, o, t = cuts
    if b is None or o is None or t is None:
        return None
    header, rest = _three(b[0], o[0], t[0]), _three(b[2], o[2], t[2])
    if header is None or rest is None:
        return None
    merged: dict[int, str] = {}

    def nested(i: int, j: int, k: int) -> bool:
        parts = [_dedent(text) for text in (b[1][i], o[1][j], t[1][k])]
        if any(p is None for p in parts) or len({p[0] for p in parts if p}) != 1:
            return False
        indent = parts[0][0] if parts[0] else ""
        inner = merge_block(*(p[1] for p in parts if p))
        if inner is not None:
            merged[i] = "".join(indent + line if line.strip() else line for line in split_lines(inner))
        return inner is not None

    picks = merge_sequences(b[1], o[1], t[1], strict=True, nested=nested)
    if not picks:
        return None  # a clash, or each side deleted what the other kept: no body left
    sides = {"base": b[1], "ours": o[1], "theirs": t[1]}
    body = "".join(merged[p.index] if p.side == "nested" else sides[p.side][p.index] for p in picks)
    return header + body + rest
