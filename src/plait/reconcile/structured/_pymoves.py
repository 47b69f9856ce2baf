"""A function one side moved to another level (into or out of a class) and the other side edited in place.

When the moved function's text, indentation aside, is exactly the base's, the edit is applied at the new
place: the mover's copy is replaced by the edited text (indented as the mover placed it) and the editor's copy
at the old place is put back as the base had it, so that the entity merge sees a move and nothing to clash.
Moves within one level need no help: the entity merge follows the order.
"""

from __future__ import annotations

from collections.abc import Sequence

from plait.reconcile._mergefile import split_lines
from plait.reconcile.structured.base import Entity

__all__ = ["apply_moves"]

Path = tuple[tuple[str, ...], ...]


def _index(entities: Sequence[Entity], prefix: Path = ()) -> dict[Path, Entity]:
    found: dict[Path, Entity] = {}
    for entity in entities:
        path = (*prefix, entity.key)
        found[path] = entity
        if entity.children:
            found.update(_index(entity.children, path))
    return found


def _indent(text: str) -> str:
    first = next((line for line in split_lines(text) if line.strip()), "")
    return first[: len(first) - len(first.lstrip(" \t"))]


def _dedent(text: str) -> str | None:
    indent = _indent(text)
    lines = split_lines(text)
    if any(line.strip() and not line.startswith(indent) for line in lines):
        return None
    return "".join(line[len(indent) :] if line.strip() else line for line in lines)


def _rebuild(entities: Sequence[Entity], edits: dict[Path, str], prefix: Path = ()) -> str:
    out: list[str] = []
    for entity in entities:
        path = (*prefix, entity.key)
        if path in edits:
            out.append(entity.lead + edits[path])
        else:
            out.append(entity.lead + entity.body + _rebuild(entity.children or (), edits, path))
    return "".join(out)


def _moves(base: dict[Path, Entity], mover: dict[Path, Entity], editor: dict[Path, Entity]) -> dict[Path, Path]:
    """Old place -> new place of each function the mover moved to another level and the editor edited."""
    found: dict[Path, Path] = {}
    for path, old in base.items():
        if old.key[0] != "def" or old.children or path in mover or path not in editor:
            continue
        if editor[path].text == old.text:
            continue
        body = _dedent(old.body)
        places = [
            place
            for place, new in mover.items()
            if place[-1] == path[-1] and place not in base and place not in editor and not new.children
            if body is not None and _dedent(new.body) == body
        ]
        if len(places) == 1:
            found[path] = places[0]
    return found


def apply_moves(
    base: Sequence[Entity], ours: Sequence[Entity], theirs: Sequence[Entity]
) -> tuple[str, str, list[str]] | None:
    """Ours' and theirs' texts with each such edit carried to where the other side moved the function, or None."""
    b, o, t = _index(base), _index(ours), _index(theirs)
    edits: dict[str, dict[Path, str]] = {"ours": {}, "theirs": {}}
    notes: list[str] = []
    for mover, editor, m, e in (("theirs", "ours", t, o), ("ours", "theirs", o, t)):
        for old, new in _moves(b, m, e).items():
            edited = _dedent(e[old].body)
            if edited is None:
                return None
            indent = _indent(m[new].body)
            edits[mover][new] = "".join(indent + line if line.strip() else line for line in split_lines(edited))
            edits[editor][old] = b[old].body  # undone where it was: the mover's deletion then stands
            notes.append(f"{old[-1][1]}: {editor}' edit applied where {mover} moved it")
    if not notes:
        return None
    return _rebuild(ours, edits["ours"]), _rebuild(theirs, edits["theirs"]), notes
