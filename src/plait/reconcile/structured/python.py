"""Python files as entities (functions, classes and their methods, top-level statements), parsed with `ast`."""

from __future__ import annotations

import ast
import re
from collections import Counter
from collections.abc import Sequence

from plait.reconcile._hunks import import_union
from plait.reconcile._mergefile import split_lines
from plait.reconcile.deterministic import resolve_deterministic
from plait.reconcile.structured._pybody import merge_block, stale
from plait.reconcile.structured._pyelements import merge_statement
from plait.reconcile.structured._pymoves import apply_moves
from plait.reconcile.structured._pyversion import newer_version
from plait.reconcile.structured.base import Entity, EntityMerge, merge_entities
from plait.reconcile.types import FileConflict

__all__ = ["PythonMerger", "python_entities"]

_FILLER = re.compile(r"^\s*(#.*)?$")
_END = ("<end>",)
_ONE_LINE = re.compile(r"^(\s*(?:from\s+\S+\s+)?import\s+)([^()#\\]+?)\s*$")


def _first_line(node: ast.stmt) -> int:
    decorators: list[ast.expr] = getattr(node, "decorator_list", [])
    return min([node.lineno, *(d.lineno for d in decorators)]) - 1


def _key(node: ast.stmt, first: str, is_first: bool) -> tuple[str, str]:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return "def", node.name
    if isinstance(node, ast.ClassDef):
        return "class", node.name
    if is_first and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
        return "docstring", ""
    if isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) for t in node.targets):
        return "=", ",".join(t.id for t in node.targets if isinstance(t, ast.Name))
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return "=", node.target.id
    if isinstance(node, ast.Import):
        return "import", ",".join(a.name for a in node.names)
    if isinstance(node, ast.ImportFrom):
        return "from", "." * node.level + (node.module or "")
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        return "call", ast.unparse(node.value.func)
    return "stmt", first.strip()


class _Reader:
    """Cuts a parsed source into entities whose texts concatenate back to the source."""

    def __init__(self, source: str) -> None:
        self.lines = split_lines(source)

    def block(self, nodes: Sequence[ast.stmt], start: int, prefix: str) -> tuple[list[Entity], int]:
        groups: list[list[ast.stmt]] = []
        for node in nodes:
            if groups and _first_line(node) < groups[-1][-1].end_lineno:  # type: ignore[operator]
                groups[-1].append(node)  # statements sharing a line stay together
            else:
                groups.append([node])
        entities: list[Entity] = []
        seen: Counter[tuple[str, str]] = Counter()
        end = start
        for group in groups:
            node, first = group[0], _first_line(group[0])
            last = group[-1].end_lineno or first + 1
            kind, name = _key(node, self.lines[first], not entities)
            seen[(kind, name)] += 1
            key = (kind, name) if seen[(kind, name)] == 1 else (kind, name, str(seen[(kind, name)]))
            label = f"{prefix}{name}" if kind in ("def", "class") else f"{prefix}{self.lines[first].strip()[:40]}"
            lead = "".join(self.lines[end:first])
            entities.append(self._entity(node, group, key, label, lead, first, last))
            end = last
        return entities, end

    def _entity(
        self, node: ast.stmt, group: list[ast.stmt], key: tuple[str, ...], label: str, lead: str, first: int, last: int
    ) -> Entity:
        if isinstance(node, ast.ClassDef) and len(group) == 1:
            body_start = _first_line(node.body[0])
            header_end = body_start
            while header_end - 1 > node.lineno - 1 and _FILLER.match(self.lines[header_end - 1]):
                header_end -= 1
            if body_start > node.lineno - 1:
                children, end = self.block(node.body, header_end, f"{node.name}.")
                if end == last:
                    return Entity(key, label, lead, "".join(self.lines[first:header_end]), tuple(children))
        return Entity(key, label, lead, "".join(self.lines[first:last]))


def python_entities(source: str) -> list[Entity] | None:
    """The top-level entities of a module, the trailing lines last; None when it does not parse."""
    if "\r" in source.replace("\r\n", ""):
        return None  # a lone carriage return ends a line for Python's parser but not for ours
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    reader = _Reader(source)
    entities, end = reader.block(tree.body, 0, "")
    entities.append(Entity(_END, "end of file", "".join(reader.lines[end:]), ""))
    if "".join(e.text for e in entities) != source:
        return None
    return entities


class _Leaf:
    """The last try on one entity both sides changed, noting the rules that decided and whether one chose."""

    def __init__(self) -> None:
        self.notes: list[str] = []
        self.low = False

    def __call__(self, key: tuple[str, ...], base: str, ours: str, theirs: str) -> str | None:
        first = next((line for line in split_lines(base) if line.strip()), "")
        indent = first[: len(first) - len(first.lstrip(" \t"))]
        texts = [_dedent(text, indent) for text in (base, ours, theirs)]
        if texts[0] is None or texts[1] is None or texts[2] is None:
            return None
        found = self._merge(key, texts[0], texts[1], texts[2])
        if found is None or (key[0] in ("def", "stmt") and stale(texts[0], texts[1], texts[2])):
            return None  # one side's new code calls what the other side renamed
        merged, notes, low = found
        self.notes.extend(f"{key[1]}: {note}" for note in notes)
        self.low = self.low or low
        return "".join(indent + line if line.strip() else line for line in split_lines(merged))

    @staticmethod
    def _merge(key: tuple[str, ...], base: str, ours: str, theirs: str) -> tuple[str, list[str], bool] | None:
        """The merged text, the rules that decided, and whether one chose."""
        if key[0] in ("import", "from"):
            united = _merge_imports(ours, base, theirs)
            if united is not None:
                return united, [], False
        if key[0] == "=" and (version := newer_version(base, ours, theirs)) is not None:
            return version[0], [version[1]], True
        if key[0] in ("def", "stmt"):
            block = merge_block(base, ours, theirs)
            if block is not None:
                return block, ["both sides' edits to different statements combined"], False
        elements = merge_statement(base, ours, theirs)
        if elements is not None:
            return elements[0], elements[1].notes, elements[1].chose
        found = resolve_deterministic(FileConflict("entity.py", base, ours, theirs))
        if found is None or found.text is None or "version numbers" in found.reason:
            return None  # a version both sides set is never guessed
        low = found.confidence == "low"
        return found.text, [found.reason] if low else [], low


def _dedent(text: str, indent: str) -> str | None:
    lines = split_lines(text)
    if any(line.strip() and not line.startswith(indent) for line in lines):
        return None
    return "".join(line[len(indent) :] if line.strip() else line for line in lines)


def _merge_imports(ours: str, base: str, theirs: str) -> str | None:
    """Both sides changed one import statement: the union of the names."""
    parts = [split_lines(text) for text in (ours, base, theirs)]
    if any(len(p) == 1 for p in parts):
        return _merge_import_names(ours, base, theirs)
    united = import_union(*parts, python=True)
    merged = "".join(united) if united is not None else ""
    return merged if united is not None and _parses(merged) else None


def _merge_import_names(ours: str, base: str, theirs: str) -> str | None:
    found = [_ONE_LINE.match(text.rstrip("\n")) for text in (ours, base, theirs)]
    if not all(found) or len({m.group(1) for m in found if m}) != 1:
        return None
    o, b, t = ([n.strip() for n in m.group(2).split(",") if n.strip()] for m in found if m)
    removed = (set(b) - set(o)) | (set(b) - set(t))
    names = [n for n in o if n not in removed] + [n for n in t if n not in o and n not in removed]
    if o == sorted(o):
        names.sort()
    head = found[0].group(1) if found[0] else ""
    merged = f"{head}{', '.join(names)}\n"
    return merged if _parses(merged.strip() + "\n") else None


def _unused_imports(source: str) -> set[str]:
    """Names a module imports at its top level and never uses (in code, `__all__` or a string annotation)."""
    tree = ast.parse(source)
    imported = {
        (alias.asname or alias.name).split(".")[0]
        for node in tree.body
        if isinstance(node, ast.Import | ast.ImportFrom)
        and not (isinstance(node, ast.ImportFrom) and node.module == "__future__")
        for alias in node.names
        if alias.name != "*"
    }
    used = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    words = {
        word
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and not re.search(r"\s", node.value)
        for word in re.findall(r"\w+", node.value)
    }
    return imported - used - words


def _parses(text: str) -> bool:
    try:
        ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return True


class PythonMerger:
    """Merges `.py` files entity by entity; a class whose methods changed on different sides merges method by method."""

    extensions: tuple[str, ...] = (".py", ".pyi")
    file_names: tuple[str, ...] = ()

    def merge(self, base: str, ours: str, theirs: str) -> EntityMerge | None:
        """The merged module, or None when the sides changed one entity differently or the result does not parse."""
        parsed = [python_entities(text) for text in (base, ours, theirs)]
        b, o, t = parsed
        if b is None or o is None or t is None:
            return None
        leaf = _Leaf()
        moved = apply_moves(b, o, t)
        if moved is not None:
            o, t = python_entities(moved[0]), python_entities(moved[1])
            if o is None or t is None:
                return None
            leaf.notes.extend(moved[2])
        merged = merge_entities(b, o, t, leaf=leaf, follow_moves=True)
        if merged is None or not _parses(merged[0]):
            return None
        if not _unused_imports(merged[0]) <= _unused_imports(ours) | _unused_imports(theirs):
            return None  # an import one side kept for code the other side removed
        notes = tuple(dict.fromkeys(leaf.notes))
        return EntityMerge(*merged, notes=notes, low_confidence=leaf.low)
