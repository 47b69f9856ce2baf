"""What the configuration mergers share: a merge that collects the rules' notes, and line-list values merged by item."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from plait.reconcile.structured._moot import Moot, drop_moot, repinned
from plait.reconcile.structured._pins import newer_pin, requirement
from plait.reconcile.structured.base import Entity, EntityMerge, merge_entities

__all__ = [
    "END",
    "Notes",
    "blank_or_comment",
    "item_entities",
    "merge_items",
    "merge_list",
    "merge_tree",
    "pin_leaf",
    "with_end",
]

END = ("<end>",)

ItemKey = Callable[[str], str]
_Leaf = Callable[[tuple[str, ...], str, str, str], str | None]


@dataclass
class Notes:
    """The notes of the rules that decided during one file's merge; any note makes the merge low confidence."""

    notes: list[str] = field(default_factory=list)

    def add(self, note: str) -> None:
        if note not in self.notes:
            self.notes.append(note)


def blank_or_comment(line: str, marks: str = "#") -> bool:
    """A blank line or one whose first non-blank character starts a comment."""
    stripped = line.strip()
    return not stripped or stripped[0] in marks


def with_end(entities: list[Entity], tail: str) -> list[Entity]:
    """The entities and, when text follows the last one, an end entity holding it."""
    return [*entities, Entity(END, "end of file", tail, "")] if tail else entities


def _anchors(base: Sequence[Entity], side: Sequence[Entity], other: Sequence[Entity]) -> set[tuple[str, ...] | None]:
    """For each entity `side` alone added, the nearest entity before it that the base had (None: the start)."""
    known = {e.key for e in base}
    both = {e.key for e in other}
    anchors: set[tuple[str, ...] | None] = set()
    last: tuple[str, ...] | None = None
    for entity in side:
        if entity.key in known:
            last = entity.key
        elif entity.key not in both:
            anchors.add(last)
    return anchors


def _ordering(base: Sequence[Entity], ours: Sequence[Entity], theirs: Sequence[Entity], notes: Notes) -> None:
    """Note where both sides added entities at one spot (ours' come first), recursing into shared containers."""
    if _anchors(base, ours, theirs) & _anchors(base, theirs, ours):
        notes.add("both sides added entries at one spot: ours' placed first")
    b = {e.key: e for e in base}
    t = {e.key: e for e in theirs}
    for entity in ours:
        old, other = b.get(entity.key), t.get(entity.key)
        if old and other and old.children is not None and entity.children is not None and other.children is not None:
            _ordering(old.children, entity.children, other.children, notes)


def _same_order(base: Sequence[Entity], ours: Sequence[Entity], theirs: Sequence[Entity]) -> bool:
    """Whether theirs orders what all three versions hold as the base or ours does, in every shared container.

    The merge follows ours' order, so an order only theirs changed would be lost.
    """
    kept = {e.key for e in base} & {e.key for e in ours} & {e.key for e in theirs}
    in_base, in_ours, in_theirs = ([e.key for e in side if e.key in kept] for side in (base, ours, theirs))
    if in_theirs not in (in_base, in_ours):
        return False
    b = {e.key: e for e in base}
    t = {e.key: e for e in theirs}
    for entity in ours:
        old, other = b.get(entity.key), t.get(entity.key)
        if old and other and old.children is not None and entity.children is not None and other.children is not None:
            if not _same_order(old.children, entity.children, other.children):
                return False
    return True


def _whole(entity: Entity) -> Entity:
    return Entity(entity.key, entity.name, entity.lead, entity.text[len(entity.lead) :])


def _alike(
    base: list[Entity], ours: list[Entity], theirs: list[Entity]
) -> tuple[list[Entity], list[Entity], list[Entity]]:
    """The three versions with an entry that is a container in one and a plain value in another made whole in all.

    (`merge_entities` merges a container's members only when all three versions have them.)
    """
    sides = (base, ours, theirs)
    maps = [{e.key: e for e in side} for side in sides]
    keys = set(maps[0]) | set(maps[1]) | set(maps[2])
    mixed = {key for key in keys if len({m[key].children is None for m in maps if key in m}) > 1}
    nested = {
        key: _alike(*(list(m[key].children or ()) for m in maps))
        for key in (set(maps[0]) & set(maps[1]) & set(maps[2])) - mixed
        if maps[0][key].children is not None
    }
    fixed: list[list[Entity]] = []
    for i, side in enumerate(sides):
        fixed.append([])
        for entity in side:
            if entity.key in mixed:
                entity = _whole(entity)
            elif entity.key in nested:
                entity = Entity(entity.key, entity.name, entity.lead, entity.body, tuple(nested[entity.key][i]))
            fixed[i].append(entity)
    return fixed[0], fixed[1], fixed[2]


def merge_tree(
    base: list[Entity],
    ours: list[Entity],
    theirs: list[Entity],
    leaf: Callable[[tuple[str, ...], str, str, str], str | None],
    notes: Notes,
) -> EntityMerge | None:
    """`merge_entities` with the notes of the leaf rules and of where both sides added at one spot.

    None also when theirs alone reordered entries the sides share.
    """
    if not _same_order(base, ours, theirs):
        return None
    base, ours, theirs = _alike(base, ours, theirs)
    merged = merge_entities(base, ours, theirs, leaf)
    if merged is None:
        return None
    _ordering(base, ours, theirs, notes)
    text, ours_changed, theirs_changed = merged
    return EntityMerge(text, ours_changed, theirs_changed, tuple(notes.notes), bool(notes.notes))


def item_entities(lines: Sequence[str], key: ItemKey, comment: str = "#") -> list[Entity]:
    """A multi-line value's lines as items: blank and comment lines go with the item below them."""
    entities: list[Entity] = []
    seen: Counter[str] = Counter()
    lead = ""
    for line in lines:
        if blank_or_comment(line, comment):
            lead += line
            continue
        name = key(line)
        seen[name] += 1
        entities.append(Entity(("item", name, str(seen[name])), line.strip()[:40], lead, line))
        lead = ""
    return with_end(entities, lead)


def _pin_key(line: str) -> str:
    """A requirement item's key: its package (so that two bumps meet), else its text."""
    found = requirement(line)
    return found.name + found.extras if found else line.strip()


_BRACES = re.compile(r"^([ \t]*[^{}\s,]*\{)([^{}\s]*)(\}[^{}\s,]*[ \t]*\r?\n?)$")


def _text_key(line: str) -> str:
    """An item's text; for a tox factor list (`py3{12,11}`), its text around the braces, so two edits meet."""
    braced = _BRACES.match(line)
    return f"{braced[1].strip()}}}{braced[3].strip()}" if braced else line.strip()


def _brace_leaf(old: str, mine: str, other: str, notes: Notes) -> str | None:
    """A factor list (`py3{12,11,10}`) both sides changed, merged factor by factor; None if anything else changed."""
    found = [_BRACES.match(text) if text.count("\n") <= 1 else None for text in (old, mine, other)]
    if any(m is None for m in found):
        return None
    b, o, t = (m for m in found if m is not None)
    factors = [[f"{f}\n" for f in m[2].split(",")] for m in (b, o, t)]
    if not (b[1] == o[1] == t[1] and b[3] == o[3] == t[3]) or any(not f.strip() for side in factors for f in side):
        return None
    merged = merge_items(*factors, pins=False, notes=notes)
    return None if merged is None else o[1] + ",".join(merged.splitlines()) + o[3]


def merge_items(
    base: Sequence[str], ours: Sequence[str], theirs: Sequence[str], *, pins: bool, notes: Notes, comment: str = "#"
) -> str | None:
    """Three versions of a list of lines merged item by item; requirement items bumped on both sides take the newer."""
    key = _pin_key if pins else _text_key
    b, o, t = (item_entities(lines, key, comment) for lines in (base, ours, theirs))

    def leaf(entity: tuple[str, ...], old: str, mine: str, other: str) -> str | None:
        return pin_leaf(old, mine, other, notes) if pins else _brace_leaf(old, mine, other, notes)

    return merge_list(b, o, t, leaf, notes, keep_sorted=pins, moot=repinned if pins else None)


def pin_leaf(old: str, mine: str, other: str, notes: Notes) -> str | None:
    """A requirement both sides bumped: the newer pin (noted), its comment lines as the sides left them."""
    (old_pin, *old_rest), (my_pin, *my_rest), (other_pin, *other_rest) = (
        text.splitlines(keepends=True) or [""] for text in (old, mine, other)
    )
    rest = _pick("".join(old_rest), "".join(my_rest), "".join(other_rest))
    chosen = newer_pin(old_pin, my_pin, other_pin)
    if chosen is None or rest is None:
        return None
    notes.add(chosen[1])
    return chosen[0] + rest


def merge_list(
    base: list[Entity],
    ours: list[Entity],
    theirs: list[Entity],
    leaf: _Leaf,
    notes: Notes,
    *,
    keep_sorted: bool = False,
    moot: Moot | None = None,
) -> str | None:
    """Flat items merged by key; None where each side replaced one item its own way.

    With `keep_sorted`, when every side lists its items sorted by key, the merged items are too (additions of
    both sides at one spot then need no order chosen); otherwise ours' additions come first, noted.
    """
    if moot is not None:
        ours, theirs = drop_moot(base, ours, theirs, moot, notes)
    if _replaced_both(base, ours, theirs):
        return None
    merged = _merge_list(base, ours, theirs, leaf)
    if merged is None:
        return None
    if keep_sorted and len(_items(base)) > 1 and all(_sorted(side) for side in (base, ours, theirs)):
        head = [text for key, text in merged if key[0] != "item" and key != END]
        items = sorted(((key, text) for key, text in merged if key[0] == "item"), key=lambda pair: _order(pair[0]))
        tail = [text for key, text in merged if key == END]
        return "".join([*head, *(text for _, text in items), *tail])
    _ordering(base, ours, theirs, notes)
    return "".join(text for _, text in merged)


def _order(key: tuple[str, ...]) -> tuple[str, int]:
    return key[1].casefold(), int(key[2])


def _items(side: list[Entity]) -> list[tuple[str, int]]:
    return [_order(e.key) for e in side if e.key[0] == "item"]


def _sorted(side: list[Entity]) -> bool:
    items = _items(side)
    return items == sorted(items)


def _replaced_both(base: list[Entity], ours: list[Entity], theirs: list[Entity]) -> bool:
    """Whether an item may have been edited by one side and removed or edited otherwise by the other.

    That is: both sides added different items where a side removed the base's item (each replaced it its own
    way), or one side added an item where both removed the base's (one edited what the other deleted), or the
    two sides order the items they both kept differently.
    """
    keys = [e.key for e in base]
    o, t = {e.key for e in ours}, {e.key for e in theirs}
    both_spots = _anchors(base, ours, theirs) & _anchors(base, theirs, ours)
    any_spots = _anchors(base, ours, theirs) | _anchors(base, theirs, ours)
    for spot in any_spots:
        after = keys.index(spot) + 1 if spot is not None else 0
        if after < len(keys) and keys[after] not in (o & t if spot in both_spots else o | t):
            return True
    kept = o & t
    return [e.key for e in ours if e.key in kept] != [e.key for e in theirs if e.key in kept]


def _pick(old: str, mine: str, other: str) -> str | None:
    if mine == other or other == old:
        return mine
    return other if mine == old else None


def _merge_list(
    base: list[Entity], ours: list[Entity], theirs: list[Entity], leaf: _Leaf
) -> list[tuple[tuple[str, ...], str]] | None:
    """Items merged by key in ours' order, theirs' new ones after their predecessor (a flat `merge_entities`).

    Unlike definitions, an item one side edited into another is a new item: nothing is taken for a rename.
    """
    b, o, t = ({e.key: e for e in side} for side in (base, ours, theirs))
    result: list[tuple[tuple[str, ...], str]] = []
    for item in ours:
        old, other = b.get(item.key), t.get(item.key)
        if other is None:
            if old is not None and old.text != item.text:
                return None  # ours changed what theirs removed
            if old is None:
                result.append((item.key, item.text))
            continue
        if old is None:
            if item.text != other.text:
                return None
            result.append((item.key, item.text))
            continue
        lead = _pick(old.lead, item.lead, other.lead)
        body = _pick(old.body, item.body, other.body)
        if body is None:
            body = leaf(item.key, old.body, item.body, other.body)
        if lead is None or body is None:
            return None
        result.append((item.key, lead + body))
    for i, item in enumerate(theirs):
        if item.key in o:
            continue
        old = b.get(item.key)
        if old is not None:
            if old.text != item.text:
                return None  # theirs changed what ours removed
            continue
        keys = [key for key, _ in result]
        pos = next((keys.index(p.key) + 1 for p in reversed(theirs[:i]) if p.key in keys), 0)
        while pos < len(result) and result[pos][0] not in t and result[pos][0] not in b:
            pos += 1
        result.insert(pos, (item.key, item.text))
    return result
