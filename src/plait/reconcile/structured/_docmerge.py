"""Three-way merge of section trees: sections by heading path, blocks by text, each merged where it changed.

A node one side replaced in place (the same spot, neither text found on the other side) is that node changed,
so a renamed heading or an edited entry merges with the other side's changes beneath or beside it. What both
sides added at one place keeps a sorted order if each side was sorted, else ours first (an order was chosen:
low confidence); what both added alike is held once. A clash (one node changed two ways, changed against
deleted, a deletion the format's rules refuse, the same nodes in two orders, a new copy of a node the other
side edited) raises `Clash`.
"""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field

from plait.reconcile._mergefile import split_lines
from plait.reconcile.structured._sections import Node, blocks, is_item, sections, unique
from plait.reconcile.structured.base import EntityMerge

__all__ = ["Clash", "Rules", "merge_document", "merge_lines"]

Key = tuple[str, ...]
_MOST_COMPARED = 2500
"""Beyond this many old-new pairs of blocks in one rewritten stretch, rewritten blocks are not matched."""
OrderKey = Callable[[Node], Hashable | None]


class Clash(Exception):
    """The two sides' changes do not combine."""


@dataclass
class Rules:
    """What a format decides (which deletions stand, how siblings sort, how one block both changed merges),
    and what the merge found: the rules that chose, and the sections each side changed."""

    may_delete: Callable[[Node], bool] = lambda node: True
    order: Callable[[Node | None], OrderKey | None] = lambda parent: None
    """For a parent (a section, or None for the file's sections): the sort key of its children, if any."""
    leaf: Callable[[Node, Node, Node], str | None] = lambda base, ours, theirs: None
    notes: list[str] = field(default_factory=list)
    low: bool = False
    ours_changed: list[str] = field(default_factory=list)
    theirs_changed: list[str] = field(default_factory=list)

    def note(self, text: str, *, low: bool) -> None:
        if text not in self.notes:
            self.notes.append(text)
        self.low = self.low or low


def _three(base: str | None, ours: str, theirs: str) -> str:
    if ours == theirs or theirs == base:
        return ours
    if ours == base:
        return theirs
    raise Clash


def _first(key: Key) -> Key:
    """The key of a node's first occurrence (without the count `unique` adds to a repeated one)."""
    return key[:-1] if len(key) > 2 and key[-1][:1] == "#" and key[-1][1:].isdigit() else key


def _alike(base: Sequence[Node], side: Sequence[Node], olds: range, news: range) -> list[tuple[int, int]]:
    """Blocks a side rewrote among blocks it added: each old block with the new one most like it, if alike."""
    pairs: list[tuple[int, int]] = []
    taken: set[int] = set()
    if len(olds) * len(news) > _MOST_COMPARED:
        return pairs
    for i in olds:
        if base[i].kind != "block":
            continue
        scores = [
            (_likeness(base[i].body, side[j].body), j) for j in news if j not in taken and side[j].kind == "block"
        ]
        best = max(scores, default=(0.0, -1))
        if best[0] >= 0.6:
            pairs.append((i, best[1]))
            taken.add(best[1])
    return pairs


def _likeness(a: str, b: str) -> float:
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return matcher.ratio() if matcher.real_quick_ratio() >= 0.6 and matcher.quick_ratio() >= 0.6 else 0.0


def _identify(base: Sequence[Node], side: Sequence[Node]) -> list[Key]:
    """Each side node's identity: its own key, or the key of the base node it replaced in place."""
    base_keys, side_keys = [n.key for n in base], [n.key for n in side]
    ids = list(side_keys)
    in_base, in_side = set(base_keys), set(side_keys)
    matcher = difflib.SequenceMatcher(None, base_keys, side_keys, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "replace":
            continue
        if i2 - i1 == j2 - j1:
            pairs = list(zip(range(i1, i2), range(j1, j2), strict=True))
        else:
            pairs = _alike(base, side, range(i1, i2), range(j1, j2))
        for i, j in pairs:
            if base_keys[i] not in in_side and side_keys[j] not in in_base and base[i].kind == side[j].kind:
                ids[j] = base_keys[i]
    if len(set(ids)) != len(ids):
        raise Clash
    return ids


def _monotonic(keys: Sequence[Hashable]) -> int:
    """1 if strictly ascending, -1 if strictly descending, else 0 (fewer than two keys: 0)."""
    if len(keys) < 2:
        return 0
    try:
        if all(a < b for a, b in zip(keys, keys[1:], strict=False)):  # type: ignore[operator]
            return 1
        if all(a > b for a, b in zip(keys, keys[1:], strict=False)):  # type: ignore[operator]
            return -1
    except TypeError:
        return 0
    return 0


def _direction(key: OrderKey | None, nodes: Sequence[Node]) -> int:
    """The order the nodes' sort keys follow (1 ascending, -1 descending, 0 none or too few)."""
    keys = [k for k in (key(n) for n in nodes) if k is not None] if key else []
    return _monotonic(keys) if len(keys) >= 2 else 0


_Sides = tuple[OrderKey | None, int]


def _lines(base: str, ours: str, theirs: str) -> str:
    """A heading merged line by line when its lines were not added or removed (a title and its underline)."""
    try:
        return _three(base, ours, theirs)
    except Clash:
        lines = [split_lines(text) for text in (base, ours, theirs)]
        if len({len(x) for x in lines}) != 1:
            raise
        merged = [_three(b, o, t) for b, o, t in zip(*lines, strict=True)]
        if not _underlined(merged) and _underlined(lines[1]) and _underlined(lines[2]):
            raise Clash from None  # a longer title over an underline left short
        return "".join(merged)


def _moved(base: list[Key], ours: list[Key], theirs_ids: Sequence[Key]) -> set[Key]:
    """The nodes (of those all three hold) that ours moved; a clash if theirs moved any, as ours' order is kept."""
    held = set(base)
    if [k for k in theirs_ids if k in held] not in (ours, base):
        raise Clash  # theirs reordered nodes: following ours' order would lose it without a word
    matcher = difflib.SequenceMatcher(None, base, ours, autojunk=False)
    stable = {key for block in matcher.get_matching_blocks() for key in base[block.a : block.a + block.size]}
    return set(base) - stable


def _opening(node: Node) -> str:
    """A node's first line (a section's heading), stripped."""
    return (node.body.lstrip("\n").split("\n", 1)[0]).strip()


def _rstripped(text: str) -> str:
    return "".join(line.rstrip(" \t\r\n") + line[len(line.rstrip("\r\n")) :] for line in split_lines(text))


def _underlined(heading: Sequence[str]) -> bool:
    """Whether a title's underline is at least as long as the title."""
    return len(heading) < 2 or len(heading[-1].rstrip()) >= len(heading[-2].strip())


@dataclass
class _Slot:
    key: Key
    text: str
    node: Node
    ours_new: bool = False
    in_list: bool = False
    """A new list item that followed another list item on its side."""


def _open_lists(result: list[_Slot]) -> None:
    """A new list item that ended a list on its side, now right after a paragraph, gets the blank line a list needs
    (reStructuredText would read it as the paragraph's text)."""
    for before, slot in zip(result, result[1:], strict=False):
        if slot.in_list and not slot.node.lead and is_item(slot.node) and not is_item(before.node):
            slot.text = "\n" + slot.text


class _Merge:
    def __init__(self, rules: Rules, added: tuple[set[str], set[str]] = (set(), set())) -> None:
        self.rules = rules
        self.added = added
        """The blocks (their text, leads aside) ours and theirs added anywhere in the file."""

    def pair(self, base: Node | None, ours: Node, theirs: Node) -> str:
        if ours.text == theirs.text:
            return ours.text
        if ours.kind == "block":
            try:
                lead = _three(base.lead if base else None, ours.lead, theirs.lead)
                return lead + self.body(base.body if base else None, ours.body, theirs.body)
            except Clash:
                merged = self.rules.leaf(base, ours, theirs) if base is not None else None
                if merged is None:
                    raise
                return merged
        if base is None and (ours.body, ours.lead) != (theirs.body, theirs.lead):
            raise Clash
        header = _lines(base.body, ours.body, theirs.body) if base else ours.body
        header = (_three(base.lead, ours.lead, theirs.lead) if base else ours.lead) + header
        children = self.merge_list(base.children if base else (), ours.children, theirs.children, ours)
        text = "".join(children)
        if children and children != [n.text for n in blocks(split_lines(text))[0]]:
            raise Clash  # the blocks would run into one another
        tail = _three(base.tail, ours.tail, theirs.tail) if base else ours.tail
        if base is None and ours.tail != theirs.tail:
            self.rules.note("both added one section: ours' blank lines after it", low=True)
        return header + text + tail

    def body(self, base: str | None, ours: str, theirs: str) -> str:
        """A block's text both sides changed: one side's that the other only stripped of trailing spaces."""
        try:
            return _three(base, ours, theirs)
        except Clash:
            for stripped, kept, side in ((ours, theirs, "ours"), (theirs, ours, "theirs")):
                if base is not None and _rstripped(base) == _rstripped(stripped) and _rstripped(kept) == kept:
                    self.rules.note(
                        f"{side} only stripped trailing spaces from a block the other side rewrote", low=False
                    )
                    return kept
            raise

    def changed(self, base: Node | None, side: Node, record: list[str]) -> None:
        if (base is None or base.text != side.text) and side.label not in record:
            record.append(side.label)

    def merge_list(
        self, base: Sequence[Node], ours: Sequence[Node], theirs: Sequence[Node], parent: Node | None
    ) -> list[str]:
        by_base = {n.key: n for n in base}
        ours_ids, theirs_ids = _identify(base, ours), _identify(base, theirs)
        by_ours, by_theirs = dict(zip(ours_ids, ours, strict=True)), dict(zip(theirs_ids, theirs, strict=True))
        kept = set(by_base) & set(by_ours) & set(by_theirs)
        moved = _moved([n.key for n in base if n.key in kept], [k for k in ours_ids if k in kept], theirs_ids)
        for mine, other in ((ours_ids, by_theirs), (theirs_ids, by_ours)):
            edited = {k for k in kept if other[k].text != by_base[k].text}
            if any(k not in by_base and _first(k) in edited for k in mine):
                raise Clash  # a new copy of a node the other side edited: the copy would keep the old text
        top = parent is None
        sort_key = self.rules.order(parent)
        sides: _Sides = (sort_key, 0)
        if sort_key is not None:
            one, two = _direction(sort_key, ours), _direction(sort_key, theirs)
            sides = (sort_key, one if one == two else 0)
        result: list[_Slot] = []
        for i, (key, node) in enumerate(zip(ours_ids, ours, strict=True)):
            if top:
                self.changed(by_base.get(key), node, self.rules.ours_changed)
            if key in by_theirs:
                result.append(_Slot(key, self.pair(by_base.get(key), node, by_theirs[key]), node))
            elif key in by_base:
                self.drop(by_base[key], node, self.added[1])
            else:
                result.append(_Slot(key, node.text, node, ours_new=True, in_list=i > 0 and is_item(ours[i - 1])))
        run: list[_Slot] = []
        after: Key | None = None
        for i, (key, node) in enumerate(zip(theirs_ids, theirs, strict=True)):
            if top:
                self.changed(by_base.get(key), node, self.rules.theirs_changed)
            if key in by_ours:
                if run and (after in moved or key in moved):
                    raise Clash  # theirs added beside a node ours moved: which place is meant is unknown
                self.insert(result, after, run, sides)
                run, after = [], key
            elif key in by_base:
                self.drop(by_base[key], node, self.added[0])
            else:
                run.append(_Slot(key, node.text, node, in_list=i > 0 and is_item(theirs[i - 1])))
        if run and after in moved:
            raise Clash
        self.insert(result, after, run, sides)
        if sides[1] and _direction(sides[0], [slot.node for slot in result]) != sides[1]:
            raise Clash  # the merge would break the order both sides kept
        _open_lists(result)
        return [slot.text for slot in result]

    def drop(self, base: Node, kept: Node, moved: set[str]) -> None:
        """One side deleted `base`, the other kept it as `kept`; `moved`: the blocks the deleting side added.

        An edit the deleting side added elsewhere word for word moved with the deletion (a section moved away).
        """
        if not self.rules.may_delete(base):
            raise Clash
        if kept.text != base.text:
            if kept.kind == "section":
                olds = {child.body for child in base.children}
                edits = [child.body for child in kept.children if child.body not in olds]
            else:
                edits = [kept.body]
            if (kept.kind == "section" and kept.body != base.body) or not edits or not set(edits) <= moved:
                raise Clash
            self.rules.note("a side deleted what the other edited, but added the edited text elsewhere", low=True)

    def insert(self, result: list[_Slot], after: Key | None, run: list[_Slot], sides: _Sides) -> None:
        """Theirs' new nodes `run`, after the node `after` (None: at the start), beside ours' new ones there."""
        if not run:
            return
        keys = [slot.key for slot in result]
        pos = keys.index(after) + 1 if after is not None else 0
        end = pos
        while end < len(result) and result[end].ours_new:
            end += 1
        if end == pos:
            result[pos:pos] = run
            return
        result[pos:end] = self.order(result[pos:end], run, sides)

    def order(self, ours_new: list[_Slot], run: list[_Slot], sides: _Sides) -> list[_Slot]:
        """Ours' and theirs' additions at one place: in sorted order when each side was sorted, else ours first.

        Two additions that open with the same line but differ are two versions of one thing: a clash.
        """
        if {_opening(slot.node) for slot in ours_new} & {_opening(slot.node) for slot in run}:
            raise Clash
        key, direction = sides
        if key is not None and direction:
            added = ours_new + run
            if all(key(slot.node) is not None for slot in added):
                if any(slot.node.kind == "section" for slot in added):
                    self.rules.note("both added a section at one place: kept in the order both sides sort by", low=True)
                else:
                    self.rules.note("both added at one place: kept in the order both sides sort by", low=False)
                return sorted(added, key=lambda slot: key(slot.node), reverse=direction < 0)  # type: ignore[arg-type,return-value]
        self.rules.note("both added at one place: ours' additions first", low=True)
        return ours_new + run


def headings_repeated(text: str) -> int:
    """How many sections of a document repeat an earlier one's heading path (an entry may rightly be listed twice,
    under two releases; a release is not)."""
    found = sections(text)
    return sum(1 for node in found if _first(node.key) != node.key)


def _repeats(found: Sequence[Node]) -> int:
    """How many sections, and blocks within a section, repeat an earlier one's heading path or text."""
    keys = [found, *(section.children for section in found)]
    return sum(1 for nodes in keys for node in nodes if _first(node.key) != node.key)


def merge_document(base: str, ours: str, theirs: str, rules: Rules) -> EntityMerge | None:
    """The three texts merged section by section, or None when the changes clash or the result reads differently.

    The merged text must cut back into exactly the sections it was built from (no heading made or lost).
    """
    if ours == theirs or theirs == base or ours == base:
        return EntityMerge(theirs if ours == base else ours)
    try:
        found = [sections(text) for text in (base, ours, theirs)]
        olds, mine, yours = ({c.body for section in side for c in section.children} for side in found)
        texts = _Merge(rules, (mine - olds, yours - olds)).merge_list(found[0], found[1], found[2], None)
    except Clash:
        return None
    text = "".join(texts)
    merged = sections(text)
    if [node.text for node in merged if node.text] != [t for t in texts if t]:
        return None
    if _repeats(merged) > max(_repeats(sections(ours)), _repeats(sections(theirs))):
        return None  # one heading or entry held twice: both sides brought it, each its own way
    return EntityMerge(
        text, tuple(rules.ours_changed), tuple(rules.theirs_changed), tuple(rules.notes), low_confidence=rules.low
    )


def merge_lines(base: str, ours: str, theirs: str, rules: Rules, order: OrderKey) -> str:
    """Three texts merged line by line as a list (a toctree's entries), `order` sorting the lines; raises `Clash`."""

    def nodes(text: str) -> list[Node]:
        seen: Counter[Key] = Counter()
        return [Node(unique(("line", line.strip()), seen), "block", "", line) for line in split_lines(text)]

    inner = Rules(order=lambda parent: order)
    merged = "".join(_Merge(inner).merge_list(nodes(base), nodes(ours), nodes(theirs), None))
    for note in inner.notes:
        rules.note(note, low=inner.low)
    return merged
