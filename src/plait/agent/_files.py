"""The file tools: read_file, write_file and edit_file, on paths already confined to the worktree."""

from __future__ import annotations

import difflib
from pathlib import Path

__all__ = ["ToolFailure", "edit_file", "numbered", "read_file", "write_file"]

_SNIFF = 8192
_SEAM = 2
"""Lines of an edit's new text shown at each end, where it meets the code around it."""
_MAX_LINE = 2000
_MAX_WINDOWS = 20000


class ToolFailure(Exception):
    """A tool could not do what was asked; the message is shown to the model as an error observation."""


def numbered(number: int, line: str) -> str:
    return f"{number:>4}| {line}"


def _text_file(path: Path, shown: str) -> Path:
    if not path.exists():
        raise ToolFailure(f"file not found: {shown}. Use list_files or search to find the right path.")
    if path.is_dir():
        raise ToolFailure(f"{shown} is a directory, not a file: use list_files with path={shown!r} to see inside it.")
    with path.open("rb") as fh:
        if b"\0" in fh.read(_SNIFF):
            size = path.stat().st_size
            raise ToolFailure(f"{shown} is a binary file ({size} bytes); it cannot be shown or edited as text.")
    return path


def read_file(path: Path, shown: str, start: int | None, end: int | None, limit: int) -> str:
    """Numbered lines `start`..`end` of a text file, as many as fit in `limit` characters."""
    _text_file(path, shown)
    first = start or 1
    if end is not None and end < first:
        raise ToolFailure(f"end_line {end} is before start_line {first}: give end_line >= start_line.")
    out: list[str] = []
    size = 0
    last_shown = first - 1
    total = 0
    cut_line = full = False
    with path.open(encoding="utf-8", errors="replace", newline=None) as fh:
        for total, raw in enumerate(fh, start=1):
            if full or total < first or (end is not None and total > end):
                continue
            entry = numbered(total, raw.rstrip("\n"))
            if size + len(entry) + 1 > limit:
                full = True
                if out:
                    continue
                entry, cut_line = entry[: max(limit - 80, 40)], True
            out.append(entry)
            size += len(entry) + 1
            last_shown = total
    if total == 0:
        return f"{shown} is empty."
    if first > total:
        raise ToolFailure(f"start_line {first} is past the end of {shown}, which has {total} lines.")
    wanted_end = min(end or total, total)
    if cut_line:
        out.append(f"[line {last_shown} is longer than the output limit and was cut; search it for what you need]")
    if last_shown < wanted_end:
        out.append(
            f"[showing lines {first}-{last_shown} of {total}; "
            f"call read_file with start_line={last_shown + 1} to read further]"
        )
    return "\n".join(out)


def write_file(path: Path, shown: str, content: str) -> str:
    """Write `content` to `path`, creating parent directories."""
    if path.is_dir():
        raise ToolFailure(f"{shown} is a directory: give the path of a file inside it.")
    existed = path.exists()
    path.parent.mkdir(parents=True, exist_ok=True)
    data = content.encode("utf-8")
    path.write_bytes(data)
    lines = content.count("\n") + (1 if content and not content.endswith("\n") else 0)
    verb = "overwrote" if existed else "created"
    return f"{verb} {shown}: {len(data)} bytes, {lines} lines."


def _closest(text: str, old: str) -> str:
    """The lines of `text` most like `old`, numbered, to show what the model probably meant."""
    lines = text.splitlines()
    wanted = old.strip("\n").splitlines() or [old]
    k = min(len(wanted), len(lines), 60)
    if not lines:
        return "The file is empty."
    target = "\n".join(wanted[:k])
    best, best_at = 0.0, 0
    matcher = difflib.SequenceMatcher(None, autojunk=False)
    matcher.set_seq2(target)
    for i in range(min(len(lines) - k + 1, _MAX_WINDOWS)):
        matcher.set_seq1("\n".join(lines[i : i + k]))
        if matcher.real_quick_ratio() > best and matcher.quick_ratio() > best and (ratio := matcher.ratio()) > best:
            best, best_at = ratio, i
    if best < 0.3:
        return "No similar lines were found: check the path, or read the file again."
    shown = "\n".join(numbered(best_at + 1 + j, line) for j, line in enumerate(lines[best_at : best_at + k]))
    return f"The closest lines in the file ({best:.0%} similar) are:\n{shown}"


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def edit_file(path: Path, shown: str, old: str, new: str, replace_all: bool) -> str:
    """Replace `old` with `new` in the file: exactly once, or everywhere if `replace_all`."""
    if not old:
        raise ToolFailure("old is empty: to create a file or replace all of its content, use write_file.")
    if old == new:
        raise ToolFailure("old and new are the same: there is nothing to change.")
    if not path.exists():
        raise ToolFailure(f"file not found: {shown}. To create a new file, use write_file.")
    _text_file(path, shown)
    with path.open(encoding="utf-8", errors="replace", newline="") as fh:
        text = fh.read()
    if old not in text and "\r\n" in text and "\r\n" not in old:
        old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")
    count = text.count(old)
    if count == 0:
        raise ToolFailure(
            f"old was not found in {shown}; it must match exactly, whitespace and indentation included. "
            + _closest(text, old)
        )
    if count > 1 and not replace_all:
        starts: list[int] = []
        at = text.find(old)
        while at != -1 and len(starts) < 20:
            starts.append(_line_of(text, at))
            at = text.find(old, at + len(old))
        where = ", ".join(map(str, starts)) + (", ..." if count > len(starts) else "")
        raise ToolFailure(
            f"old occurs {count} times in {shown} (at lines {where}): include more surrounding lines "
            "to make it unique, or set replace_all to true to replace every occurrence."
        )
    first_line = _line_of(text, text.find(old))
    result = text.replace(old, new) if replace_all else text.replace(old, new, 1)
    with path.open("w", encoding="utf-8", newline="") as fh:
        fh.write(result)
    if replace_all and count > 1:
        return f"edited {shown}: replaced {count} occurrences."
    lines = result.splitlines()
    last_line = first_line + new.count("\n")
    lo, hi = max(first_line - 3, 0), min(last_line + 2, len(lines))
    shown_lines = list(range(lo, hi))
    last_new = last_line - (1 if new.endswith("\n") else 0)  # the new text's own last line
    if last_new - first_line + 1 > 2 * _SEAM + 1:  # the model wrote the middle one call ago: show the seams
        cut = range(first_line - 1 + _SEAM, last_new - _SEAM)
        shown_lines = [i for i in shown_lines if i not in cut]
    rows: list[str] = []
    for before, i in zip([lo - 1, *shown_lines], shown_lines, strict=False):
        if i > before + 1:
            rows.append(f"     ... lines {before + 2}-{i} as you wrote them ...")
        rows.append(numbered(i + 1, lines[i][:_MAX_LINE]))
    snippet = "\n".join(rows)
    return f"edited {shown}: replaced 1 occurrence at line {first_line}. The lines around it now read:\n{snippet}"
