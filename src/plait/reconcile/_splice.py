"""A model's answer spliced into git's merge: each conflict hunk replaced by its text, edits applied only where
allowed, and nothing else of the file changed."""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass

from plait.reconcile._locate import Located, Piece
from plait.reconcile._mergefile import Stable, split_lines

__all__ = ["Edit", "Refused", "blocks_from_whole", "splice"]


class Refused(Exception):
    """A reply that cannot be spliced: the message says why, for the model to try again."""


@dataclass(frozen=True)
class Edit:
    """A change outside the hunks: `find`, which must occur once, where plait allows it, becomes `replace`."""

    path: str
    find: str
    replace: str


def _lines_of(text: str, piece: Piece, last: bool) -> list[str]:
    lines = split_lines(text)
    bare = last and piece.hunk.ours and not piece.hunk.ours[-1].endswith("\n")
    if lines and not lines[-1].endswith("\n") and not bare:
        lines[-1] += "\n"
    return lines


def _trivial(lines: Sequence[str]) -> bool:
    return all(len(x.strip()) <= 3 for x in lines)


def _repeats(located: Located, piece: Piece, lines: list[str]) -> str | None:
    """Why a hunk's text re-types the code around it (which stays), or None."""
    view, sides = located.view, (piece.hunk.ours, piece.hunk.base, piece.hunk.theirs)
    for k in range(min(len(lines), 10), 0, -1):
        head, above = lines[:k], list(view[max(0, piece.start - k) : piece.start])
        if head == above and not _trivial(head) and not any(list(s[:k]) == head for s in sides):
            return f"its text starts with the {k} line(s) just above the conflict, which stay where they are"
        tail, below = lines[-k:], list(view[piece.end : piece.end + k])
        if tail == below and not _trivial(tail) and not any(list(s[-k:]) == tail for s in sides):
            return f"its text ends with the {k} line(s) just below the conflict, which stay where they are"
    return None


def splice(located: Located, texts: dict[str, str], edits: Sequence[Edit], zones: Sequence[tuple[int, int]]) -> str:
    """The file with each hunk replaced by `texts[id]` and `edits` applied where `zones` (ours-view lines) allow.

    Raises:
        Refused: A hunk is missing or re-types the code around it, or an edit is ambiguous, outside the
            allowed places, or overlaps a hunk.
    """
    out: list[str] = []
    origin: list[int | None] = []
    at = 0
    last_region = located.regions[-1]
    pieces = iter(located.pieces)
    for region in located.regions:
        if isinstance(region, Stable):
            out.extend(region.lines)
            origin.extend(range(at, at + len(region.lines)))
            at += len(region.lines)
            continue
        piece = next(pieces)
        if piece.id not in texts:
            raise Refused(f"{piece.id} ({located.conflict.path}) has no text: give every hunk of the file")
        lines = _lines_of(texts[piece.id], piece, region is last_region)
        why = _repeats(located, piece, lines)
        if why:
            raise Refused(f"{piece.id}: {why}; give only the lines that replace the conflict block")
        out.extend(lines)
        origin.extend([None] * len(lines))
        at += len(region.ours)
    return _apply(located.conflict.path, out, origin, edits, zones)


def _apply(
    path: str, out: list[str], origin: list[int | None], edits: Sequence[Edit], zones: Sequence[tuple[int, int]]
) -> str:
    text = "".join(out)
    starts = [0]
    for line in out:
        starts.append(starts[-1] + len(line))
    spots: list[tuple[int, int, str]] = []
    for edit in edits:
        where = _edit_spot(path, text, edit, starts, origin, zones)
        if any(a < where + len(edit.find) and where < b for a, b, _ in spots):
            raise Refused(f"two edits of {path} overlap")
        spots.append((where, where + len(edit.find), edit.replace))
    for a, b, new in sorted(spots, reverse=True):
        text = text[:a] + new + text[b:]
    return text


def _edit_spot(
    path: str, text: str, edit: Edit, starts: list[int], origin: list[int | None], zones: Sequence[tuple[int, int]]
) -> int:
    """Where `edit.find` occurs once in the code outside the hunks, in an allowed zone (else Refused)."""
    if not edit.find:
        raise Refused(f"an edit of {path} has an empty `find`")
    found: list[list[int | None]] = []
    spots: list[int] = []
    at = text.find(edit.find)
    while at >= 0:
        first = bisect.bisect_right(starts, at) - 1
        last = bisect.bisect_left(starts, at + len(edit.find)) - 1
        found.append(origin[first : last + 1])
        spots.append(at)
        at = text.find(edit.find, at + 1)
    outside = [k for k, lines in enumerate(found) if all(o is not None for o in lines)]
    if not outside:
        what = "overlaps a conflict block: put that change in the block's text" if found else "does not occur"
        raise Refused(f"the `find` text of an edit of {path} {what}")
    if len(outside) > 1:
        raise Refused(f"the `find` text of an edit of {path} occurs {len(outside)} times outside the blocks")
    lines = found[outside[0]]
    if not all(any(a <= o < b for a, b in zones) for o in lines if o is not None):
        raise Refused(
            f"an edit of {path} changes code outside the conflicts, their surrounding code shown and the places "
            "listed as needing a change: plait does not change other code"
        )
    return spots[outside[0]]


def blocks_from_whole(located: Located, content: str) -> dict[str, str] | None:
    """Each hunk's text cut out of a whole-file answer, or None when it does not keep every line outside them."""
    lines = split_lines(content)
    if lines and not lines[-1].endswith("\n") and located.view and located.view[-1].endswith("\n"):
        lines[-1] += "\n"
    texts: dict[str, str] = {}
    pos, pending = 0, None
    pieces = iter(located.pieces)
    for region in located.regions:
        if not isinstance(region, Stable):
            pending = next(pieces)
            continue
        need, n = list(region.lines), len(region.lines)
        if pending is None:
            if lines[pos : pos + n] != need:
                return None
        else:
            last = region is located.regions[-1]
            starts = [len(lines) - n] if last else range(pos, len(lines) - n + 1)
            at = next((i for i in starts if i >= pos and lines[i : i + n] == need), -1)
            if at < 0:
                return None
            texts[pending.id], pos, pending = "".join(lines[pos:at]), at, None
        pos += n
    if pending is not None:
        texts[pending.id], pos = "".join(lines[pos:]), len(lines)
    return texts if pos == len(lines) else None
