"""Write-set patterns: which repository paths a task's paths and globs cover.

A pattern is relative to the repository root. `*` and `?` stay within a directory, `**` crosses
directories, `[abc]` is a character class. A glob without `/` matches file names at any depth
(`*.py`), as the list_files tool does. A literal path covers that file, or everything under it
when it names a directory (`src/app` or `src/app/`). A leading `!` excludes what it matches.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import PurePosixPath, PureWindowsPath

__all__ = ["escapes", "expand", "is_glob", "matches", "new_paths", "normalize"]

_GLOB_CHARS = frozenset("*?[")


def normalize(pattern: str) -> str:
    """The pattern without a leading `./` or surrounding spaces."""
    pattern = pattern.strip()
    while pattern.startswith("./"):
        pattern = pattern[2:]
    return pattern


def escapes(pattern: str) -> bool:
    """Whether a glob could reach outside the directory it is matched in: absolute, or climbing with `..`."""
    return any(p.is_absolute() or ".." in p.parts for p in (PurePosixPath(pattern), PureWindowsPath(pattern)))


def is_glob(pattern: str) -> bool:
    """Whether the pattern has glob characters, as opposed to being a literal path."""
    return any(c in _GLOB_CHARS for c in pattern)


def _translate(glob: str) -> str:
    out, i, n = "", 0, len(glob)
    while i < n:
        if glob.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif glob.startswith("**", i):
            out, i = out + ".*", i + 2
        elif glob[i] == "*":
            out, i = out + "[^/]*", i + 1
        elif glob[i] == "?":
            out, i = out + "[^/]", i + 1
        elif glob[i] == "[" and (end := glob.find("]", i + 2)) != -1:
            body = glob[i + 1 : end]
            body = "^" + body[1:] if body.startswith("!") else body
            out, i = out + "[" + body.replace("\\", "\\\\") + "]", end + 1
        else:
            out, i = out + re.escape(glob[i]), i + 1
    return out


@functools.lru_cache(maxsize=4096)
def _compile(pattern: str) -> re.Pattern[str]:
    pattern = normalize(pattern)
    if pattern.endswith("/"):
        pattern += "**"
    if not is_glob(pattern):
        return re.compile(re.escape(pattern.rstrip("/")) + "(?:/.*)?")
    body = _translate(pattern)
    return re.compile(("(?:.*/)?" + body) if "/" not in pattern else body)


def _split(patterns: Iterable[str]) -> tuple[list[str], list[str]]:
    included, excluded = [], []
    for pattern in patterns:
        pattern = normalize(pattern)
        if pattern.startswith("!"):
            excluded.append(pattern[1:])
        elif pattern:
            included.append(pattern)
    return included, excluded


def _union(patterns: list[str]) -> re.Pattern[str] | None:
    return re.compile("|".join(f"(?:{_compile(p).pattern})" for p in patterns)) if patterns else None


def _matcher(patterns: Iterable[str]) -> Callable[[str], bool]:
    included, excluded = _split(patterns)
    yes, no = _union(included), _union(excluded)

    def covered(path: str) -> bool:
        return yes is not None and yes.fullmatch(path) is not None and (no is None or no.fullmatch(path) is None)

    return covered


def matches(patterns: Iterable[str], path: str) -> bool:
    """Whether `path` is covered by `patterns`: matched by one, and excluded by none."""
    return _matcher(patterns)(normalize(path))


def _prefix(pattern: str) -> str:
    """The directory part of `pattern` before its first glob character: every match starts with it."""
    if not is_glob(pattern):
        return pattern.rstrip("/")
    head = pattern[: min(pattern.index(c) for c in _GLOB_CHARS if c in pattern)]
    return head[: head.rfind("/") + 1]


def _under(ordered: Sequence[str], prefix: str) -> Sequence[str]:
    start = bisect.bisect_left(ordered, prefix)
    return ordered[start : bisect.bisect_left(ordered, prefix + "\U0010ffff", lo=start)]


def expand(patterns: Iterable[str], files: Sequence[str]) -> set[str]:
    """The existing `files` that `patterns` cover."""
    included, excluded = _split(patterns)
    ordered = sorted(files)
    found: set[str] = set()
    for pattern in included:
        regex = _compile(pattern)
        candidates = _under(ordered, _prefix(pattern)) if "/" in pattern or not is_glob(pattern) else ordered
        found.update(f for f in candidates if regex.fullmatch(f))
    no = _union(excluded)
    return {f for f in found if no is None or no.fullmatch(f) is None}


def new_paths(patterns: Iterable[str], files: Sequence[str]) -> set[str]:
    """Literal paths among `patterns` that are not existing files nor directories of them: files to be created."""
    included, excluded = _split(patterns)
    existing = set(files)
    found = set()
    for pattern in included:
        path = pattern.rstrip("/")
        if is_glob(path) or path in existing or any(_compile(p).fullmatch(path) for p in excluded):
            continue
        if not any(f.startswith(path + "/") for f in existing):
            found.add(path)
    return found
