"""One Python statement both sides changed, merged element by element.

The statement's list, tuple, set or dict literal, call arguments or imported names are cut into elements
(each element's own text and the separator after it). The three element lists merge as sequences: both
sides' changes to different elements combine; both sides' deletions unite; items both sides inserted at one
place are both kept (sorted where the list was sorted, else ours first, a choice noted as such), except
positional call arguments, which are never guessed; an element both sides replaced merges recursively when
it is itself a keyword argument, a dict entry or a collection. Anything else is left to the next rung.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from plait.reconcile._mergefile import split_lines
from plait.reconcile.structured._seqmerge import Pick, keeps_order, merge_sequences

__all__ = ["Outcome", "merge_statement"]

_COMMENT = re.compile(r"#[^\n]*")
_SIDES = ("base", "ours", "theirs")
_Sort = Callable[[str], object]


def _plain(core: str) -> object:
    return core.strip("'\"")


def _folded(core: str) -> object:
    return core.strip("'\"").casefold()


def _by_type(core: str) -> object:
    name = core.split(" as ")[0].strip()
    kind = 0 if name.isupper() and len(name) > 1 else 1 if name[:1].isupper() else 2
    return (kind, name)


_SORTS: tuple[_Sort, ...] = (_plain, _folded, _by_type)


@dataclass
class Outcome:
    """What the merge had to decide, beyond combining separate changes."""

    notes: list[str] = field(default_factory=list)
    chose: bool = False
    """Whether an order was chosen (no sorted list to follow)."""


@dataclass(frozen=True)
class _Listing:
    head: str
    cores: tuple[str, ...]
    seps: tuple[str, ...]
    tail: str
    values: tuple[int, ...]
    """Where each element's value starts in its core (after `name=` or `key: `)."""
    keywords: tuple[str, ...]
    """Each element's keyword or dict key, empty for a plain item; positional-only calls refuse insertions."""
    is_call: bool

    def key(self, i: int) -> str:
        return self.cores[i] + "".join(_COMMENT.findall(self.seps[i]))


def _offsets(text: str) -> list[int]:
    starts = [0]
    for line in split_lines(text):
        starts.append(starts[-1] + len(line))
    return starts


def _at(text: str, starts: list[int], line: int, col: int) -> int:
    begin = starts[line - 1]
    row = text[begin : starts[line] if line < len(starts) else len(text)]
    return begin + len(row.encode()[:col].decode(errors="replace"))


def _elements(node: ast.AST) -> tuple[list[tuple[ast.AST, ast.AST, str]], bool] | None:
    """(element, value part, key) for each element of a container node, and whether it is a call."""
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return [(e, e, "") for e in node.elts], False
    if isinstance(node, ast.Dict):
        if any(k is None for k in node.keys):
            return None
        return [(k, v, ast.unparse(k)) for k, v in zip(node.keys, node.values, strict=True) if k is not None], False
    if isinstance(node, ast.Call):
        if any(isinstance(a, ast.GeneratorExp) for a in node.args) or any(k.arg is None for k in node.keywords):
            return None
        found: list[tuple[ast.AST, ast.AST, str]] = [(a, a, "") for a in node.args]
        found += [(k, k.value, k.arg or "") for k in node.keywords]
        found.sort(key=lambda e: (getattr(e[0], "lineno", 0), getattr(e[0], "col_offset", 0)))
        return found, True
    if isinstance(node, ast.ImportFrom):
        return [(a, a, a.asname or a.name) for a in node.names], False
    return None


def _listing(text: str, node: ast.AST) -> _Listing | None:
    found = _elements(node)
    if found is None or not found[0]:
        return None
    elements, is_call = found
    starts = _offsets(text)
    end = _at(text, starts, node.end_lineno or 0, node.end_col_offset or 0)  # type: ignore[attr-defined]
    spans = []
    for element, value, _ in elements:
        begin = _at(text, starts, element.lineno, element.col_offset)  # type: ignore[attr-defined]
        stop = _at(text, starts, value.end_lineno, value.end_col_offset)  # type: ignore[attr-defined]
        inner = _at(text, starts, value.lineno, value.col_offset)  # type: ignore[attr-defined]
        spans.append((begin, stop, inner - begin))
    closed = text[end - 1 : end] in (")", "]", "}")
    if isinstance(node, ast.Tuple) and not (closed and text[_at(text, starts, node.lineno, node.col_offset)] == "("):
        return None
    if not closed and not isinstance(node, ast.ImportFrom):
        return None
    close = end - 1 if closed else spans[-1][1]
    ends = [b for b, _, _ in spans[1:]] + [close]
    if any(stop > nxt for (_, stop, _), nxt in zip(spans, ends, strict=True)):
        return None
    return _Listing(
        head=text[: spans[0][0]],
        cores=tuple(text[b:s] for b, s, _ in spans),
        seps=tuple(text[s:nxt] for (_, s, _), nxt in zip(spans, ends, strict=True)),
        tail=text[close:],
        values=tuple(v for _, _, v in spans),
        keywords=tuple(k for _, _, k in elements),
        is_call=is_call,
    )


def _container(text: str, statement: bool) -> _Listing | None:
    try:
        tree = ast.parse(text, mode="exec" if statement else "eval")
    except (SyntaxError, ValueError):
        return None
    if isinstance(tree, ast.Expression):
        return _listing(text, tree.body)
    if not isinstance(tree, ast.Module) or len(tree.body) != 1:
        return None
    node: ast.AST = tree.body[0]
    if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign | ast.Expr) and node.value is not None:
        node = node.value
    return _listing(text, node)


def _three(base: str, ours: str, theirs: str) -> str | None:
    if ours == theirs or theirs == base:
        return ours
    return theirs if ours == base else None


class _Merge:
    def __init__(self, outcome: Outcome) -> None:
        self.outcome = outcome

    def text(self, base: str, ours: str, theirs: str, *, statement: bool) -> str | None:
        listings = [_container(t, statement) for t in (base, ours, theirs)]
        b, o, t = listings
        if b is None or o is None or t is None or len({x.is_call for x in (b, o, t)}) != 1:
            return None
        head, tail = _three(b.head, o.head, t.head), _three(b.tail, o.tail, t.tail)
        if head is None or tail is None:
            return None
        merged: dict[int, str] = {}

        def nested(i: int, j: int, k: int) -> bool:
            done = self.element(b, o, t, (i, j, k))
            if done is not None:
                merged[i] = done
            return done is not None

        def join(mine: list[Pick], yours: list[Pick], at: int) -> list[Pick] | None:
            return self.join(b, o, t, mine, yours)

        keys = [[side.key(i) for i in range(len(side.cores))] for side in (b, o, t)]
        picks = merge_sequences(*keys, join=join, nested=nested)
        if not picks or _doubled(picks, {"base": b, "ours": o, "theirs": t}):
            return None
        order = [
            keys[_SIDES.index("ours" if p.side == "nested" else p.side)][p.ours if p.side == "nested" else p.index]
            for p in picks
        ]
        if not (keeps_order(order, keys[0], keys[1]) and keeps_order(order, keys[0], keys[2])):
            return None  # the sides moved elements in opposite orders
        body = _assemble(picks, {"base": b, "ours": o, "theirs": t}, merged)
        return None if body is None else head + body + tail

    def element(self, b: _Listing, o: _Listing, t: _Listing, at: tuple[int, int, int]) -> str | None:
        """Three versions of one element: a keyword or entry whose value merges as a collection."""
        sides = (b, o, t)
        prefix = _three(*(side.cores[n][: side.values[n]] for side, n in zip(sides, at, strict=True)))
        values = [side.cores[n][side.values[n] :] for side, n in zip(sides, at, strict=True)]
        if prefix is None:
            return None
        value = self.text(values[0], values[1], values[2], statement=False)
        return None if value is None else prefix + value

    def join(self, b: _Listing, o: _Listing, t: _Listing, mine: list[Pick], yours: list[Pick]) -> list[Pick] | None:
        """Both sides inserted elements at one place: both kept, in sorted place or ours first."""
        ours_new = {o.cores[p.index]: p for p in mine}
        theirs_new = [p for p in yours if t.cores[p.index] not in ours_new]
        names = [o.keywords[p.index] for p in mine] + [t.keywords[p.index] for p in theirs_new]
        if b.is_call and not all(names):
            return None  # positional arguments: their order is their meaning
        if any(names) and len(set(names)) != len(names):
            return None  # one keyword or key given two values
        if not theirs_new:
            return mine
        for sort in _SORTS:
            if all(_ascending(side.cores, sort) for side in (b, o, t)):
                joined = sorted([*mine, *theirs_new], key=lambda p: sort((o if p.side == "ours" else t).cores[p.index]))  # type: ignore[arg-type, return-value]
                self.outcome.notes.append("kept the elements sorted")
                return joined
        self.outcome.notes.append("both added elements at one place: ours first (an order was chosen)")
        self.outcome.chose = True
        return [*mine, *theirs_new]


def _ascending(cores: Sequence[str], sort: _Sort) -> bool:
    keys = [sort(c) for c in cores]
    try:
        return len(keys) >= 2 and keys == sorted(keys)  # type: ignore[type-var]
    except TypeError:
        return False


def _doubled(picks: list[Pick], sides: dict[str, _Listing]) -> bool:
    """Whether the merge holds a keyword, key or item twice where no side did (each added it at its own place)."""
    named = [sides["ours" if p.side == "nested" else p.side] for p in picks]
    index = [p.ours if p.side == "nested" else p.index for p in picks]
    keys = [listing.keywords[i] for listing, i in zip(named, index, strict=True) if listing.keywords[i]]
    items = Counter(listing.cores[i] for listing, i in zip(named, index, strict=True) if not listing.keywords[i])
    most = max((n for side in sides.values() for n in Counter(side.cores).values()), default=1)
    return len(set(keys)) != len(keys) or any(n > most for n in items.values())


def _inner(listing: _Listing) -> str | None:
    return listing.seps[0] if len(listing.cores) > 1 else None


def _assemble(picks: list[Pick], sides: dict[str, _Listing], merged: dict[int, str]) -> str | None:
    o = sides["ours"]
    tail_sep = _three(sides["base"].seps[-1], o.seps[-1], sides["theirs"].seps[-1])
    fallback = next((s for s in (_inner(o), _inner(sides["theirs"]), _inner(sides["base"])) if s), None)
    out: list[str] = []
    for n, pick in enumerate(picks):
        last = n == len(picks) - 1
        if pick.side == "nested":
            core, listing, index = merged[pick.index], o, pick.ours
        else:
            listing, index = sides[pick.side], pick.index
            core = listing.cores[index]
        sep = listing.seps[index]
        if not last and index == len(listing.cores) - 1:
            sep = _inner(listing) or fallback or ""  # its side's last, no longer last here
        if last and sep != tail_sep:
            if tail_sep is None or "#" in sep:
                return None
            sep = tail_sep
        elif not last and "," not in sep:
            inner = _inner(listing) or fallback
            if inner is None or "#" in sep:
                return None
            sep = inner
        out.append(core + sep)
    return "".join(out)


def merge_statement(base: str, ours: str, theirs: str) -> tuple[str, Outcome] | None:
    """The statement with both sides' element changes, and what was decided; None when they do not combine."""
    outcome = Outcome()
    merged = _Merge(outcome).text(base, ours, theirs, statement=True)
    return None if merged is None else (merged, outcome)
