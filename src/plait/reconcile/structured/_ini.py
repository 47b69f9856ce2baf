"""INI-style files (setup.cfg, tox.ini, .flake8) read line by line as sections of keys, kept byte for byte."""

from __future__ import annotations

import configparser
import re
from collections import Counter

from plait.reconcile._mergefile import split_lines
from plait.reconcile.structured._tree import Notes, blank_or_comment, merge_items, merge_tree, with_end
from plait.reconcile.structured.base import Entity, EntityMerge

__all__ = ["IniMerger", "ini_entities"]

_SECTION = re.compile(r"^\[([^\]\n]+)\][ \t]*(?:[#;].*)?\r?\n?$")
_KEY = re.compile(r"^([^\s=:#;\[][^=:\n]*?)[ \t]*[=:]")
_VALUE = re.compile(r"^([^=:]*[=:][ \t]*)(.*?)([ \t]*\r?\n?)$")
_PIN_KEYS = frozenset({"install_requires", "deps", "tests_require", "setup_requires", "requires", "requirements"})
_PIN_SECTIONS = frozenset({"options.extras_require"})


class _Section:
    def __init__(self, name: str, lead: str, header: str) -> None:
        self.name, self.lead, self.header = name, lead, header
        self.keys: list[list[str]] = []  # [name, lead, body]
        self.seen: Counter[str] = Counter()

    def entities(self) -> list[Entity]:
        return [Entity(("key", self.name, name), name.split("\0")[0], lead, body) for name, lead, body in self.keys]


def _continues(lines: list[str], i: int) -> bool:
    """Whether line i still belongs to the value above it: indented, or blank before more indented lines."""
    line = lines[i]
    if line.strip():
        return line[0] in " \t"
    rest = next((later for later in lines[i + 1 :] if later.strip()), "")
    return bool(rest) and rest[0] in " \t"


def ini_entities(text: str) -> list[Entity] | None:
    """Sections (containers) and their keys, a key's continuation lines in its body; None if a line is unreadable."""
    lines = split_lines(text)
    sections = [_Section("", "", "")]
    lead = ""
    in_key = False
    for i, line in enumerate(lines):
        current = sections[-1]
        if in_key and _continues(lines, i):
            current.keys[-1][2] += line
        elif blank_or_comment(line, "#;"):
            lead, in_key = lead + line, False
        elif match := _SECTION.match(line):
            if any(s.name == match[1].strip() for s in sections):
                return None
            sections.append(_Section(match[1].strip(), lead, line))
            lead, in_key = "", False
        elif match := _KEY.match(line):
            name = match[1].strip()
            current.seen[name] += 1
            unique = name if current.seen[name] == 1 else f"{name}\0{current.seen[name]}"
            current.keys.append([unique, lead, line])
            lead, in_key = "", True
        else:
            return None
    top = sections[0].entities()
    for section in sections[1:]:
        top.append(Entity(("section", section.name), f"[{section.name}]", section.lead, section.header))
        top[-1] = Entity(top[-1].key, top[-1].name, top[-1].lead, top[-1].body, tuple(section.entities()))
    return with_end(top, lead)


def _first(text: str) -> tuple[str, list[str]]:
    lines = split_lines(text)
    return (lines[0], lines[1:]) if lines else ("", [])


def _three(base: str, ours: str, theirs: str) -> str | None:
    if ours == theirs or theirs == base:
        return ours
    return theirs if ours == base else None


def _comma_list(base: str, ours: str, theirs: str, notes: Notes) -> str | None:
    """A one-line comma-separated value (an envlist, an exclude list) merged item by item, its spacing kept."""
    matches = [_VALUE.match(line) for line in (base, ours, theirs)]
    if any(m is None or "," not in m[2] or re.search(r"[{}()\[\]\"'#;]", m[2]) for m in matches):
        return None
    b, o, t = (m for m in matches if m is not None)
    separators = {sep for m in (b, o, t) for sep in re.findall(r"\s*,\s*", m[2])}
    if len(separators) != 1 or not (b[1] == o[1] == t[1] and o[3] == t[3]):
        return None
    sep = separators.pop()
    items = [[f"{item}\n" for item in m[2].split(sep)] for m in (b, o, t)]
    if any(not item.strip() for side in items for item in side):
        return None
    merged = merge_items(*items, pins=False, notes=notes)
    return None if merged is None else o[1] + sep.join(merged.splitlines()) + o[3]


def _value_items(text: str) -> tuple[list[str], bool] | None:
    """A key's value as items (the first line's value, then each continuation line) and whether it is wrapped."""
    first, rest = _first(text)
    match = _VALUE.match(first)
    if match is None or any(blank_or_comment(line, "#;") for line in rest):
        return None
    items = [f"{match[2]}\n"] if match[2] else []
    return items + [f"{line.strip()}\n" for line in rest], bool(rest)


def _rewrapped(base: str, ours: str, theirs: str, pins: bool, notes: Notes) -> str | None:
    """A value one side rewrapped (one line <-> one item per line): the side whose items are the merge's and whose
    layout is the one the three-way rule picks; else None."""
    values = [_value_items(text) for text in (base, ours, theirs)]
    if any(v is None for v in values):
        return None
    (b, b_wrap), (o, o_wrap), (t, t_wrap) = (v for v in values if v is not None)
    if b_wrap == o_wrap == t_wrap or (o_wrap != b_wrap and t_wrap != b_wrap):
        return None
    merged = merge_items(b, o, t, pins=pins, notes=notes, comment="#;")
    wrapped = o_wrap if o_wrap != b_wrap else t_wrap
    for items, wrap, text in ((o, o_wrap, ours), (t, t_wrap, theirs)):
        if merged is not None and merged == "".join(items) and wrap == wrapped:
            return text
    return None


def _parses(text: str) -> bool:
    parser = configparser.RawConfigParser(strict=False, interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return False
    return True


class IniMerger:
    """Merges INI-style files key by key; a multi-line value is a list merged item by item."""

    extensions: tuple[str, ...] = (".cfg", ".ini")
    file_names: tuple[str, ...] = ("setup.cfg", "tox.ini", ".flake8", ".pylintrc", ".coveragerc", "pylintrc")

    def merge(self, base: str, ours: str, theirs: str) -> EntityMerge | None:
        sides = [ini_entities(text) for text in (base, ours, theirs)]
        b, o, t = sides
        if b is None or o is None or t is None:
            return None
        notes = Notes()

        def leaf(key: tuple[str, ...], old: str, mine: str, other: str) -> str | None:
            if key[0] != "key" or not all(_KEY.match(text) for text in (old, mine, other)):
                return None
            (b1, b_rest), (o1, o_rest), (t1, t_rest) = _first(old), _first(mine), _first(other)
            if not (b_rest or o_rest or t_rest):
                return _three(b1, o1, t1) or _comma_list(b1, o1, t1, notes)
            pins = key[2].split("\0")[0] in _PIN_KEYS or key[1] in _PIN_SECTIONS
            first = _three(b1, o1, t1)
            if first is None or not (b_rest and o_rest and t_rest):
                return _rewrapped(old, mine, other, pins, notes)
            rest = merge_items(b_rest, o_rest, t_rest, pins=pins, notes=notes, comment="#;")
            return None if rest is None else first + rest

        merged = merge_tree(b, o, t, leaf, notes)
        if merged is None or ini_entities(merged.text) is None:
            return None
        if _parses(base) and not _parses(merged.text):
            return None
        return merged
