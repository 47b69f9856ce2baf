"""JavaScript, TypeScript, Go, Rust and Java files as entities, cut from tree-sitter parse trees.

An entity is a top-level node (a function, a class, an import, a declaration) with the comments, decorators,
attributes and blank lines above it as its lead; a class, interface, impl, trait, struct or import group is a
container whose members merge one by one, the line of its closing brace last. Cuts fall on line starts, so the
entities reassemble to the exact bytes of the file. A merged file that does not parse without error is refused.
"""

from __future__ import annotations

import importlib
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from tree_sitter import Language, Node, Parser

from plait.reconcile.deterministic import resolve_deterministic
from plait.reconcile.structured._ts_keys import ATTACHED, LANGUAGES, TsLanguage, container_body, entity_key
from plait.reconcile.structured.base import Entity, EntityMerge, merge_entities
from plait.reconcile.types import FileConflict

__all__ = ["TREE_SITTER_MERGERS", "TreeSitterMerger"]

_END = ("<end>",)
_MAX_DEPTH = 4


def _last_row(node: Node) -> int:
    end, start = node.end_point, node.start_point
    return end.row - 1 if end.column == 0 and end.row > start.row else end.row


class _Reader:
    """Cuts a parsed source into entities whose texts concatenate back to the source."""

    def __init__(self, source: bytes) -> None:
        self.source = source
        self.starts = [0, *(m.end() for m in re.finditer(b"\n", source))]

    def cut(self, first_row: int, end_row: int) -> str:
        """The source from the start of `first_row` to the start of `end_row`."""
        at = [self.starts[r] if r < len(self.starts) else len(self.source) for r in (first_row, end_row)]
        return self.source[at[0] : at[1]].decode("utf-8")

    def block(self, nodes: Sequence[Node], start_row: int, prefix: str, depth: int) -> tuple[list[Entity], int]:
        """The entities of `nodes` (siblings from `start_row` on) and the row after the last one."""
        groups: list[list[Node]] = []
        last_rows: list[int] = []
        for node in nodes:
            if not node.is_named or node.type in ATTACHED:
                continue
            if groups and node.start_point.row <= last_rows[-1]:
                groups[-1].append(node)  # nodes sharing a line stay together
                last_rows[-1] = max(last_rows[-1], _last_row(node))
            else:
                groups.append([node])
                last_rows.append(_last_row(node))
        entities: list[Entity] = []
        seen: Counter[tuple[str, str]] = Counter()
        end = start_row
        for group, last in zip(groups, last_rows, strict=True):
            first = group[0].start_point.row
            kind, name = entity_key(group[0])
            seen[(kind, name)] += 1
            key = (kind, name) if seen[(kind, name)] == 1 else (kind, name, str(seen[(kind, name)]))
            label = prefix + (name if kind not in ("stmt", "package") else name[:40] or kind)
            lead = self.cut(end, first)
            found = self._container(group, key, label, lead, (first, last), depth) if len(group) == 1 else None
            entities.append(found or Entity(key, label, lead, self.cut(first, last + 1)))
            end = last + 1
        return entities, end

    def _container(
        self, group: list[Node], key: tuple[str, ...], label: str, lead: str, rows: tuple[int, int], depth: int
    ) -> Entity | None:
        """A container whose members each start on a line of their own between its braces' lines, else None."""
        body = container_body(group[0]) if depth < _MAX_DEPTH else None
        if body is None:
            return None
        kids = body.children
        opens = [i for i, kid in enumerate(kids) if kid.type in ("{", "(")]
        closes = [i for i, kid in enumerate(kids) if kid.type in ("}", ")")]
        if not opens or not closes or opens[0] > closes[-1]:
            return None
        open_row, close_row = kids[opens[0]].end_point.row, kids[closes[-1]].start_point.row
        inner = [kid for kid in kids[opens[0] + 1 : closes[-1]] if kid.is_named]
        if open_row < rows[0] or close_row != rows[1]:
            return None
        if any(kid.start_point.row <= open_row or _last_row(kid) >= close_row for kid in inner):
            return None
        members, end = self.block(inner, open_row + 1, f"{label}.", depth + 1)
        closing = Entity(_END, f"end of {label}", self.cut(end, close_row), self.cut(close_row, close_row + 1))
        return Entity(key, label, lead, self.cut(rows[0], open_row + 1), (*members, closing))


def _shift_separators(base: Sequence[Entity], side: Sequence[Entity]) -> list[Entity]:
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
            entity = replace(entity, children=tuple(_shift_separators(before.children, entity.children)))
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
class _Leaf:
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


class TreeSitterMerger:
    """Merges one language's files entity by entity through its tree-sitter grammar.

    A grammar that cannot be loaded leaves the language's files to the other rungs.
    """

    file_names: tuple[str, ...] = ()

    def __init__(self, language: TsLanguage) -> None:
        self.language = language
        self.extensions = language.extensions
        self._grammar: Language | None = None
        self._unavailable = False

    def _parser(self) -> Parser | None:
        """A new parser (one per merge: merges run on several threads), or None without a grammar."""
        if self._grammar is None and not self._unavailable:
            try:
                module = importlib.import_module(self.language.module)
                self._grammar = Language(getattr(module, self.language.function)())
            except (ImportError, AttributeError, OSError, ValueError):
                self._unavailable = True
        return Parser(self._grammar) if self._grammar is not None else None

    def entities(self, source: str, parser: Parser | None = None) -> list[Entity] | None:
        """The top-level entities of `source`, the trailing lines last; None when it does not parse cleanly."""
        parser = parser or self._parser()
        try:
            data = source.encode("utf-8")
        except UnicodeEncodeError:
            return None
        if parser is None:
            return None
        root = parser.parse(data).root_node
        if root.has_error:
            return None
        reader = _Reader(data)
        entities, end = reader.block(root.children, 0, "", 0)
        entities.append(Entity(_END, "end of file", reader.cut(end, len(reader.starts) + 1), ""))
        return entities if "".join(e.text for e in entities) == source else None

    def parses(self, source: str) -> bool:
        """Whether `source` parses with no ERROR or MISSING node."""
        parser = self._parser()
        return parser is not None and not parser.parse(source.encode("utf-8")).root_node.has_error

    def merge(self, base: str, ours: str, theirs: str) -> EntityMerge | None:
        """The merged file, or None when the sides changed one entity differently or the result does not parse."""
        parser = self._parser()
        b, o, t = (self.entities(text, parser) for text in (base, ours, theirs))
        if b is None or o is None or t is None:
            return None
        leaf = _Leaf(self.extensions[0])
        merged = merge_entities(b, _shift_separators(b, o), _shift_separators(b, t), leaf=leaf)
        if merged is None or not self.parses(merged[0]):
            return None
        return EntityMerge(*merged, notes=tuple(leaf.notes), low_confidence=leaf.low_confidence)


TREE_SITTER_MERGERS: tuple[TreeSitterMerger, ...] = tuple(TreeSitterMerger(language) for language in LANGUAGES)
"""One merger per grammar: JavaScript, TypeScript, TSX, Go, Rust and Java."""
