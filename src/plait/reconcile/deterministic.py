"""The deterministic rung: resolutions that need no judgement, file by file and then hunk by hunk."""

from __future__ import annotations

import ast
import asyncio
import fnmatch
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import PurePosixPath

from plait.reconcile import _hunks
from plait.reconcile._additions import added_both, merge_additions, sorted_merge
from plait.reconcile._mergefile import Hunk, Region, Stable, assemble, diff3_regions
from plait.reconcile.types import FileConflict, MergeContext, Resolution, Rung

__all__ = ["DeterministicResolver", "resolve_deterministic", "same_content"]

_PYTHON = {".py", ".pyi"}
_JAVASCRIPT = {".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx"}
_INDENTED = {".yaml", ".yml", ".mk", ".coffee", ".pug", ".sass", ".haml"}
_LISTLIKE_NAME = re.compile(r"(?i)^(changes|changelog|history|news|authors|contributors|credits|thanks|releases?)\b")
_LISTLIKE_EXT = {".rst", ".md", ".txt", ".adoc", ".gitignore", ".in"}
_LISTING = re.compile(r"(?i)^(authors|contributors|credits|thanks)\b")
LOW = "low confidence"
"""How a reason starts when a rule had to choose (an order): shown in the report, JSON and commit message."""


def _language(path: str) -> str:
    suffix = PurePosixPath(path).suffix.lower()
    return "python" if suffix in _PYTHON else "javascript" if suffix in _JAVASCRIPT else ""


def _indent_matters(path: str) -> bool:
    p = PurePosixPath(path)
    return p.suffix.lower() in _INDENTED or p.name in ("Makefile", "GNUmakefile")


def _list_like(path: str) -> bool:
    p = PurePosixPath(path)
    return bool(_LISTLIKE_NAME.match(p.name)) or p.suffix.lower() in _LISTLIKE_EXT or p.name == ".gitignore"


def _python_shape(text: str) -> str | None:
    try:
        return ast.dump(ast.parse(text))
    except (SyntaxError, ValueError):
        return None


def same_content(a: str, b: str, path: str) -> bool:
    """Whether two versions of a file differ only in formatting (same AST for Python, whitespace elsewhere)."""
    if _language(path) == "python":
        shape = _python_shape(a)
        return shape is not None and shape == _python_shape(b)
    lines_a, lines_b = a.splitlines(), b.splitlines()
    return _hunks.loose_equal(lines_a, lines_b, keep_indent=_indent_matters(path))


class _File:
    """One conflicted file cut into regions, with the rules that settle a hunk."""

    def __init__(self, conflict: FileConflict, regions: list[Region]) -> None:
        self.path = conflict.path
        self.low = False
        """Whether a rule had to choose (an order of additions)."""
        self.language = _language(conflict.path)
        self.regions = regions
        self.hunks = [r for r in regions if isinstance(r, Hunk)]
        self.has_base = conflict.base is not None

    def _reformat_only(self, index: int, side: Sequence[str]) -> bool:
        hunk = self.hunks[index]
        if self.language != "python":
            return _hunks.loose_equal(side, hunk.base, keep_indent=_indent_matters(self.path))
        bases = [h.base for h in self.hunks]
        with_side = [*bases[:index], side, *bases[index + 1 :]]
        shape = _python_shape(assemble(self.regions, bases))
        return shape is not None and shape == _python_shape(assemble(self.regions, with_side))

    def _before(self, index: int) -> list[str]:
        """The stable lines just above hunk `index`."""
        position = self.regions.index(self.hunks[index])
        previous = self.regions[position - 1] if position else None
        return list(previous.lines) if isinstance(previous, Stable) else []

    def _after(self, index: int) -> list[str]:
        """The stable lines just below hunk `index`."""
        position = self.regions.index(self.hunks[index])
        following = self.regions[position + 1] if position + 1 < len(self.regions) else None
        return list(following.lines) if isinstance(following, Stable) else []

    def settle(self, index: int) -> tuple[list[str], str] | None:
        """The lines that replace hunk `index`, and the rule that chose them."""
        h = self.hunks[index]
        o, b, t = list(h.ours), list(h.base), list(h.theirs)
        if o == t:
            return o, "same change on both sides"
        if o == b:
            return t, "only theirs changed it"
        if t == b:
            return o, "only ours changed it"
        o_fmt, t_fmt = self._reformat_only(index, o), self._reformat_only(index, t)
        if o_fmt and t_fmt:
            if _trailing_spaces(t) < _trailing_spaces(o):
                return t, "both only reformatted (kept theirs: no trailing spaces)"
            return o, "both only reformatted (kept ours)"
        if o_fmt:
            return t, "ours only reformatted"
        if t_fmt:
            return o, "theirs only reformatted"
        if _hunks.contains_other(o, t, b):
            return t, "theirs already holds ours' change"
        if _hunks.contains_other(t, o, b):
            return o, "ours already holds theirs' change"
        higher = _hunks.higher_version(o, b, t)
        if higher:
            return (o if higher == "ours" else t), f"version numbers: kept the higher ({higher})"
        if self.language:
            in_paren = self.language == "python" and _hunks.opens_paren_import(self._before(index))
            if all(_hunks.is_import_block(x, self.language, in_paren_import=in_paren) for x in (o, b, t)):
                united = _hunks.import_union(o, b, t, python=self.language == "python")
                return None if united is None else (united, "import union")
        return self._both_added(index, o, b, t)

    def _both_added(self, index: int, o: list[str], b: list[str], t: list[str]) -> tuple[list[str], str] | None:
        """Both sides only added: entries at the end of a list-like file, or items to one collection literal."""
        added = added_both(o, b, t) if self.has_base and _list_like(self.path) else None
        if added is not None:
            above = [*self._before(index), *b] if added.where == "after" else self._before(index)
            below = self._after(index) if added.where == "after" else b
            lines, rule = self._ordered(added.ours, added.theirs, above, below)
            return ([*b, *lines] if added.where == "after" else [*lines, *b]), f"both appended ({rule})"
        if self.language:
            items = _hunks.items_added_both(o, b, t, self._before(index))
            if items is not None:
                lines, rule = self._ordered(o, t, self._before(index), self._after(index))
                return lines, f"both added items to one collection ({rule})"
        return None

    def _ordered(self, ours: list[str], theirs: list[str], above: list[str], below: list[str]) -> tuple[list[str], str]:
        """Both sides' additions in one order, and the rule that chose it."""
        kept = sorted_merge(ours, theirs, above, below)
        if kept is not None:
            return kept, "kept the list sorted"
        self.low = True
        listing = bool(_LISTING.match(PurePosixPath(self.path).name))
        return merge_additions(ours, theirs, listing=listing), "ours first: the order was chosen"


def _trailing_spaces(lines: Sequence[str]) -> int:
    return sum(1 for line in lines if line.rstrip("\r\n") != line.rstrip())


def _made(conflict: FileConflict, text: str | None, reason: str) -> Resolution:
    return Resolution(path=conflict.path, text=text, rung="deterministic", reason=reason)


def _whole_file(conflict: FileConflict) -> Resolution | None:
    """Rules on whole files: the same change, a deletion against a reformat."""
    base, ours, theirs, path = conflict.base, conflict.ours, conflict.theirs, conflict.path
    if ours == theirs:
        return _made(conflict, ours, "both sides made the same change" if ours is not None else "both deleted it")
    if ours is None or theirs is None:
        kept = theirs if ours is None else ours
        if base is not None and kept is not None and same_content(base, kept, path):
            deleter = "ours" if ours is None else "theirs"
            return _made(conflict, None, f"{deleter} deleted it; the other side only reformatted")
    return None


def _reformatted(conflict: FileConflict) -> Resolution | None:
    """When a whole side is only a reformat of the base, the other side's content wins."""
    base, ours, theirs, path = conflict.base, conflict.ours, conflict.theirs, conflict.path
    if base is None or ours is None or theirs is None:
        return None
    ours_fmt, theirs_fmt = same_content(base, ours, path), same_content(base, theirs, path)
    if ours_fmt and theirs_fmt:
        if _trailing_spaces(theirs.splitlines()) < _trailing_spaces(ours.splitlines()):
            return _made(conflict, theirs, "both sides only reformatted it (kept theirs: no trailing spaces)")
        return _made(conflict, ours, "both sides only reformatted it (kept ours)")
    if ours_fmt:
        return _made(conflict, theirs, "ours only reformatted it; took theirs")
    if theirs_fmt:
        return _made(conflict, ours, "theirs only reformatted it; kept ours")
    return None


def _final_newline(text: str, conflict: FileConflict) -> str:
    sides = [s for s in (conflict.ours, conflict.theirs) if s]
    if text.endswith("\n") and sides and not any(s.endswith("\n") for s in sides):
        return text[:-1]
    return text


def resolve_deterministic(conflict: FileConflict) -> Resolution | None:
    """A resolution of `conflict` by the deterministic rules, or None when one hunk needs judgement.

    A rule that had to choose an order (two additions at one spot, outside a sorted list) gives a resolution
    of low confidence.
    """
    found = _whole_file(conflict)
    if found is not None or conflict.ours is None or conflict.theirs is None:
        return found
    if "\0" in conflict.ours or "\0" in conflict.theirs:
        return None
    return _by_hunks(conflict, conflict.ours, conflict.theirs) or _reformatted(conflict)


def _by_hunks(conflict: FileConflict, ours: str, theirs: str) -> Resolution | None:
    try:
        regions = diff3_regions(conflict.base or "", ours, theirs)
    except ValueError:
        return None
    file = _File(conflict, regions)
    chosen: list[list[str]] = []
    rules: Counter[str] = Counter()
    for index in range(len(file.hunks)):
        settled = file.settle(index)
        if settled is None:
            return None
        chosen.append(settled[0])
        rules[settled[1]] += 1
    text = _final_newline(assemble(regions, chosen), conflict)
    if file.language == "python" and _python_shape(text) is None:
        return None
    if _repeats_a_heading(conflict.path, text, ours, theirs):
        return None  # both sides brought one release or section, each at its own place: not two additions
    summary = "; ".join(f"{rule} ×{n}" if n > 1 else rule for rule, n in rules.items())
    hunks = len(file.hunks)
    reason = f"{hunks} hunk{'s' if hunks != 1 else ''}: {summary}" if hunks else "git merge-file merged it cleanly"
    if file.low:
        return Resolution(conflict.path, text, "deterministic", f"{LOW} (an order was chosen): {reason}", "low")
    return Resolution(path=conflict.path, text=text, rung="deterministic", reason=reason)


def _repeats_a_heading(path: str, text: str, ours: str, theirs: str) -> bool:
    """Whether a document or changelog merged line by line holds a heading twice that neither side did."""
    from plait.reconcile.structured._docmerge import headings_repeated  # the structured rung builds on this one
    from plait.reconcile.structured.changelog import ChangelogMerger

    name = PurePosixPath(path).name.lower()
    changelog = any(fnmatch.fnmatchcase(name, pattern.lower()) for pattern in ChangelogMerger.file_names)
    if not changelog and PurePosixPath(name).suffix not in (".rst", ".md"):
        return False
    return headings_repeated(text) > max(headings_repeated(ours), headings_repeated(theirs))


class DeterministicResolver:
    """Same change on both sides, reformat-only sides, version bumps, import unions, lists appended on both sides."""

    rung: Rung = "deterministic"

    def __init__(self, *, defer_low: bool = False) -> None:
        """`defer_low`: a resolution of low confidence is offered to a later `llm` rung first (kept if it fails)."""
        self.defer_low = defer_low

    async def resolve(self, conflict: FileConflict, context: MergeContext) -> Resolution | None:
        """Settle every hunk by rule, or return None."""
        return await asyncio.to_thread(resolve_deterministic, conflict)
