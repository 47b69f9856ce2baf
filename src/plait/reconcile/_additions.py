"""Both sides added lines at one spot: in what order, and held once when both added the same header or entry.

A sorted list stays sorted (high confidence). Otherwise ours' additions go first: an order was chosen, so
the result is of low confidence. A header both sides added (their additions' common first entries) is kept
once, and so is a line of an authors-like list both added.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = ["Added", "added_both", "merge_additions", "sorted_merge"]

Lines = Sequence[str]

_BULLET = re.compile(r"^\s*(?:[-*+]|\d+\.)\s+\S")


@dataclass(frozen=True)
class Added:
    """What each side added to the same spot, `where` relative to the base lines of the hunk."""

    where: Literal["after", "before"]
    ours: list[str]
    theirs: list[str]


def added_both(ours: Lines, base: Lines, theirs: Lines) -> Added | None:
    """Both sides only added lines, at the same place (after or before what base had)."""
    n = len(base)
    if not ours or not theirs:
        return None
    if list(ours[:n]) == list(base) == list(theirs[:n]):
        return Added("after", list(ours[n:]), list(theirs[n:]))
    if n and list(ours[len(ours) - n :]) == list(base) == list(theirs[len(theirs) - n :]):
        return Added("before", list(ours[: len(ours) - n]), list(theirs[: len(theirs) - n]))
    return None


def _key(line: str) -> str:
    return line.strip().rstrip(",").lower()


def _run_above(lines: Lines) -> list[str]:
    """The last run of non-blank lines."""
    run: list[str] = []
    for line in reversed(lines):
        if not line.strip():
            break
        run.insert(0, line)
    return run


def _run_below(lines: Lines) -> list[str]:
    run: list[str] = []
    for line in lines:
        if not line.strip():
            break
        run.append(line)
    return run


def _ascending(lines: Lines) -> bool:
    keys = [_key(x) for x in lines]
    return len(keys) >= 3 and keys == sorted(keys) and len(set(keys)) == len(keys)


def sorted_merge(ours: Lines, theirs: Lines, above: Lines, below: Lines) -> list[str] | None:
    """Both sides' new one-line entries in sorted place, when the list they went into is sorted on each side."""
    if not ours or not theirs or any(not line.strip() for line in (*ours, *theirs)):
        return None
    before, after = _run_above(above), _run_below(below)
    if not all(_ascending([*before, *side, *after]) for side in (ours, theirs)):
        return None
    merged = sorted({_key(x): x for x in (*ours, *theirs)}.values(), key=_key)
    return merged if _ascending([*before, *merged, *after]) else None


def _entry(line: str, listing: bool) -> bool:
    return bool(line.strip()) and (listing or bool(_BULLET.match(line)))


def _chunks(lines: Lines, listing: bool) -> list[list[str]]:
    """Lines cut into entries: a bullet (or, in a listing, any line) with the lines that continue it."""
    chunks: list[list[str]] = []
    for line in lines:
        starts = not line.strip() or _entry(line, listing) or not chunks or not chunks[-1][-1].strip()
        if starts:
            chunks.append([line])
        else:
            chunks[-1].append(line)
    return chunks


def _text(chunk: Lines) -> str:
    return " ".join(line.strip() for line in chunk)


def _trailing_blanks(lines: list[str]) -> tuple[list[str], list[str]]:
    end = len(lines)
    while end and not lines[end - 1].strip():
        end -= 1
    return lines[:end], lines[end:]


def merge_additions(first: Lines, second: Lines, *, listing: bool) -> list[str]:
    """`first`'s additions then `second`'s, a header (or first entries) both start with kept once.

    `listing`: every line is an entry (an authors list), and one both sides add is held once; elsewhere an
    entry both add stays twice (a changelog lists a fix under two releases).
    """
    ones, twos = _chunks(first, listing), _chunks(second, listing)
    shared = 0
    while shared < min(len(ones), len(twos)) and ones[shared] == twos[shared]:
        shared += 1
    if not any(line.strip() for chunk in ones[:shared] for line in chunk):
        shared = 0
    head = [line for chunk in ones[:shared] for line in chunk]
    one = [line for chunk in ones[shared:] for line in chunk]
    held = {_text(chunk) for chunk in ones[shared:]} if listing else set()
    two = [line for chunk in twos[shared:] if not (chunk[0].strip() and _text(chunk) in held) for line in chunk]
    one_core, one_tail = _trailing_blanks(one)
    two_core, two_tail = _trailing_blanks(two)
    if not two_core:
        return [*head, *one]
    if not one_core:
        return [*head, *two]
    joined = bool(one_tail and two_tail and _BULLET.match(two_core[0]) and any(_BULLET.match(x) for x in one_core))
    return [*head, *one_core, *([] if joined else one_tail), *two_core, *two_tail]  # one list stays one list
