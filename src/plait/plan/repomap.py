"""A compact map of a repository for a planner's or a lead's prompt: tracked files, sizes, top-level definitions.

Files are ranked by kind first: the project's own source, then its other files (README, configuration),
then tests, examples and docs, and last binary, lock and generated files; within a kind, by how
central a file is (how many other source files name the module in an import line, a cheap regex
stand-in for resolving imports), then by size. The project's own paths are listed by rank in up to
half the budget; then the definitions of its source, a line at a time in rounds (every file gets its
first lines before any gets many), in all but an eighth; then the other paths; then more definitions,
the project's before the others'; binary and lock files last. The files left over are counted by
directory. The same tree always gives the same map, so it is a stable, cacheable prefix.
"""

from __future__ import annotations

import os
import re
import stat
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from plait.plan._symbols import SOURCE_SUFFIXES, symbols
from plait.workspace import Repo

__all__ = ["DEFAULT_MAP_BUDGET", "repo_map", "tracked_files"]

DEFAULT_MAP_BUDGET = 12_000
"""Characters, about 3,000 tokens."""

_MAX_READ = 256_000
"""Bytes; a larger source file is listed without its definitions."""
_MAX_READ_FILES = 5_000
"""Source files read per map, shallowest first; in a larger repository the rest count as unreferenced."""
_SUMMARY_RESERVE = 1_500
_MIN_SUMMARY_LINES = 8
_INDEX_STEMS = frozenset({"__init__", "__main__", "index", "mod", "lib", "main"})
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_IMPORT_STARTS = ("from ", "import ", "use ", "mod ", "pub use ", "pub mod ", "export ")
"""Lines that name other modules: Python, JS/TS and Rust imports (and Go import blocks' quoted paths)."""
_REQUIRE = re.compile(r"require\(([^)\n]*)\)")
_MAX_SYMBOL_LINES = 20
_AUX_DIRS = frozenset(
    "test tests testing __tests__ testdata fixtures spec specs example examples sample samples demo demos "
    "doc docs documentation bench benchmark benchmarks vendor third_party node_modules".split()
)
"""Directories of tests, examples, docs and vendored code: not the project's own source."""
_TEST_NAME = re.compile(r"^(?:test_.*|.*_test\.\w+|.*\.(?:test|spec)\.\w+|conftest\.py)$")
_BINARY_SUFFIXES = frozenset(
    "png jpg jpeg gif bmp ico icns webp svg tif tiff psd pdf zip gz tgz bz2 xz 7z tar whl egg jar war class "
    "woff woff2 ttf otf eot mp3 mp4 wav ogg webm mov avi so dylib dll exe o a lib bin pyc pyd db sqlite sqlite3 "
    "lock lockb map".split()
)
"""Suffixes of binary, lock and generated files: their contents tell a reader nothing in a map."""
_NOISE_NAMES = frozenset({"package-lock.json", "npm-shrinkwrap.json", "pnpm-lock.yaml", "go.sum"})
_MAIN, _OTHER, _AUX, _NOISE = range(4)
"""Kinds of file, in the order they are ranked."""


def _kind(path: str) -> int:
    """The project's own source, its other files, its tests, examples and docs, or noise (binary, lock files)."""
    *dirs, name = path.split("/")
    suffix = name.rsplit(".", 1)[-1].lower() if "." in name[1:] else ""
    if suffix in _BINARY_SUFFIXES or name in _NOISE_NAMES or name.endswith((".min.js", ".min.css")):
        return _NOISE
    if any(d.lower() in _AUX_DIRS or d.startswith(".") for d in dirs) or name.startswith(".") or _TEST_NAME.match(name):
        return _AUX
    return _MAIN if "." + suffix in SOURCE_SUFFIXES else _OTHER


@dataclass(frozen=True)
class _File:
    path: str
    size: int
    refs: int = 0
    text: str | None = field(default=None, compare=False, repr=False)
    kind: int = _OTHER


def _sizes(root: Path, paths: list[str]) -> dict[str, int]:
    """The size of each path that is a regular file (not a symlink, a directory or a missing file)."""
    sizes = {}
    for path in paths:
        try:
            info = os.lstat(root / path)
        except OSError:
            continue
        if stat.S_ISREG(info.st_mode):
            sizes[path] = info.st_size
    return sizes


def tracked_files(root: Path) -> list[str]:
    """Paths git tracks under `root` (a repository's or a worktree's top), sorted, regular files only."""
    out = Repo.discover(root).git("ls-files", "-z", "--cached", cwd=root)
    return sorted(_sizes(root, sorted({p for p in out.split("\0") if p})))


def _size(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f} KB"
    return f"{n / 1024 / 1024:.1f} MB"


def _files(n: int) -> str:
    return f"{n} file" if n == 1 else f"{n} files"


def _key(path: str) -> str:
    """The name other files use for this one: its stem, or its directory's name for an index file."""
    *dirs, name = path.split("/")
    stem = name.rsplit(".", 1)[0] if "." in name[1:] else name
    return dirs[-1] if stem in _INDEX_STEMS and dirs else stem


def _read(root: Path, path: str, size: int) -> str | None:
    suffix = "." + path.rsplit(".", 1)[-1] if "." in path.rsplit("/", 1)[-1] else ""
    if suffix not in SOURCE_SUFFIXES or size > _MAX_READ:
        return None
    try:
        return (root / path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _imports(text: str) -> list[str]:
    """The lines of `text` that import something, and the arguments of its require() calls."""
    found = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith(_IMPORT_STARTS) or (line[:1] == line[-1:] == '"' and " " not in line):
            found.append(line)
    return found + _REQUIRE.findall(text) if "require(" in text else found


def _scan(root: Path, paths: list[str]) -> list[_File]:
    sizes = _sizes(root, paths)
    texts: dict[str, str] = {}
    for path in sorted(sizes, key=lambda p: (p.count("/"), p)):
        if len(texts) >= _MAX_READ_FILES:
            break
        text = _read(root, path, sizes[path])
        if text is not None:
            texts[path] = text
    words = {path: set(_WORD.findall("\n".join(_imports(text)))) for path, text in texts.items()}
    mentions: Counter[str] = Counter(w for found in words.values() for w in found)
    files = []
    for path in sorted(sizes):
        key = _key(path)
        refs = mentions[key] - (key in words[path]) if path in words else 0
        files.append(_File(path, sizes[path], refs, texts.get(path), _kind(path)))
    return files


def _head(file: _File) -> str:
    return f"{file.path} ({_size(file.size)})"


def _cost(lines: list[str]) -> int:
    return sum(len(line) + 1 for line in lines)


def _add_paths(ranked: list[_File], chosen: dict[_File, list[str]], used: int, limit: int) -> int:
    """List more files by path alone, by rank, until `limit` characters are used; return the new total."""
    for file in ranked:
        if file in chosen:
            continue
        cost = _cost([_head(file)])
        if used + cost > limit:
            break
        chosen[file], used = [], used + cost
    return used


def _more(n: int) -> str:
    return f"  ... and {n} more definition{'' if n == 1 else 's'}"


def _shown(lines: list[str], k: int) -> list[str]:
    """The first `k` of a file's definition lines, and a line counting the others."""
    return lines if k >= len(lines) else [*lines[:k], _more(len(lines) - k)] if k else []


def _fill(files: list[_File], chosen: dict[_File, list[str]], used: int, limit: int) -> int:
    """Show more definitions of `files` (ranked), a line per file per round, until `limit`; return the new total.

    Rounds give breadth: every file gets its first definitions before a large one takes the room.
    """
    full = {f: [f"  {s}" for s in symbols(f.path, f.text or "")] for f in files}
    shown = {f: sum(not line.startswith("  ... and ") for line in chosen.get(f, [])) for f in files}
    for depth in range(_MAX_SYMBOL_LINES):
        for file in files:
            lines = full[file]
            if shown[file] != depth or depth >= len(lines):
                continue
            if depth + 1 == _MAX_SYMBOL_LINES and len(lines) > _MAX_SYMBOL_LINES:
                continue  # the last line of a long file is its count of the others
            more = _cost(_shown(lines, depth + 1)) - _cost(_shown(lines, depth))
            if used + more <= limit:
                shown[file], used = depth + 1, used + more
    for file in files:
        chosen[file] = _shown(full[file], shown[file])
    return used


def _choose(ranked: list[_File], room: int) -> dict[_File, list[str]]:
    """The files to list in `room` characters, each with the definition lines shown under it (maybe none).

    The project's own files first, by rank, in up to half the room; then the definitions of its source
    in all but an eighth; then tests, examples and docs by rank; then more definitions of the project's
    source, and only then of the others; binary and lock files last.
    """
    chosen: dict[_File, list[str]] = {}
    used = _add_paths([f for f in ranked if f.kind in (_MAIN, _OTHER)], chosen, 0, room // 2)
    used = _fill([f for f in chosen if f.kind == _MAIN and f.text is not None], chosen, used, room - room // 8)
    used = _add_paths([f for f in ranked if f.kind != _NOISE], chosen, used, room)
    used = _fill([f for f in chosen if f.kind == _MAIN and f.text is not None], chosen, used, room)
    used = _fill([f for f in chosen if f.kind in (_OTHER, _AUX) and f.text is not None], chosen, used, room)
    _add_paths(ranked, chosen, used, room)
    return chosen


def _group(path: str, depth: int) -> str:
    parts = path.split("/")[:-1]
    return "/".join(parts[:depth]) + "/" if parts else "./"


def _grouped(rest: list[_File], depth: int) -> list[tuple[str, int, int]]:
    """(directory, files, bytes) of the files in `rest`, by directory cut at `depth`, sorted by directory."""
    counts: Counter[str] = Counter()
    sizes: Counter[str] = Counter()
    for f in rest:
        group = _group(f.path, depth)
        counts[group] += 1
        sizes[group] += f.size
    return [(group, counts[group], sizes[group]) for group in sorted(counts)]


def _line(group: tuple[str, int, int]) -> str:
    return f"  {group[0]} {_files(group[1])} ({_size(group[2])})"


def _largest(groups: list[tuple[str, int, int]], head: str, room: int) -> list[str]:
    """The directories with the most files that fit in `room`, and a line counting the others."""
    kept = [head]
    ranked = sorted(groups, key=lambda g: (-g[1], g[0]))
    for group in ranked:
        if _cost([*kept, _line(group)]) > room - 60:
            break
        kept.append(_line(group))
    others = ranked[len(kept) - 1 :]
    if others:
        kept.append(f"  ... and {_files(sum(g[1] for g in others))} in {len(others)} more directories")
    return kept


def _summary(rest: list[_File], room: int) -> list[str]:
    """The files not listed, counted by directory, at the deepest level that fits in `room`.

    When only a shallow level fits and says little (a handful of lines), the next level is shown
    instead, its largest directories first.
    """
    if not rest:
        return []
    head = f"Not listed above: {_files(len(rest))}, by directory:"
    deepest = max(max(f.path.count("/") for f in rest), 1)
    for depth in range(deepest, 0, -1):
        groups = _grouped(rest, depth)
        lines = [head, *map(_line, groups)]
        if _cost(lines) <= room:
            if depth == deepest or len(groups) >= _MIN_SUMMARY_LINES:
                return lines
            return _largest(_grouped(rest, depth + 1), head, room)
    return _largest(_grouped(rest, 1), head, room)


def repo_map(root: Path, *, budget: int = DEFAULT_MAP_BUDGET, files: list[str] | None = None) -> str:
    """The map of the repository at `root` in at most about `budget` characters.

    Args:
        root: The top of a repository or worktree.
        budget: The character budget of the whole map.
        files: The paths to map (default: `tracked_files(root)`).
    """
    paths = sorted(files) if files is not None else tracked_files(root)
    return _render(len(paths), _scan(root, paths), budget)[0]


def _render(count: int, scanned: list[_File], budget: int) -> tuple[str, bool]:
    """The map of `scanned` (of `count` tracked files) in about `budget` characters, and whether it lists them all."""
    total = sum(f.size for f in scanned)
    header = (
        f"{count} files tracked by git, {_size(total)} in all. Each listed file shows its size; the "
        "project's own source comes first, and the most central source files show their top-level definitions "
        "(functions with signatures; classes with their fields and methods)."
    )
    room = budget - _cost([header]) - min(_SUMMARY_RESERVE, budget // 5)
    # imports name a test helper or an example's module as often as the project's: only the project's own count
    ranked = sorted(scanned, key=lambda f: (f.kind, -f.refs if f.kind == _MAIN else 0, -f.size, f.path))
    chosen = _choose(ranked, room)
    body = [line for file in sorted(chosen, key=lambda f: (f.kind, f.path)) for line in (_head(file), *chosen[file])]
    rest = sorted((f for f in scanned if f not in chosen), key=lambda f: f.path)
    summary = _summary(rest, budget - _cost([header, *body]))
    return "\n".join([header, *body, *summary]) + "\n", not rest
