"""Three-way merge of one file's texts with `git merge-file`, and its diff3 output cut into regions."""

from __future__ import annotations

import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from plait.reconcile._gitio import decode, encode, git_bytes

__all__ = ["Hunk", "Region", "Stable", "assemble", "diff3_regions", "has_conflict_markers", "merge_file", "split_lines"]

Style = Literal["diff3", "merge", "ours", "theirs", "union"]
_LINE = re.compile(r"[^\n]*\n|[^\n]+\Z")
_MARKERS = re.compile(r"^(<{7}|>{7})( |$)|^={7}$", re.MULTILINE)
_WIDE = 51


@dataclass(frozen=True)
class Stable:
    """Lines both sides agree on after git's merge."""

    lines: tuple[str, ...]


@dataclass(frozen=True)
class Hunk:
    """One conflict: the lines of each side and of the base at that place."""

    ours: tuple[str, ...]
    base: tuple[str, ...]
    theirs: tuple[str, ...]


Region = Stable | Hunk


def split_lines(text: str) -> list[str]:
    """Lines with their endings, split on newline only (as Python's parser counts lines)."""
    return _LINE.findall(text)


def has_conflict_markers(text: str) -> bool:
    """Whether `text` holds a line that looks like a conflict marker."""
    return bool(_MARKERS.search(text))


def _terminated(text: str) -> str:
    return text if not text or text.endswith("\n") else text + "\n"


def merge_file(
    base: str, ours: str, theirs: str, *, style: Style = "diff3", marker_size: int = 7, labels: Sequence[str] = ()
) -> tuple[str, bool]:
    """git's merge of three texts; returns the merged text (with markers unless resolved by `style`) and cleanliness.

    Each text is given a final newline, as git would add one before a conflict marker anyway.
    """
    names = list(labels) or ["ours", "base", "theirs"]
    mode = {"diff3": ["--diff3"], "merge": [], "ours": ["--ours"], "theirs": ["--theirs"], "union": ["--union"]}[style]
    with tempfile.TemporaryDirectory(prefix="plait-merge-") as tmp:
        files = []
        for name, text in (("ours", ours), ("base", base), ("theirs", theirs)):
            path = Path(tmp) / name
            path.write_bytes(encode(_terminated(text)))
            files.append(str(path))
        label_args = [arg for name in names for arg in ("-L", name)]
        status, out = git_bytes(
            None,
            "merge-file",
            "-p",
            *mode,
            f"--marker-size={marker_size}",
            *label_args,
            *files,
            cwd=Path(tmp),
            ok=range(0, 128),
        )
    return decode(out), status == 0


def diff3_regions(base: str, ours: str, theirs: str) -> list[Region]:
    """The merge of three texts as stable runs and conflict hunks (marker lines wide enough never to clash)."""
    text, _ = merge_file(base, ours, theirs, marker_size=_WIDE, labels=("o", "b", "t"))
    start, mid, sep, end = ("<" * _WIDE + " o\n", "|" * _WIDE + " b\n", "=" * _WIDE + "\n", ">" * _WIDE + " t\n")
    regions: list[Region] = []
    stable: list[str] = []
    parts: dict[str, list[str]] = {}
    state = "stable"
    for line in split_lines(text):
        if state == "stable" and line == start:
            if stable:
                regions.append(Stable(tuple(stable)))
                stable = []
            parts = {"ours": [], "base": [], "theirs": []}
            state = "ours"
        elif state == "ours" and line == mid:
            state = "base"
        elif state == "base" and line == sep:
            state = "theirs"
        elif state == "theirs" and line == end:
            regions.append(Hunk(tuple(parts["ours"]), tuple(parts["base"]), tuple(parts["theirs"])))
            state = "stable"
        elif state == "stable":
            stable.append(line)
        else:
            parts[state].append(line)
    if state != "stable":
        raise ValueError("unterminated conflict hunk in git merge-file output")
    if stable:
        regions.append(Stable(tuple(stable)))
    return regions


def assemble(regions: Sequence[Region], chosen: Sequence[Sequence[str]]) -> str:
    """The text of `regions` with each hunk replaced, in order, by the lines in `chosen`."""
    picks = iter(chosen)
    out: list[str] = []
    for region in regions:
        out.extend(region.lines if isinstance(region, Stable) else next(picks))
    return "".join(out)
