"""A conflicted file cut into its conflict hunks and the code around them, for a model to answer one by one.

Positions are line indexes in the file's *ours view*: git's merge with each hunk replaced by ours' lines
(what ours wrote there, plus whatever theirs changed cleanly elsewhere). A hunk's *section* is what the
model is shown around it: its enclosing function or class (Python), or a few lines either side.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass

from plait.reconcile._mergefile import Hunk, Region, Stable, diff3_regions, split_lines
from plait.reconcile.types import FileConflict

__all__ = ["Located", "NotIsolated", "Piece", "Section", "SideMap", "locate"]

_HEADER = re.compile(r"^(?P<indent>[ \t]*)(?:async[ \t]+def|def|class)[ \t]+(?P<name>\w+)")
_IMPORT = re.compile(r"^(?:import|from)[ \t]+[\w.]+")
_CONTEXT, _MAX_SECTION, _MAX_IMPORTS, _MAX_HUNKS = 6, 90, 40, 60


class NotIsolated(Exception):
    """The file's conflict cannot be cut into hunks (the whole file must be resolved)."""


@dataclass(frozen=True)
class Piece:
    """One conflict hunk: its lines on each side, where it sits, and its place in each side's own file."""

    id: str
    hunk: Hunk
    start: int
    """Its first line in the ours view (it spans `len(hunk.ours)` lines there)."""
    spans: dict[str, tuple[int, int]]
    """Side ("base", "ours", "theirs") -> (start, end) lines of the hunk in that side's file."""

    @property
    def end(self) -> int:
        return self.start + len(self.hunk.ours)


@dataclass(frozen=True)
class Section:
    """Lines of the ours view shown together: one or more hunks and the code around them."""

    start: int
    end: int
    pieces: tuple[Piece, ...]
    scope: str
    """Where it is: "def f in class C", or "" at the top level."""


@dataclass(frozen=True)
class Located:
    """A conflicted file cut into hunks: its regions, ours view, sections and import lines."""

    conflict: FileConflict
    regions: tuple[Region, ...]
    view: tuple[str, ...]
    pieces: tuple[Piece, ...]
    sections: tuple[Section, ...]
    imports: tuple[str, ...]
    python: bool
    maps: dict[str, SideMap]

    def stable_offsets(self) -> list[int]:
        """The ours-view line where each region starts."""
        starts, at = [], 0
        for region in self.regions:
            starts.append(at)
            at += len(region.lines) if isinstance(region, Stable) else len(region.ours)
        return starts


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _code(line: str) -> bool:
    text = line.strip()
    return bool(text) and not text.startswith("#")


def _scope(view: Sequence[str], start: int, end: int, hunk_indent: int) -> tuple[int, int, str]:
    """The enclosing def/class of lines [start, end) (by indentation): its span and its name chain."""
    names: list[str] = []
    bound, top = hunk_indent, -1
    for i in range(start - 1, -1, -1):
        line = view[i]
        if not _code(line) or _indent(line) >= bound:
            continue
        bound = _indent(line)
        match = _HEADER.match(line)
        if match:
            kind = "class" if line.lstrip().startswith("class") else "def"
            names.append(f"{kind} {match['name']}")
            if top < 0:
                top = i
        if bound == 0:
            break
    if top < 0:
        return start, end, ""
    first, header = top, _indent(view[top])
    while first > 0 and view[first - 1].lstrip().startswith("@") and _indent(view[first - 1]) == header:
        first -= 1
    last = end
    while last < len(view) and (not _code(view[last]) or _indent(view[last]) > header):
        last += 1
    while last > end and not view[last - 1].strip():
        last -= 1
    return first, last, " in ".join(names)


def _window(view: Sequence[str], piece: Piece, python: bool) -> tuple[int, int, str]:
    lines = [*piece.hunk.ours, *piece.hunk.base, *piece.hunk.theirs]
    indent = min((_indent(x) for x in lines if x.strip()), default=0)
    lo, hi, scope = piece.start, piece.end, ""
    if python and indent > 0:
        lo, hi, scope = _scope(view, piece.start, piece.end, indent)
    if hi - lo > _MAX_SECTION or not scope:
        lo = max(lo if scope else 0, piece.start - _CONTEXT)
        hi = min(hi if scope else len(view), piece.end + _CONTEXT)
    return lo, hi, scope


@dataclass(frozen=True)
class SideMap:
    """Ours-view lines onto one side's own file: through that side's view, then a line diff with its file."""

    regions: tuple[Region, ...]
    side: str
    opcodes: tuple[tuple[str, int, int, int, int], ...]
    size: int

    def view_pos(self, pos: int) -> int:
        """An ours-view line index in this side's view (the start of a hunk's lines when `pos` is inside one)."""
        ours = side = 0
        for region in self.regions:
            n_ours = len(region.lines) if isinstance(region, Stable) else len(region.ours)
            n_side = len(region.lines) if isinstance(region, Stable) else len(getattr(region, self.side))
            if pos < ours + n_ours or (pos == ours + n_ours and not isinstance(region, Stable)):
                return side + (pos - ours if isinstance(region, Stable) else (n_side if pos > ours else 0))
            ours, side = ours + n_ours, side + n_side
        return side

    def file_pos(self, pos: int, first: bool) -> int:
        """A line index of this side's view in its file (for a changed run: its start, or its end)."""
        for tag, i1, i2, j1, j2 in self.opcodes:
            if i1 <= pos < i2 or (pos == i2 and not first):
                return j1 + (pos - i1) if tag == "equal" else (j1 if first else j2)
        return self.size

    def span(self, start: int, end: int) -> tuple[int, int]:
        """Ours-view lines [start, end) as lines of this side's file."""
        a = self.file_pos(self.view_pos(start), True)
        return a, max(a, self.file_pos(self.view_pos(end), False) if end > start else a)


def _side_maps(regions: tuple[Region, ...], conflict: FileConflict) -> dict[str, SideMap]:
    """A map per side, checked: each hunk's lines must be found where the map puts them, else NotIsolated."""
    maps: dict[str, SideMap] = {}
    for side in ("base", "ours", "theirs"):
        lines = split_lines(getattr(conflict, side) or "")
        view: list[str] = []
        spans = []
        for region in regions:
            chosen = region.lines if isinstance(region, Stable) else getattr(region, side)
            if isinstance(region, Hunk):
                spans.append((len(view), len(view) + len(chosen), chosen))
            view.extend(chosen)
        if len(view) * len(lines) > 4e8:
            raise NotIsolated("the file is too large to map its hunks")
        opcodes = difflib.SequenceMatcher(None, view, lines, autojunk=False).get_opcodes()
        maps[side] = SideMap(regions, side, tuple(opcodes), len(lines))
        for s, _, chosen in spans:
            a = maps[side].file_pos(s, True)
            if list(lines[a : a + len(chosen)]) != list(chosen):
                raise NotIsolated(f"a hunk's {side} lines could not be found in the {side} file")
    return maps


def _imports(view: Sequence[str], pieces: Sequence[Piece], sections: Sequence[Section]) -> tuple[str, ...]:
    """The top-level import lines (with their continuations) outside the hunks and the sections."""
    shown = {i for s in sections for i in range(s.start, s.end)} | {i for p in pieces for i in range(p.start, p.end)}
    out: list[str] = []
    open_paren = False
    for i, line in enumerate(view):
        starts = bool(_IMPORT.match(line))
        if (starts or open_paren) and i not in shown:
            out.append(line)
        if starts or open_paren:
            open_paren = ((open_paren or "(" in line) and ")" not in line) or line.rstrip().endswith("\\")
    return tuple(out[:_MAX_IMPORTS])


def _two_way(ours: str, theirs: str) -> list[Region]:
    """Both sides added the file: the lines they share are stable, each run where they differ is a hunk
    (runs apart by fewer than three shared lines, or only blank ones, are one hunk)."""
    a, b = split_lines(ours), split_lines(theirs)
    regions: list[Region] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            regions.append(Stable(tuple(a[i1:i2])))
            continue
        hunk = Hunk(tuple(a[i1:i2]), (), tuple(b[j1:j2]))
        if len(regions) >= 2 and isinstance(regions[-2], Hunk) and isinstance(regions[-1], Stable):
            gap = regions[-1].lines
            if len(gap) < 3 or not any(x.strip() for x in gap):
                prev = regions[-2]
                hunk = Hunk((*prev.ours, *gap, *hunk.ours), (), (*prev.theirs, *gap, *hunk.theirs))
                del regions[-2:]
        regions.append(hunk)
    return regions


def locate(conflict: FileConflict, first_id: int = 1) -> Located:
    """Cut a two-sided conflict into hunks and sections; NotIsolated when that cannot be done safely."""
    if conflict.ours is None or conflict.theirs is None:
        raise NotIsolated("one side deleted the file")
    regions = tuple(
        diff3_regions(conflict.base, conflict.ours, conflict.theirs)
        if conflict.base
        else _two_way(conflict.ours, conflict.theirs)
    )
    hunks = [r for r in regions if isinstance(r, Hunk)]
    if not hunks:
        raise NotIsolated("git's line merge of the three texts has no conflict hunk")
    if len(hunks) > _MAX_HUNKS:
        raise NotIsolated(f"{len(hunks)} conflict hunks")
    maps = _side_maps(regions, conflict)
    view: list[str] = []
    pieces: list[Piece] = []
    for region in regions:
        if isinstance(region, Stable):
            view.extend(region.lines)
            continue
        at = len(view)
        side = {s: maps[s].span(at, at + len(region.ours)) for s in ("base", "ours", "theirs")}
        for s in ("base", "theirs"):  # a hunk empty on ours' side has no extent in the ours view
            a = maps[s].file_pos(maps[s].view_pos(at), True)
            side[s] = (a, a + len(getattr(region, s)))
        pieces.append(Piece(f"H{len(pieces) + first_id}", region, at, side))
        view.extend(region.ours)
    python = conflict.path.endswith((".py", ".pyi"))
    sections: list[Section] = []
    for piece in pieces:
        lo, hi, scope = _window(view, piece, python)
        if sections and lo <= sections[-1].end:
            last = sections[-1]
            lo, hi = min(lo, last.start), max(hi, last.end)
            sections[-1] = Section(lo, hi, (*last.pieces, piece), last.scope if last.scope == scope else "")
        else:
            sections.append(Section(lo, hi, (piece,), scope))
    imports = _imports(view, pieces, sections) if python else ()
    return Located(conflict, regions, tuple(view), tuple(pieces), tuple(sections), imports, python, maps)
