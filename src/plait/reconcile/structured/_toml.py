"""TOML files (pyproject.toml and others) read line by line as tables of keys, kept byte for byte."""

from __future__ import annotations

import re
import tomllib
from collections import Counter

from plait.reconcile._mergefile import split_lines
from plait.reconcile.structured._tree import Notes, blank_or_comment, merge_items, merge_tree, with_end
from plait.reconcile.structured.base import Entity, EntityMerge

__all__ = ["TomlMerger", "toml_entities"]

_BARE = r"""(?:[A-Za-z0-9_-]+|"(?:[^"\\\n]|\\.)*"|'[^'\n]*')"""
_KEY = re.compile(rf"^[ \t]*({_BARE}(?:[ \t]*\.[ \t]*{_BARE})*)[ \t]*=")
_HEADER = re.compile(rf"^[ \t]*(\[\[?)[ \t]*({_BARE}(?:[ \t]*\.[ \t]*{_BARE})*)[ \t]*(\]\]?)[ \t]*(?:#.*)?\r?\n?$")
_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')
_PIN_KEYS = frozenset({("project", "dependencies"), ("build-system", "requires")})
_PIN_TABLES = frozenset({"project.optional-dependencies", "dependency-groups"})


def _scan(text: str, depth: int, multi: str | None) -> tuple[int, str | None] | None:
    """The bracket depth and open multi-line string after reading `text`; None if a string does not close."""
    pos = 0
    while pos < len(text):
        if multi:
            end = text.find(multi, pos)
            if end < 0:
                return depth, multi
            pos, multi = end + 3, None
            continue
        char = text[pos]
        if text.startswith(('"""', "'''"), pos):
            multi, pos = text[pos : pos + 3], pos + 3
        elif char == '"':
            match = _STRING.match(text, pos)
            if match is None:
                return None
            pos = match.end()
        elif char == "'":
            end = text.find("'", pos + 1)
            if end < 0:
                return None
            pos = end + 1
        elif char == "#":
            break
        else:
            depth += (char in "[{") - (char in "]}")
            pos += 1
    return depth, multi


def _value_end(lines: list[str], first: int, column: int) -> int | None:
    """The index after the last line of the value that starts on line `first` at `column`."""
    state = _scan(lines[first][column:], 0, None)
    line = first
    while state is not None and (state[0] > 0 or state[1]):
        line += 1
        if line >= len(lines):
            return None
        state = _scan(lines[line], *state)
    return None if state is None else line + 1


def _name(dotted: str) -> str:
    return ".".join(part.strip().strip("\"'") for part in re.findall(rf"{_BARE}", dotted))


def toml_entities(text: str) -> list[Entity] | None:
    """Top-level keys and tables (containers of their keys); None where a line cannot be placed."""
    lines = split_lines(text)
    tables: list[tuple[tuple[str, ...], str, str, list[Entity]]] = [(("top",), "", "", [])]
    seen: Counter[str] = Counter()
    lead = ""
    i = 0
    while i < len(lines):
        line = lines[i]
        if blank_or_comment(line):
            lead += line
            i += 1
        elif header := _HEADER.match(line):
            if (header[1] == "[[") != (header[3] == "]]"):
                return None
            name = _name(header[2])
            seen[name] += 1
            table_key = ("array", name, str(seen[name])) if header[1] == "[[" else ("table", name)
            tables.append((table_key, lead, line, []))
            lead, i = "", i + 1
        elif key_match := _KEY.match(line):
            end = _value_end(lines, i, key_match.end())
            if end is None:
                return None
            table = tables[-1]
            name = _name(key_match[1])
            table[3].append(
                Entity(("key", table[0][1] if len(table[0]) > 1 else "", name), name, lead, "".join(lines[i:end]))
            )
            lead, i = "", end
        else:
            return None
    top = list(tables[0][3])
    for key, table_lead, header_line, keys in tables[1:]:
        top.append(Entity(key, header_line.strip(), table_lead, header_line, tuple(keys)))
    if len({e.key for e in top}) != len(top):
        return None
    return with_end(top, lead)


def _array(body: str) -> tuple[str, list[str], str] | None:
    """A multi-line array value as its opening line, one line per item (each ending in a comma), its closing line."""
    lines = split_lines(body)
    if len(lines) < 2 or not lines[0].split("#")[0].rstrip().endswith("[") or not lines[-1].lstrip().startswith("]"):
        return None
    items = lines[1:-1]
    for item in items:
        if blank_or_comment(item):
            continue
        state = _scan(item, 0, None)
        if state != (0, None) or not item.split(" #")[0].rstrip().endswith(","):
            return None
    return lines[0], items, lines[-1]


def _pick(old: str, mine: str, other: str) -> str | None:
    if mine == other or other == old:
        return mine
    return other if mine == old else None


class TomlMerger:
    """Merges TOML files key by key within tables; a multi-line array is merged item by item."""

    extensions: tuple[str, ...] = (".toml",)
    file_names: tuple[str, ...] = ()

    def merge(self, base: str, ours: str, theirs: str) -> EntityMerge | None:
        b, o, t = (toml_entities(text) for text in (base, ours, theirs))
        if b is None or o is None or t is None:
            return None
        notes = Notes()

        def leaf(key: tuple[str, ...], old: str, mine: str, other: str) -> str | None:
            arrays = [_array(text) for text in (old, mine, other)] if key[0] == "key" else []
            if not arrays or any(a is None for a in arrays) or not all(_KEY.match(text) for text in (old, mine, other)):
                return None
            (b1, b_items, b2), (o1, o_items, o2), (t1, t_items, t2) = (a for a in arrays if a is not None)
            first, last = _pick(b1, o1, t1), _pick(b2, o2, t2)
            pins = (key[1], key[2]) in _PIN_KEYS or key[1] in _PIN_TABLES
            items = merge_items(b_items, o_items, t_items, pins=pins, notes=notes)
            return None if first is None or last is None or items is None else first + items + last

        merged = merge_tree(b, o, t, leaf, notes)
        if merged is None:
            return None
        try:
            tomllib.loads(merged.text)
        except tomllib.TOMLDecodeError:
            return None
        return merged
