"""The rules of the tree-sitter merge beyond entity by entity: separators, import names and import order."""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from plait.reconcile.deterministic import resolve_deterministic
from plait.reconcile.structured.base import Entity
from plait.reconcile.types import FileConflict

__all__ = ["Leaf", "added_at_one_spot", "imports_in_order", "refusal", "shift_separators", "sort_imports"]


def shift_separators(base: Sequence[Entity], side: Sequence[Entity]) -> list[Entity]:
    """New entities inserted before an old one end with the blank lines the inserter put above the old one.

    An insertion `X` before `Y` reads as `X` with `Y`'s old lead, then `Y` with a new blank line above: so that
    the two sides' insertions at one spot each bring their own separator, the blank lines move to the end of `X`.
    """
    old = {entity.key: entity for entity in base}
    out = list(side)
    for i, entity in enumerate(out):
        before = old.get(entity.key)
        if before is None:
            continue
        if before.children is not None and entity.children is not None:
            entity = replace(entity, children=tuple(shift_separators(before.children, entity.children)))
            out[i] = entity
        previous = out[i - 1] if i else None
        gained = entity.lead[: len(entity.lead) - len(before.lead)]
        if (
            previous is None
            or previous.key in old
            or previous.children is not None
            or not entity.lead.endswith(before.lead)
            or not gained
            or gained.strip()
        ):
            continue
        out[i - 1] = replace(previous, body=previous.body + gained)
        out[i] = replace(entity, lead=before.lead)
    return out


_BRACED = re.compile(r"^([^{}\n]*\{)([^{}\n]*)(\}[^{}\n]*\n?)$")
"""A one-line statement with one braced list: `import { a, b } from "x";`, `use std::{fmt, io};`."""


def _union(base: list[str], ours: list[str], theirs: list[str]) -> list[str]:
    """Ours' items then theirs' new ones, less what either side removed; sorted when ours was."""
    removed = (set(base) - set(ours)) | (set(base) - set(theirs))
    items = [i for i in ours if i not in removed] + [i for i in theirs if i not in ours and i not in removed]
    return sorted(items) if ours == sorted(ours) else items


def _union_braced(base: str, ours: str, theirs: str) -> str | None:
    """Both sides changed the names of one braced import: the union of the names."""
    found = [_BRACED.match(text) for text in (base, ours, theirs)]
    if not all(found) or len({(m.group(1), m.group(3)) for m in found if m}) != 1:
        return None
    b, o, t = ([n.strip() for n in m.group(2).split(",") if n.strip()] for m in found if m)
    inner = found[1].group(2) if found[1] else ""
    pad_left, pad_right = inner[: len(inner) - len(inner.lstrip())], inner[len(inner.rstrip()) :]
    comma = "," if inner.rstrip().endswith(",") else ""
    head, tail = (found[1].group(1), found[1].group(3)) if found[1] else ("", "")
    return f"{head}{pad_left}{', '.join(_union(b, o, t))}{comma}{pad_right}{tail}"


@dataclass
class Leaf:
    """The last try on one entity both sides changed; records the rules that had to choose."""

    extension: str
    notes: list[str] = field(default_factory=list)
    low_confidence: bool = False

    def __call__(self, key: tuple[str, ...], base: str, ours: str, theirs: str) -> str | None:
        if key[0] == "import":
            united = _union_braced(base, ours, theirs)
            if united is not None:
                self.notes.append(f"united the names imported from {key[1]}")
                return united
        found = resolve_deterministic(FileConflict(f"entity{self.extension}", base, ours, theirs))
        if found is None or found.text is None:
            return None
        if found.confidence == "low":
            self.low_confidence = True
            self.notes.append(f"{key[1] or key[0]}: {found.reason}")
        return found.text


def _import_runs(entities: Sequence[Entity]) -> list[list[int]]:
    """Runs of imports one right below the other (no blank line or comment between), as positions."""
    runs: list[list[int]] = []
    for i, entity in enumerate(entities):
        if entity.key[0] != "import":
            continue
        if runs and runs[-1][-1] == i - 1 and not entity.lead:
            runs[-1].append(i)
        else:
            runs.append([i])
    return runs


def imports_in_order(entities: Sequence[Entity]) -> tuple[bool, bool]:
    """Whether every run of imports (members too) is sorted by what it imports, and whether a run has two."""
    ordered, seen = True, False
    for run in _import_runs(entities):
        names = [entities[i].key[1] for i in run]
        ordered &= names == sorted(names)
        seen |= len(run) > 1
    for entity in entities:
        if entity.children is not None:
            inner_ordered, inner_seen = imports_in_order(entity.children)
            ordered &= inner_ordered
            seen |= inner_seen
    return ordered, seen


def sort_imports(entities: Sequence[Entity]) -> tuple[list[Entity], bool]:
    """Each run of imports sorted by what it imports (its first lead kept first), and whether one moved."""
    out = list(entities)
    moved = False
    for i, entity in enumerate(out):
        if entity.children is not None:
            children, inner = sort_imports(entity.children)
            out[i], moved = replace(entity, children=tuple(children)), moved or inner
    for run in _import_runs(out):
        group = [out[i] for i in run]
        ordered = sorted(group, key=lambda e: e.key[1])
        if ordered == group or not all(e.body.endswith("\n") for e in group):
            continue
        for n, (i, entity) in enumerate(zip(run, ordered, strict=True)):
            out[i] = replace(entity, lead=group[0].lead if n == 0 else "")
        moved = True
    return out, moved


_FUNCTIONS = frozenset(
    {
        "function_declaration",
        "generator_function_declaration",
        "function_signature",
        "method_declaration",
        "method_definition",
        "method_signature",
        "method",
        "function_item",
        "function_signature_item",
        "constructor_declaration",
    }
)


_COMMENT = re.compile(r"\s*(//|/\*|\*|#)")


def _signature(entity: Entity) -> str:
    return " ".join(entity.body.split("{", 1)[0].split())


def _called_name(key: tuple[str, ...]) -> str:
    return re.split(r"[.(]", key[1].split(".")[-1] if key[0] == "method" else key[1])[0]


def _added_lines(base: Sequence[Entity], side: Sequence[Entity], skip: set[tuple[str, ...]]) -> list[str]:
    """The lines `side` wrote that its entity in the base lacks, in the entities whose key is not in `skip`."""
    old = {entity.key: entity for entity in base}
    lines: list[str] = []
    for entity in side:
        before = old.get(entity.key)
        if entity.key in skip:
            continue
        if before is None:
            lines.extend(entity.text.splitlines())
        elif before.children is not None and entity.children is not None:
            known = set((before.lead + before.body).splitlines())
            lines.extend(line for line in (entity.lead + entity.body).splitlines() if line not in known)
            lines.extend(_added_lines(before.children, entity.children, skip))
        elif before.text != entity.text:
            known = set(before.text.splitlines())
            lines.extend(line for line in entity.text.splitlines() if line not in known)
    return lines


def _broken(base: Sequence[Entity], side: Sequence[Entity]) -> dict[tuple[str, ...], str]:
    """What `side` deleted, and the functions whose signature it changed: their keys and names."""
    now = {entity.key: entity for entity in side}
    names: dict[tuple[str, ...], str] = {}
    for before in base:
        entity = now.get(before.key)
        if entity is None:
            if before.key[0] not in ("stmt", "import", "package", "<end>"):
                names[before.key] = _called_name(before.key)
        elif before.children is not None and entity.children is not None:
            names.update(_broken(before.children, entity.children))
        elif entity.key[0] in _FUNCTIONS and _signature(before) != _signature(entity):
            names[entity.key] = _called_name(entity.key)
    return {key: name for key, name in names.items() if re.fullmatch(r"\w+", name)}


def _order(keys: Sequence[tuple[str, ...]], common: set[tuple[str, ...]]) -> list[tuple[str, ...]]:
    return [key for key in keys if key in common]


def _twins(base: Sequence[Entity], ours: Sequence[Entity], theirs: Sequence[Entity]) -> bool:
    """Whether each side added, under different names, entities that are mostly the same text."""
    known = {e.key for e in base}
    mine = [e for e in ours if e.key not in known and e.key[0] != "import" and e.body.count("\n") > 2]
    other = [e for e in theirs if e.key not in known and e.key[0] != "import" and e.body.count("\n") > 2]
    mine_keys, other_keys = {e.key for e in mine}, {e.key for e in other}
    return any(_alike(a.body, b.body) for a in mine if a.key not in other_keys for b in other if b.key not in mine_keys)


def _alike(a: str, b: str) -> bool:
    """At least 60 % the same lines (the cheap upper bounds first)."""
    matcher = difflib.SequenceMatcher(None, a.splitlines(), b.splitlines(), autojunk=False)
    return matcher.real_quick_ratio() >= 0.6 and matcher.quick_ratio() >= 0.6 and matcher.ratio() >= 0.6


def _rewritten_both(base: Sequence[Entity], ours: Sequence[Entity], theirs: Sequence[Entity]) -> bool:
    """Whether a statement (keyed by its first line) left both sides while both sides brought new statements."""
    keys = [{e.key for e in version} for version in (base, ours, theirs)]
    gone = any(e.key[0] == "stmt" and e.key not in keys[1] and e.key not in keys[2] for e in base)
    return gone and all(any(e.key[0] == "stmt" and e.key not in keys[0] for e in side) for side in (ours, theirs))


def refusal(base: Sequence[Entity], ours: Sequence[Entity], theirs: Sequence[Entity]) -> str | None:
    """Why the two sides' entities must not be merged one by one, if they must not.

    What one side deleted, or a function it gave a new signature, that the other side's changes name; members one side
    put in a new order (the merge keeps ours' order); a statement both sides rewrote (its key, its first line,
    changed on both: two new statements would both be kept); each side adding the same code under different names.
    """
    for side, rest in ((ours, theirs), (theirs, ours)):
        broken = _broken(base, side)
        pattern = re.compile(r"\b(" + "|".join(re.escape(name) for name in broken.values()) + r")\b")
        lines = [line for line in _added_lines(base, rest, set(broken)) if not _COMMENT.match(line)]
        if broken and any(pattern.search(line) for line in lines):
            return "a side deleted, or changed the signature of, what the other side's changes use"
    common = {e.key for e in base} & {e.key for e in ours} & {e.key for e in theirs}
    order = [_order([e.key for e in version], common) for version in (base, ours, theirs)]
    if order[2] != order[0] and order[1] != order[2]:
        return "theirs reordered entities"
    if _rewritten_both(base, ours, theirs):
        return "both sides rewrote the first line of one statement"
    if _twins(base, ours, theirs):
        return "both sides added the same code under different names"
    by_key = [{e.key: e for e in version} for version in (ours, theirs)]
    for entity in base:
        mine, other = by_key[0].get(entity.key), by_key[1].get(entity.key)
        if entity.children is not None and mine and other and mine.children is not None and other.children is not None:
            found = refusal(entity.children, mine.children, other.children)
            if found:
                return found
    return None


def _anchors(base: Sequence[Entity], side: Sequence[Entity]) -> set[tuple[str, ...] | None]:
    """The old entities after which `side` added new ones (None: at the start)."""
    known = {entity.key for entity in base}
    anchors: set[tuple[str, ...] | None] = set()
    anchor: tuple[str, ...] | None = None
    for entity in side:
        if entity.key in known:
            anchor = entity.key
        else:
            anchors.add(anchor)
    return anchors


def added_at_one_spot(
    base: Sequence[Entity], ours: Sequence[Entity], theirs: Sequence[Entity], *, imports_sorted: bool = False
) -> bool:
    """Whether both sides added different entities right after the same old one (the merge puts ours first).

    With `imports_sorted`, new imports do not count: they were sorted, not put in an order chosen.
    """
    old = {e.key for e in base}
    shared = {e.key for e in ours} & {e.key for e in theirs}

    def counted(entity: Entity) -> bool:
        return entity.key in old or (entity.key not in shared and not (imports_sorted and entity.key[0] == "import"))

    if _anchors(base, [e for e in ours if counted(e)]) & _anchors(base, [e for e in theirs if counted(e)]):
        return True
    by_key = [{e.key: e for e in version} for version in (ours, theirs)]
    for entity in base:
        pair = by_key[0].get(entity.key), by_key[1].get(entity.key)
        if entity.children is not None and pair[0] is not None and pair[1] is not None:
            if pair[0].children is not None and pair[1].children is not None:
                if added_at_one_spot(
                    entity.children, pair[0].children, pair[1].children, imports_sorted=imports_sorted
                ):
                    return True
    return False
