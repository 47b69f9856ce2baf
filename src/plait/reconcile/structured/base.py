"""Language-neutral entity merge: three versions of a file as ordered, keyed entities merged one by one."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from plait.reconcile.structured._seqmerge import keeps_order, merge_sequences

__all__ = ["Entity", "EntityMerge", "LanguageMerger", "LeafMerge", "merge_entities"]


@dataclass(frozen=True)
class Entity:
    """A definition or statement: the comment and blank lines above it, its own text, and its members if a container.

    For a container (a class), `body` is its header (decorators and signature) and `children` its members.
    """

    key: tuple[str, ...]
    name: str
    lead: str
    body: str
    children: tuple[Entity, ...] | None = None

    @property
    def text(self) -> str:
        """The entity's exact source."""
        return self.lead + self.body + "".join(child.text for child in self.children or ())


@dataclass(frozen=True)
class EntityMerge:
    """A merged file and the entities each side changed."""

    text: str
    ours_changed: tuple[str, ...] = ()
    theirs_changed: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    """Rules that decided something beyond "each side changed its own entities" (e.g. "took the newer pin of x")."""
    low_confidence: bool = False
    """True when a rule had to choose (an order, a version): the resolution is marked low confidence."""


class LanguageMerger(Protocol):
    """Merges one language's files entity by entity; None when both sides changed the same entity differently.

    A file is this merger's when its name matches one of `file_names` (glob patterns on the name alone, such as
    `requirements*.txt`; checked before any extension) or its extension is one of `extensions`.
    """

    extensions: tuple[str, ...]
    file_names: tuple[str, ...]

    def merge(self, base: str, ours: str, theirs: str) -> EntityMerge | None: ...


LeafMerge = Callable[[tuple[str, ...], str, str, str], str | None]
"""A language's last try on one entity both sides changed: (key, base, ours, theirs) -> merged text or None."""


class _Conflict(Exception):
    """Both sides changed one entity in ways that do not combine."""


def _check_not_moved(new: Entity, gone: Sequence[Entity]) -> None:
    """A new entity that is an entity both sides dropped, renamed or rewrapped: one side may have deleted it."""
    for old in gone:
        named = old.key[0] in ("def", "class") and re.search(rf"\b(def|class)\s+{re.escape(old.key[1])}\b", new.body)
        if named or _similar(old.text, new.text):
            raise _Conflict(new.key)


def _similar(a: str, b: str) -> bool:
    """Mostly the same text: compared by character when short, by line when long."""
    short = len(a) + len(b) < 4000
    matcher = difflib.SequenceMatcher(
        None, a.strip() if short else a.splitlines(), b.strip() if short else b.splitlines(), autojunk=False
    )
    return matcher.real_quick_ratio() >= 0.6 and matcher.quick_ratio() >= 0.6 and matcher.ratio() >= 0.6


def _moved(base: Sequence[tuple[str, ...]], side: Sequence[tuple[str, ...]]) -> bool:
    """Whether a side put entities it shares with the base in another order."""
    kept, known = set(side), set(base)
    return [k for k in base if k in kept] != [k for k in side if k in known]


def _order(base: Sequence[Entity], ours: Sequence[Entity], theirs: Sequence[Entity]) -> list[tuple[str, ...]] | None:
    """The entities' order when a side moved some (both sides' moves and additions kept), else None."""
    keys = [[e.key for e in side] for side in (base, ours, theirs)]
    if not (_moved(keys[0], keys[1]) or _moved(keys[0], keys[2])):
        return None
    sides = ("base", "ours", "theirs")
    picks = merge_sequences(
        *keys, join=lambda mine, yours, at: [*mine, *(p for p in yours if keys[2][p.index] not in keys[1])]
    )
    found = [keys[sides.index(p.side)][p.index] for p in picks or ()]
    if (
        picks is None
        or len(set(found)) != len(found)
        or not all(keeps_order(found, keys[0], side) for side in keys[1:])
    ):
        raise _Conflict(("order",))  # both sides moved entities in one place, or one entity to two places
    return found


@dataclass
class _Merger:
    leaf: LeafMerge | None
    follow_moves: bool = False
    ours_changed: list[str] = field(default_factory=list)
    theirs_changed: list[str] = field(default_factory=list)

    def three(self, key: tuple[str, ...], base: str, ours: str, theirs: str) -> str:
        if ours == theirs or theirs == base:
            return ours
        if ours == base:
            return theirs
        merged = self.leaf(key, base, ours, theirs) if self.leaf else None
        if merged is None:
            raise _Conflict(key)
        return merged

    def entity(self, base: Entity | None, ours: Entity, theirs: Entity) -> str:
        if base is not None and ours.text != base.text:
            self.ours_changed.append(ours.name)
        if base is not None and theirs.text != base.text:
            self.theirs_changed.append(theirs.name)
        if ours.text == theirs.text:
            return ours.text
        if base is None:
            raise _Conflict(ours.key)
        lead = self.three(ours.key, base.lead, ours.lead, theirs.lead)
        if base.children is not None and ours.children is not None and theirs.children is not None:
            header = self.three(ours.key, base.body, ours.body, theirs.body)
            return lead + header + "".join(self.entities(base.children, ours.children, theirs.children))
        return lead + self.three(ours.key, base.body, ours.body, theirs.body)

    def entities(self, base: Sequence[Entity], ours: Sequence[Entity], theirs: Sequence[Entity]) -> list[str]:
        b = {e.key: e for e in base}
        t = {e.key: e for e in theirs}
        o = {e.key: e for e in ours}
        result: list[tuple[tuple[str, ...], str]] = []
        gone = [e for e in base if e.key not in o and e.key not in t]
        for entity in ours:
            if entity.key in t:
                result.append((entity.key, self.entity(b.get(entity.key), entity, t[entity.key])))
            elif entity.key in b:
                if entity.text != b[entity.key].text:
                    raise _Conflict(entity.key)  # ours changed what theirs deleted
                self.theirs_changed.append(entity.name)
            else:
                _check_not_moved(entity, gone)
                result.append((entity.key, entity.text))
                self.ours_changed.append(entity.name)
        gone = [e for e in base if e.key not in o and e.key not in t]
        for i, entity in enumerate(theirs):
            if entity.key in o:
                continue
            if entity.key in b:
                if entity.text != b[entity.key].text:
                    raise _Conflict(entity.key)  # theirs changed what ours deleted
                self.ours_changed.append(entity.name)
                continue
            _check_not_moved(entity, gone)
            self.theirs_changed.append(entity.name)
            keys = [k for k, _ in result]
            pos = next((keys.index(p.key) + 1 for p in reversed(theirs[:i]) if p.key in keys), 0)
            while pos < len(result) and result[pos][0] not in t and result[pos][0] not in b:
                pos += 1  # ours' own new entities at the same place come first
            result.insert(pos, (entity.key, entity.text))
        order = _order(base, ours, theirs) if self.follow_moves else None
        if order is not None:
            texts = dict(result)
            if sorted(order) != sorted(texts):
                raise _Conflict(("order",))
            return [texts[key] for key in order]
        return [text for _, text in result]


def merge_entities(
    base: Sequence[Entity],
    ours: Sequence[Entity],
    theirs: Sequence[Entity],
    leaf: LeafMerge | None = None,
    *,
    follow_moves: bool = False,
) -> tuple[str, tuple[str, ...], tuple[str, ...]] | None:
    """The three versions merged in ours' order, theirs' new entities after their predecessor; None on a clash.

    `follow_moves`: where a side moved entities, the order is merged too (a move kept, with the other side's
    edits to what moved); both sides moving entities in one place is a clash.
    """
    merger = _Merger(leaf, follow_moves)
    try:
        texts = merger.entities(base, ours, theirs)
    except _Conflict:
        return None
    return "".join(texts), tuple(dict.fromkeys(merger.ours_changed)), tuple(dict.fromkeys(merger.theirs_changed))
