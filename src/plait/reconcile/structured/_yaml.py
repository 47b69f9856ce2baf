"""YAML files (CI workflows, pre-commit configuration) read line by line as block mappings and sequences.

A block mapping's keys are entities, a key whose value is an indented block is a container of its own; a block
sequence's items are entities keyed by what they name (`- uses: actions/checkout@...` by the action, `- repo:`
by the repository, `- name:` by the name), each item whole. Flow collections, block scalars and anything else
are kept whole inside the key they belong to. A line the reader cannot place (tabs, documents, directives, an
indentation it cannot follow) leaves the file alone.
"""

from __future__ import annotations

import difflib
import json
import re
from collections import Counter

import yaml

from plait.reconcile._mergefile import split_lines
from plait.reconcile._syntax import syntax_error
from plait.reconcile.structured._moot import drop_moot
from plait.reconcile.structured._pins import VersionKey, version_key
from plait.reconcile.structured._tree import Notes, blank_or_comment, merge_items, merge_tree, with_end
from plait.reconcile.structured.base import Entity, EntityMerge

__all__ = ["YamlMerger", "yaml_entities"]

_KEY = re.compile(r"""^( *)([^\s#'"\-?&*!|>{\[%@`][^:#\n]*?|"[^"\n]*"|'[^'\n]*'):(?:[ \t]+(.*?))?[ \t]*\r?\n?$""")
_ITEM = re.compile(r"^( *)-(?:[ \t]+(.*?))?[ \t]*\r?\n?$")
_NAMING = re.compile(r"""^["']?([\w.-]+)["']?:[ \t]+(.*?)$""")
_FLOW = re.compile(r"^( *(?:- +)?[^\s\[{#'\"][^:#\n]*:[ \t]+\[[ \t]*)([^\[\]{}#'\"\n]*?)([ \t]*\][ \t]*\r?\n?)$")
_PINNED = re.compile(r"^(\s*(?:-\s+)?(?:uses|rev):\s+)(\S+?)(?:\s+#\s*(?:frozen:\s*)?(\S+))?\s*$")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _item_name(content: str) -> str:
    """What a sequence item names: `uses` without its version, `repo`, `id`, `name`, else its first line."""
    named = _NAMING.match(content)
    if named is None:
        return content.strip()
    value = named[2].split(" #")[0].strip().strip("\"'")
    return f"{named[1]}: {value.split('@')[0] if named[1] == 'uses' else value}"


def _block(lines: list[str], start: int, end: int, parent: str) -> list[Entity] | None:
    """The entries between `start` and `end` (at the indentation of the first), each with the comments above it."""
    content = [i for i in range(start, end) if not blank_or_comment(lines[i])]
    if not content:
        return []
    indent = _indent(lines[content[0]])
    mapping = not _ITEM.match(lines[content[0]])
    entries = [
        i
        for i in content
        if _indent(lines[i]) < indent or (_indent(lines[i]) == indent and not (mapping and _ITEM.match(lines[i])))
    ]
    if any(_indent(lines[i]) != indent for i in entries):
        return None
    kinds = {bool(_ITEM.match(lines[i])) for i in entries}
    if len(kinds) != 1:
        return None
    entities: list[Entity] = []
    seen: Counter[str] = Counter()
    previous = start
    for n, first in enumerate(entries):
        stop = entries[n + 1] if n + 1 < len(entries) else end
        while stop - 1 > first and blank_or_comment(lines[stop - 1]):
            stop -= 1  # comments and blank lines at the end go with the entry below
        if n + 1 == len(entries):
            stop = max(stop, first + 1)
        lead = "".join(lines[previous:first])
        entity = _entry(lines, first, stop, parent, seen, lead)
        if entity is None:
            return None
        entities.append(entity)
        previous = stop
    return with_end(entities, "".join(lines[previous:end]))


def _entry(lines: list[str], first: int, stop: int, parent: str, seen: Counter[str], lead: str) -> Entity | None:
    line = lines[first]
    if item := _ITEM.match(line):
        name = _item_name(item[2] or "")
        seen[name] += 1
        key = ("item", parent, name, str(seen[name]))
        return Entity(key, f"{parent}[{name}]", lead, "".join(lines[first:stop]))
    mapping = _KEY.match(line)
    if mapping is None:
        return None
    name = mapping[2].strip("\"'")
    seen[name] += 1
    if seen[name] > 1:
        return None  # a key twice in one mapping: not something to merge by key
    path = f"{parent}.{name}" if parent else name
    value = (mapping[3] or "").split(" #")[0].strip() if not (mapping[3] or "").startswith("#") else ""
    if value or stop == first + 1:
        return Entity(("key", path), path, lead, "".join(lines[first:stop]))
    children = _block(lines, first + 1, stop, path)
    if children is None:
        return None
    return Entity(("key", path), path, lead, line, tuple(children))


def yaml_entities(text: str) -> list[Entity] | None:
    """The top-level entries of a one-document block YAML file, or None where the reader is not certain."""
    lines = split_lines(text)
    if any("\t" in line[: _indent(line) + 1] or line.startswith(("---", "...", "%")) for line in lines):
        return None
    return _block(lines, 0, len(lines), "")


def _pin(line: str) -> tuple[str, str, VersionKey] | None:
    """A `uses:`/`rev:` line as (what it pins, the line before the reference, the version it names)."""
    match = _PINNED.match(line)
    if match is None:
        return None
    ref = match[2]
    target, _, version = ref.rpartition("@") if "@" in ref else ("", "", ref)
    key = version_key(match[3] or version)
    return (match[1] + target, match[3] or version, key) if key is not None else None


def _precision(version: str) -> int:
    return len(re.findall(r"\d+", version))


def _flow_list(base: str, ours: str, theirs: str, notes: Notes) -> str | None:
    """A one-line flow sequence (`toxenvs: [lint, py38]`) merged item by item, its spacing kept; else None."""
    matches = [_FLOW.match(line) for line in (base, ours, theirs)]
    if any(m is None for m in matches):
        return None
    b, o, t = (m for m in matches if m is not None)
    separators = {sep for m in (b, o, t) for sep in re.findall(r"[ \t]*,[ \t]*", m[2])}
    if len(separators) > 1 or not (b[1] == o[1] == t[1] and o[3] == t[3]):
        return None
    sep = separators.pop() if separators else ", "
    items = [[f"{item}\n" for item in m[2].split(sep)] if m[2] else [] for m in (b, o, t)]
    if any(not item.strip() for side in items for item in side):
        return None
    merged = merge_items(*items, pins=False, notes=notes)
    return None if merged is None else o[1] + sep.join(merged.splitlines()) + o[3]


def newer_version_lines(base: str, ours: str, theirs: str, notes: Notes, label: str) -> str | None:
    """An entry both sides changed only in `uses:`/`rev:` versions (each line taking the newer) or in the items
    of one-line flow sequences (merged item by item); else None."""
    b, o, t = split_lines(base), split_lines(ours), split_lines(theirs)
    if not len(b) == len(o) == len(t):
        return None
    merged = []
    for old, mine, other in zip(b, o, t, strict=True):
        if mine == other or other == old:
            merged.append(mine)
            continue
        if mine == old:
            merged.append(other)
            continue
        pins = [_pin(x) for x in (old, mine, other)]
        if any(p is None for p in pins):
            flow = _flow_list(old, mine, other, notes)
            if flow is None:
                return None
            merged.append(flow)
            continue
        (bt, bv, bk), (ot, ov, ok), (tt, tv, tk) = (p for p in pins if p is not None)
        if not bt == ot == tt or _precision(ov) != _precision(tv) or not (ok > bk and tk > bk) or ok == tk:
            return None  # a floating major tag (v3) and an exact one (v3.2.2) are not newer or older
        newer, older = (ov, tv) if ok > tk else (tv, ov)
        notes.add(f"took the newer version of {ot.split(':', 1)[1].strip() or label}: {newer} over {older}")
        merged.append(mine if ok > tk else other)
    return "".join(merged)


def _reversioned(old: str, new: str) -> bool:
    """Whether an entry changed only the versions its `uses:`/`rev:` lines name."""
    before, after = split_lines(old), split_lines(new)
    if len(before) != len(after):
        return False
    for was, now in zip(before, after, strict=True):
        if was != now:
            pins = _pin(was), _pin(now)
            if pins[0] is None or pins[1] is None or pins[0][0] != pins[1][0]:
                return False
    return True


def _changes(base: list[str], side: list[str]) -> set[tuple[int, int, tuple[str, ...]]]:
    matcher = difflib.SequenceMatcher(None, base, side, autojunk=False)
    return {(i1, i2, tuple(side[j1:j2])) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"}


def contained(base: str, ours: str, theirs: str) -> str | None:
    """The side whose line changes to an entry include every one of the other side's; else None."""
    b, o, t = split_lines(base), split_lines(ours), split_lines(theirs)
    mine, other = _changes(b, o), _changes(b, t)
    return ours if other <= mine else theirs if mine <= other else None


def _value(text: str) -> str | None:
    """An item's value written one canonical way (its layout aside), or None if it does not load alone."""
    try:
        return json.dumps(yaml.safe_load(text), sort_keys=True, default=str)
    except yaml.YAMLError:
        return None


def _without_dropped(base: list[Entity], ours: list[Entity], theirs: list[Entity]) -> list[Entity]:
    """The base without the sequence items both sides removed, in every container the three share.

    A new item of one side is then not taken for one of those renamed (a build matrix's `pypy` entry both sides
    dropped while one put `py37` in its place): both removed it, whatever else either added. An item whose
    value comes back as a new item (one side rewrote the list in another layout) is kept, so that the entity
    merge still sees a removal against a rewrite.
    """
    o, t = {e.key: e for e in ours}, {e.key: e for e in theirs}
    known = {e.key for e in base}
    added = [_value(e.body) for e in (*ours, *theirs) if e.key not in known and e.key[0] == "item"]
    kept: list[Entity] = []
    for entity in base:
        mine, other = o.get(entity.key), t.get(entity.key)
        if entity.key[0] == "item" and mine is None and other is None:
            value = _value(entity.body)
            if value is not None and None not in added and value not in added:
                continue
        if entity.children is not None and mine and other and mine.children is not None and other.children is not None:
            children = _without_dropped(list(entity.children), list(mine.children), list(other.children))
            entity = Entity(entity.key, entity.name, entity.lead, entity.body, tuple(children))
        kept.append(entity)
    return kept


class YamlMerger:
    """Merges block YAML files key by key and sequence item by item; two version bumps of one action take the newer."""

    extensions: tuple[str, ...] = (".yml", ".yaml")
    file_names: tuple[str, ...] = ()

    def merge(self, base: str, ours: str, theirs: str) -> EntityMerge | None:
        b, o, t = (yaml_entities(text) for text in (base, ours, theirs))
        if b is None or o is None or t is None:
            return None
        notes = Notes()
        o, t = drop_moot(b, o, t, _reversioned, notes)
        b = _without_dropped(b, o, t)

        def leaf(key: tuple[str, ...], old: str, mine: str, other: str) -> str | None:
            label = key[2].partition(": ")[2] if key[0] == "item" else key[1]
            return newer_version_lines(old, mine, other, notes, label) or contained(old, mine, other)

        merged = merge_tree(b, o, t, leaf, notes)
        if merged is None or yaml_entities(merged.text) is None or syntax_error("merged.yaml", merged.text):
            return None
        return merged
