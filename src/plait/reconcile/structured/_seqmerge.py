"""Three-way merge of two edited sequences (a list's items, a call's arguments, a function's statements).

Each side's changes against the base are found with `difflib`; changes of the two sides that overlap in the
base form a clash. A clash resolves when both sides made the same change, when both only deleted (the union
of the deletions), when one side only deleted items the other side replaced (that side's version; not in
`strict` mode), when both only inserted at one point and the caller allows it (`join`), or when both
replaced one and the same item and the caller can merge the three versions of it (`nested`). Otherwise the
merge fails: None.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = ["Change", "Pick", "changed_items", "keeps_order", "merge_sequences"]

Side = Literal["base", "ours", "theirs", "nested"]


@dataclass(frozen=True)
class Pick:
    """One item of the merged sequence: item `index` of a side, or (`nested`) the merge of base item `index`."""

    side: Side
    index: int
    ours: int = -1
    theirs: int = -1


@dataclass(frozen=True)
class Change:
    """Base items [lo, hi) replaced by a side's items [start, end)."""

    side: Literal["ours", "theirs"]
    lo: int
    hi: int
    start: int
    end: int


Join = Callable[[list[Pick], list[Pick], int], list[Pick] | None]
"""Both sides inserted at base position `at`: the items in one order (theirs' duplicates of ours' dropped), or None."""
Nested = Callable[[int, int, int], bool]
"""Both sides replaced base item i by their item j and k: whether the three merge (a `nested` pick then)."""


def _changes(base: Sequence[Hashable], side: Sequence[Hashable], name: Literal["ours", "theirs"]) -> list[Change]:
    """A side's changes; a run of items replaced one for one is one change per item (each may merge alone)."""
    matcher = difflib.SequenceMatcher(None, list(base), list(side), autojunk=False)
    changes: list[Change] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "replace" and i2 - i1 == j2 - j1:
            changes.extend(Change(name, i1 + k, i1 + k + 1, j1 + k, j1 + k + 1) for k in range(i2 - i1))
        elif tag != "equal":
            changes.append(Change(name, i1, i2, j1, j2))
    return changes


def changed_items(base: Sequence[Hashable], side: Sequence[Hashable]) -> list[int]:
    """The indices of the items a side inserted or put in place of the base's."""
    return [j for change in _changes(base, side, "ours") for j in range(change.start, change.end)]


def keeps_order(merged: Sequence[Hashable], base: Sequence[Hashable], side: Sequence[Hashable]) -> bool:
    """Whether a merged sequence keeps the side's order around each item the side moved."""
    at, was = {k: i for i, k in enumerate(merged)}, set(base)
    now = {k: i for i, k in enumerate(side)}
    moved = [side[j] for j in changed_items(base, side) if side[j] in was and side[j] in at]
    shared = [k for k in side if k in was and k in at]
    return all((now[x] < now[y]) == (at[x] < at[y]) for x in moved for y in shared if y != x)


def _clash(a: Change, b: Change, strict: bool) -> bool:
    if a.lo == a.hi and b.lo == b.hi:
        return a.lo == b.lo
    if a.lo == a.hi or b.lo == b.hi:
        point, other = (a, b) if a.lo == a.hi else (b, a)
        if strict:
            return other.lo <= point.lo <= other.hi
        return other.lo < point.lo < other.hi
    if strict and (a.hi == b.lo or b.hi == a.lo) and (a.start == a.end or b.start == b.end):
        return True  # a deletion next to the other side's change
    return a.lo < b.hi and b.lo < a.hi


def _clusters(changes: list[Change], strict: bool) -> list[list[Change]]:
    parent = list(range(len(changes)))

    def root(i: int) -> int:
        while parent[i] != i:
            i = parent[i]
        return i

    for i, a in enumerate(changes):
        for j in range(i + 1, len(changes)):
            if a.side != changes[j].side and _clash(a, changes[j], strict):
                parent[root(j)] = root(i)
    groups: dict[int, list[Change]] = {}
    for i, change in enumerate(changes):
        groups.setdefault(root(i), []).append(change)
    return sorted(groups.values(), key=lambda g: (min(c.lo for c in g), max(c.hi for c in g)))


def merge_sequences(
    base: Sequence[Hashable],
    ours: Sequence[Hashable],
    theirs: Sequence[Hashable],
    *,
    strict: bool = False,
    join: Join | None = None,
    nested: Nested | None = None,
) -> list[Pick] | None:
    """The merged sequence as picks (ours' copy of an item both kept), or None when a clash does not resolve.

    `strict`: an insertion or a deletion next to the other side's change clashes too (statements of one body).
    """
    mine, yours = _changes(base, ours, "ours"), _changes(base, theirs, "theirs")
    if not mine:
        return [Pick("theirs", j) for j in range(len(theirs))]
    if not yours or list(ours) == list(theirs):
        return [Pick("ours", j) for j in range(len(ours))]
    result: list[Pick] = []
    at = shift_o = shift_t = 0
    for group in _clusters([*mine, *yours], strict):
        lo, hi = min(c.lo for c in group), max(c.hi for c in group)
        result.extend(Pick("ours", k + shift_o) for k in range(at, lo))
        grow_o = sum((c.end - c.start) - (c.hi - c.lo) for c in group if c.side == "ours")
        grow_t = sum((c.end - c.start) - (c.hi - c.lo) for c in group if c.side == "theirs")
        spans = (lo + shift_o, hi + shift_o + grow_o), (lo + shift_t, hi + shift_t + grow_t)
        settled = _settle(group, (lo, hi), spans, (base, ours, theirs), strict, join, nested)
        if settled is None:
            return None
        result.extend(settled)
        at, shift_o, shift_t = hi, shift_o + grow_o, shift_t + grow_t
    result.extend(Pick("ours", k + shift_o) for k in range(at, len(base)))
    return result


def _settle(
    group: list[Change],
    extent: tuple[int, int],
    spans: tuple[tuple[int, int], tuple[int, int]],
    sequences: tuple[Sequence[Hashable], Sequence[Hashable], Sequence[Hashable]],
    strict: bool,
    join: Join | None,
    nested: Nested | None,
) -> list[Pick] | None:
    (lo, hi), (o_lo, o_hi), (t_lo, t_hi) = extent, *spans
    base, ours, theirs = sequences
    o_part = [Pick("ours", j) for j in range(o_lo, o_hi)]
    t_part = [Pick("theirs", j) for j in range(t_lo, t_hi)]
    if all(c.side == "ours" for c in group):
        return o_part
    if all(c.side == "theirs" for c in group):
        return t_part
    if list(ours[o_lo:o_hi]) == list(theirs[t_lo:t_hi]):
        return o_part
    if all(c.start == c.end for c in group):
        gone = {i for c in group for i in range(c.lo, c.hi)}
        return [Pick("base", i) for i in range(lo, hi) if i not in gone]
    if not strict:
        for deleter, kept, part in (("theirs", ours[o_lo:o_hi], o_part), ("ours", theirs[t_lo:t_hi], t_part)):
            dropped = [base[i] for c in group if c.side == deleter for i in range(c.lo, c.hi)]
            if all(c.start == c.end for c in group if c.side == deleter) and not set(dropped) & set(kept):
                return part  # one side only deleted items the other side replaced
    if lo == hi and join is not None:
        return join(o_part, t_part, lo)
    if hi - lo == 1 and o_hi - o_lo == 1 and t_hi - t_lo == 1 and nested is not None and nested(lo, o_lo, t_lo):
        return [Pick("nested", lo, o_lo, t_lo)]
    return None
