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

from tree_sitter import Language, Node, Parser

from plait.reconcile.structured._ts_keys import ATTACHED, LANGUAGES, TsLanguage, container_body, entity_key
from plait.reconcile.structured._ts_merge import (
    Leaf,
    added_at_one_spot,
    imports_in_order,
    refusal,
    shift_separators,
    sort_imports,
)
from plait.reconcile.structured.base import Entity, EntityMerge, merge_entities

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
            label = prefix + ((name if kind != "stmt" else name[:40]) or kind)
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
        if open_row < rows[0] or close_row != rows[1] or close_row <= open_row:
            return None
        if any(kid.start_point.row <= open_row or _last_row(kid) >= close_row for kid in inner):
            return None
        members, end = self.block(inner, open_row + 1, f"{label}.", depth + 1)
        closing = Entity(_END, f"end of {label}", self.cut(end, close_row), self.cut(close_row, close_row + 1))
        return Entity(key, label, lead, self.cut(rows[0], open_row + 1), (*members, closing))


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
        if b is None or o is None or t is None or refusal(b, o, t) is not None:
            return None
        leaf = Leaf(self.extensions[0])
        merged = merge_entities(b, shift_separators(b, o), shift_separators(b, t), leaf=leaf)
        if merged is None:
            return None
        (ours_ordered, ours_seen), (theirs_ordered, theirs_seen) = imports_in_order(o), imports_in_order(t)
        imports_sorted = ours_ordered and theirs_ordered and (ours_seen or theirs_seen)
        text = self._in_order(merged[0], leaf.notes) if imports_sorted else merged[0]
        if text is None or not self.parses(text):
            return None
        if added_at_one_spot(b, o, t, imports_sorted=imports_sorted):
            leaf.notes.append("both sides added at one place: ours first, then theirs")
            leaf.low_confidence = True
        return EntityMerge(text, merged[1], merged[2], notes=tuple(leaf.notes), low_confidence=leaf.low_confidence)

    def _in_order(self, text: str, notes: list[str]) -> str | None:
        """The merged text with its imports sorted (both sides kept theirs sorted)."""
        entities = self.entities(text)
        if entities is None:
            return None
        ordered, moved = sort_imports(entities)
        if moved:
            notes.append("kept the imports sorted, as both sides had them")
        return "".join(e.text for e in ordered)


TREE_SITTER_MERGERS: tuple[TreeSitterMerger, ...] = tuple(TreeSitterMerger(language) for language in LANGUAGES)
"""One merger per grammar: JavaScript, TypeScript, TSX, Go, Rust and Java."""
