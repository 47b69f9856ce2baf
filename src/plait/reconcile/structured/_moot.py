"""An entry one side removed and the other only re-versioned: the removal stands, as the new version means nothing.

A requirement pin changed or added, a YAML item's `rev:` or `uses:` bumped: once the other side dropped the
entry, there is nothing for the new version to apply to. A side that put an entry much like the removed one in
its place edited it instead (a repository renamed), which stays a conflict.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from typing import TYPE_CHECKING

from plait.reconcile.structured._pins import requirement
from plait.reconcile.structured.base import Entity

if TYPE_CHECKING:
    from plait.reconcile.structured._tree import Notes

__all__ = ["Moot", "drop_moot", "repinned"]


def _alike(a: str, b: str) -> bool:
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return matcher.real_quick_ratio() >= 0.6 and matcher.quick_ratio() >= 0.6 and matcher.ratio() >= 0.6


Moot = Callable[[str, str], bool]
"""Whether a side's change to an entry's body (base, side) is one a removal by the other side overrides."""


def drop_moot(
    base: list[Entity], ours: list[Entity], theirs: list[Entity], moot: Moot, notes: Notes
) -> tuple[list[Entity], list[Entity]]:
    """Ours and theirs with an entry one side removed and the other only re-versioned (`moot`) put back as the base's.

    The merge then takes the removal: a new version of what the other side dropped means nothing once it is gone.
    """
    b = {e.key: e for e in base}
    order = [e.key for e in base]

    def replaced(key: tuple[str, ...], remover: list[Entity]) -> bool:
        """Whether the side that removed `key` put a new entry much like it in its place (edited it)."""
        keys = [e.key for e in remover]
        before = [k for k in order[: order.index(key)] if k in keys]
        at = keys.index(before[-1]) + 1 if before else 0
        while at < len(keys) and keys[at] not in b:
            if _alike(b[key].body, remover[at].body):
                return True
            at += 1
        return False

    def fix(entity: Entity, remover: list[Entity]) -> Entity:
        old = b.get(entity.key)
        if old is None or entity.key in {e.key for e in remover} or entity.text == old.text:
            return entity
        if entity.lead != old.lead or replaced(entity.key, remover):
            return entity
        if entity.children is None and old.children is None and moot(old.body, entity.body):
            notes.add(f"{entity.name}: removed by one side, only its version changed by the other: removed")
            return old
        return entity

    fixed_o, fixed_t = [fix(e, theirs) for e in ours], [fix(e, ours) for e in theirs]
    t_map = {e.key: i for i, e in enumerate(fixed_t)}
    for i, entity in enumerate(fixed_o):
        old, j = b.get(entity.key), t_map.get(entity.key)
        other = fixed_t[j] if j is not None else None
        if old is None or other is None or j is None:
            continue
        if old.children is not None and entity.children is not None and other.children is not None:
            kids_o, kids_t = drop_moot(list(old.children), list(entity.children), list(other.children), moot, notes)
            fixed_o[i] = Entity(entity.key, entity.name, entity.lead, entity.body, tuple(kids_o))
            fixed_t[j] = Entity(other.key, other.name, other.lead, other.body, tuple(kids_t))
    return fixed_o, fixed_t


def repinned(old: str, new: str) -> bool:
    """Whether a requirement item changed only its version clauses (its name, extras, markers, comments alike)."""
    (old_first, *old_rest), (new_first, *new_rest) = (text.splitlines(keepends=True) or [""] for text in (old, new))
    was, now = requirement(old_first), requirement(new_first)
    same = was is not None and now is not None and (was.name, was.extras, was.rest) == (now.name, now.extras, now.rest)
    return same and old_rest == new_rest
