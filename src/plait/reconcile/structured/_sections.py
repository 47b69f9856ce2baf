"""reStructuredText and Markdown cut into sections (a heading and the blocks under it) whose texts rebuild the file.

A heading is a Markdown `#` line, or a one-line title (after a blank line) with an underline, and perhaps an
overline, of one repeated punctuation character. A section's blocks are paragraphs, list items (a bullet and
the lines that continue it) and atoms: a fenced code block, or any block with its indented continuation
(a directive, a literal block, a nested list). Blank lines before a block are its `lead`; those after a
section's last block are the section's `tail`. Link targets (`.. _name:`) just above a heading are that
heading's section's `lead`, so that they move and merge with it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from functools import cached_property

from plait.reconcile._mergefile import split_lines

__all__ = ["Node", "blocks", "is_item", "item_key", "sections", "unique"]

_ADORN = re.compile(r"^([!-/:-@\[-`{-~])\1{2,}[ \t]*\r?\n?$")
_ATX = re.compile(r"^(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*\r?\n?$")
_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})")
_TARGET = re.compile(r"^\.\. _[^:]*:[ \t]*\r?\n?$")
_BULLET = re.compile(r"^[ \t]*(?:[-*+]|\d+[.)]|#\.)(?:[ \t]|\r?\n?$)")

Style = tuple[str, int]


@dataclass(frozen=True)
class Node:
    """A section (`body` its heading lines, `children` its blocks) or a block (`body` its lines)."""

    key: tuple[str, ...]
    kind: str
    lead: str
    body: str
    children: tuple[Node, ...] = ()
    tail: str = ""

    @cached_property
    def text(self) -> str:
        """The node's exact source."""
        return self.lead + self.body + "".join(child.text for child in self.children) + self.tail

    @property
    def label(self) -> str:
        """A short name for the node, for a resolution's reason."""
        words = " ".join(self.key[1:]) if self.kind == "section" else self.key[1]
        return (words[:40] or "the preamble") if self.kind == "section" else words[:40]


def _blank(line: str) -> bool:
    return not line.strip()


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _heading(lines: Sequence[str], i: int) -> tuple[int, Style, str] | None:
    """The heading starting at line `i`: its line count, style and title; None if there is none."""
    line = lines[i]
    if i and not _blank(lines[i - 1]):
        return None
    if match := _ATX.match(line):
        return 1, ("#", len(match.group(1))), match.group(2)
    over = _ADORN.match(line)
    at = i + 1 if over else i
    if at + 1 >= len(lines) or _blank(lines[at]) or _indent(lines[at]) or _ADORN.match(lines[at]):
        return None
    under = _ADORN.match(lines[at + 1])
    if not under or (over and over.group(1) != under.group(1)):
        return None
    return (3 if over else 2), (under.group(1), 1 if over else 0), lines[at].strip()


def _path(stack: list[tuple[Style, str]], style: Style, title: str) -> tuple[str, ...]:
    if style[0] == "#":
        while stack and stack[-1][0][0] == "#" and stack[-1][0][1] >= style[1]:
            stack.pop()
    elif any(s == style for s, _ in stack):
        while stack.pop()[0] != style:
            pass
    stack.append((style, title))
    return tuple(t for _, t in stack)


def unique(key: tuple[str, ...], seen: Counter[tuple[str, ...]]) -> tuple[str, ...]:
    """`key`, or for its second and later occurrences `key` with its count."""
    seen[key] += 1
    return key if seen[key] == 1 else (*key, f"#{seen[key]}")


def is_item(node: Node) -> bool:
    """Whether a block is a list item."""
    return node.kind == "block" and bool(_BULLET.match(node.body))


def item_key(node: Node) -> Hashable | None:
    """A list item's text, case folded, to tell whether a list is sorted; None for other blocks."""
    return node.key[1].casefold() if is_item(node) else None


def _starts_item(line: str, first: str) -> bool:
    return bool(_BULLET.match(line)) and _indent(line) <= _indent(first)


def blocks(lines: Sequence[str]) -> tuple[tuple[Node, ...], str]:
    """A section's body lines as blocks, and the blank lines after the last one."""
    chunks: list[tuple[str, list[str]]] = []
    lead: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if _blank(line):
            lead.append(line)
            i += 1
            continue
        fence = _FENCE.match(line)
        last = chunks[-1][1] if chunks else None
        if last is not None and lead and _indent(line) > _indent(last[0]):
            last.extend(lead)  # an indented continuation of the block above
            last.append(line)
        elif last is not None and not lead and not fence and not _starts_item(line, last[0]):
            last.append(line)
        else:
            chunks.append(("".join(lead), [line]))
        lead = []
        i += 1
        if fence:
            close = fence.group(1)[0] * len(fence.group(1))
            while i < len(lines):
                chunks[-1][1].append(lines[i])
                i += 1
                if lines[i - 1].strip().startswith(close):
                    break
    seen: Counter[tuple[str, ...]] = Counter()
    nodes = tuple(
        Node(unique(("block", " ".join(x.strip() for x in body)), seen), "block", lead_text, "".join(body))
        for lead_text, body in chunks
    )
    return nodes, "".join(lead)


def sections(text: str) -> list[Node]:
    """The file's sections in order, the first one (heading-less) the preamble; their texts rebuild `text`."""
    lines = split_lines(text)
    starts: list[tuple[int, int, tuple[str, ...]]] = [(0, 0, ())]
    stack: list[tuple[Style, str]] = []
    fenced = ""
    i = 0
    while i < len(lines):
        fence = _FENCE.match(lines[i])
        if fenced or fence:
            if fence and not fenced:
                fenced = fence.group(1)[0] * len(fence.group(1))
            elif lines[i].strip().startswith(fenced):
                fenced = ""
            i += 1
            continue
        found = _heading(lines, i)
        if found is None:
            i += 1
            continue
        count, style, title = found
        starts.append((i, count, _path(stack, style, title)))
        i += count
    seen: Counter[tuple[str, ...]] = Counter()
    result: list[Node] = []
    lead = ""
    for n, (start, count, path) in enumerate(starts):
        end = starts[n + 1][0] if n + 1 < len(starts) else len(lines)
        children, tail = blocks(lines[start + count : end])
        labels = len(children)
        while n + 1 < len(starts) and labels and _TARGET.match(children[labels - 1].body):
            labels -= 1  # link targets just above the next heading name that heading's section
        key = unique(("section", *path), seen)
        after = "".join(child.body if i == labels else child.text for i, child in enumerate(children[labels:], labels))
        result.append(
            Node(key, "section", lead, "".join(lines[start : start + count]), children[:labels],
                 children[labels].lead if labels < len(children) else tail)
        )  # fmt: skip
        lead = after + tail if labels < len(children) else ""
    return result
