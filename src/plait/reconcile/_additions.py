"""Both sides added lines at one spot: in what order, and held once when both added the same header or entry.

A sorted list stays sorted (high confidence). Otherwise the order is history's when it is known (see
`_order`), else ours first; either way an order was chosen, so the result is of low confidence. A header
both sides added (their additions' common first lines) is kept once, and so is an entry (a bullet, or a
line of an authors-like list) both added.
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


def _trailing_blanks(lines: list[str]) -> tuple[list[str], list[str]]:
    end = len(lines)
    while end and not lines[end - 1].strip():
        end -= 1
    return lines[:end], lines[end:]


def merge_additions(first: Lines, second: Lines, *, listing: bool) -> list[str]:
    """`first`'s additions then `second`'s, a header both start with kept once and entries both add held once.

    `listing`: every line is an entry (an authors list), not only bullets.
    """
    shared = 0
    while shared < min(len(first), len(second)) and first[shared] == second[shared]:
        shared += 1
    if not any(line.strip() for line in first[:shared]):
        shared = 0
    head, one, two = list(first[:shared]), list(first[shared:]), list(second[shared:])
    held = {line.strip() for line in one if _entry(line, listing)}
    two = [line for line in two if not (_entry(line, listing) and line.strip() in held)]
    one_core, one_tail = _trailing_blanks(one)
    two_core, two_tail = _trailing_blanks(two)
    if not two_core:
        return [*head, *one]
    if not one_core:
        return [*head, *two]
    joined = bool(one_tail and two_tail) and bool(_BULLET.match(one_core[-1])) and bool(_BULLET.match(two_core[0]))
    return [*head, *one_core, *([] if joined else one_tail), *two_core, *two_tail]  # one list stays one list
