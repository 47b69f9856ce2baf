"""The map of one task's area of a repository, for that task's agent, cut from one scan shared by all tasks.

    Your area      the files the task writes or reads and its interfaces' files: every definition
    New files      the paths it will create
    Neighbours     the modules those import, then the ones that import them: definitions as room allows
    Elsewhere      every other file, counted by directory

Imports are resolved by name: a dotted, slashed or `::` name in an import line (`from tally.money import
x`, `import "./money"`, `use crate::money`) names the files whose module path ends with it; a bare name
that several files share resolves to those under the importer's top directory. The same tree and task
always give the same map.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from plait.globs import expand, is_glob, new_paths, normalize
from plait.plan.repomap import (
    _INDEX_STEMS,
    _SUMMARY_RESERVE,
    _add_paths,
    _cost,
    _File,
    _fill,
    _head,
    _imports,
    _render,
    _scan,
    _size,
    _summary,
    tracked_files,
)

__all__ = ["AREA_MAP_BUDGET", "Area", "RepoIndex"]

AREA_MAP_BUDGET = 4_000
"""Characters, about 1,000 tokens: a third of the map of the whole repository the planner reads."""

_NAME = re.compile(r"[A-Za-z_][\w]*(?:(?:\.|/|::)[A-Za-z_][\w]*)*")
_NOT_MODULES = frozenset("from import as use mod pub export crate self super require type".split())
_MAX_NEAR = 40
"""Neighbours listed at most, nearest first: a module every file imports is not a neighbour of any."""


@dataclass(frozen=True)
class Area:
    """What one task touches: existing files it writes or reads, paths it creates, and their neighbours."""

    own: tuple[str, ...]
    new: tuple[str, ...] = ()
    near: tuple[str, ...] = ()

    @property
    def files(self) -> frozenset[str]:
        return frozenset(self.own) | frozenset(self.near)


def _module(path: str) -> list[str]:
    """A file's module path: `src/tally/money.py` → [src, tally, money]; an index file is its directory."""
    *dirs, name = path.split("/")
    stem = name.rsplit(".", 1)[0] if "." in name[1:] else name
    return dirs if stem in _INDEX_STEMS and dirs else [*dirs, stem]


def _related(here: str, path: str) -> bool:
    """Whether the module at `path` lives in the package of directory `here` or in one above it."""
    where = "/".join(_module(path)[:-1])
    return here == where or here.startswith(where + "/")


class RepoIndex:
    """One scan of a repository: each file's size and definitions, and which files import which."""

    def __init__(self, root: Path, files: list[str] | None = None) -> None:
        self.paths = sorted(files) if files is not None else tracked_files(root)
        self.files = {f.path: f for f in _scan(root, self.paths)}
        self.total = sum(f.size for f in self.files.values())
        by_name: defaultdict[str, list[str]] = defaultdict(list)
        for path, file in self.files.items():
            if file.text is None:
                continue
            parts = _module(path)
            for i in range(len(parts)):
                by_name[".".join(parts[i:])].append(path)
        self.imports: dict[str, set[str]] = {}
        self.importers: defaultdict[str, set[str]] = defaultdict(set)
        for path, file in self.files.items():
            if file.text is not None:
                found = self._resolve(path, _imports(file.text), by_name)
                self.imports[path] = found
                for target in found:
                    self.importers[target].add(path)

    @staticmethod
    def _resolve(path: str, lines: list[str], by_name: dict[str, list[str]]) -> set[str]:
        """The files that the import `lines` of `path` name.

        A name of one part (`money`, in `from . import money`) names only a file of the importer's own
        directory, its package or a package above it, unless it is a whole module path (`tally`): a bare
        name elsewhere is more likely the standard library's or another project's.
        """
        here = path.rpartition("/")[0]
        found: set[str] = set()
        for line in lines:
            for name in _NAME.findall(line):
                if name in _NOT_MODULES:
                    continue
                dotted = name.replace("::", ".").replace("/", ".")
                hits = by_name.get(dotted, [])
                if "." not in dotted:
                    hits = [h for h in hits if ".".join(_module(h)) == dotted or _related(here, h)]
                found.update(h for h in hits if h != path)
        return found

    def whole(self, budget: int = AREA_MAP_BUDGET) -> str | None:
        """The map of the whole repository when it lists every file in `budget` characters (a small repository)."""
        text, complete = _render(len(self.paths), list(self.files.values()), budget)
        return text if complete else None

    def size(self, paths: Iterable[str]) -> int:
        """Bytes of the existing files among `paths`."""
        return sum(self.files[p].size for p in paths if p in self.files)

    def area(self, writes: Iterable[str], reads: Iterable[str] = (), also: Iterable[str] = ()) -> Area:
        """The area of a task that writes `writes` and reads `reads` (paths or globs), and `also` (its contracts')."""
        patterns = [normalize(p) for p in (*writes, *reads, *also) if p.strip()]
        own = expand(patterns, self.paths)
        made = new_paths(patterns, self.paths) | {p for p in patterns if is_glob(p) and not expand([p], self.paths)}
        first = sorted({t for p in own for t in self.imports.get(p, ())} - own)
        then = sorted({t for p in own for t in self.importers.get(p, ())} - own - set(first))
        rank = {p: -self.files[p].refs for p in self.files}
        near = sorted(first, key=lambda p: (rank[p], p)) + sorted(then, key=lambda p: (rank[p], p))
        return Area(tuple(sorted(own)), tuple(sorted(made)), tuple(near[:_MAX_NEAR]))

    def render(self, area: Area, budget: int = AREA_MAP_BUDGET) -> str:
        """The map of `area` in at most about `budget` characters."""
        header = (
            f"{len(self.paths)} files tracked by git, {_size(self.total)} in all. Below: your area (the files your "
            "task writes or reads, and its interfaces' files) with their top-level definitions, then their "
            "neighbours (modules they import or that import them); the rest is counted by directory."
        )
        room = budget - _cost([header]) - min(_SUMMARY_RESERVE, budget // 5)
        own = [self.files[p] for p in area.own]
        near = [self.files[p] for p in area.near]
        shown: dict[_File, list[str]] = {}
        used = _add_paths(own, shown, _cost(["Your area:"]), room // 2)
        used = _fill([f for f in own if f in shown and f.text is not None], shown, used, room * 3 // 4)
        made = [f"New files of your task: {', '.join(area.new)}"] if area.new else []
        used = _add_paths(near, shown, used + _cost([*made, "Its neighbours:"]), room)
        used = _fill([f for f in near if f in shown and f.text is not None], shown, used, room)
        _fill([f for f in own if f in shown and f.text is not None], shown, used, room)
        lines = ["Your area:"] + [line for f in own if f in shown for line in (_head(f), *shown[f])] + made
        neighbours = [line for f in near if f in shown for line in (_head(f), *shown[f])]
        lines += ["Its neighbours:", *neighbours] if neighbours else []
        rest = [f for p, f in sorted(self.files.items()) if f not in shown]
        summary = _summary(rest, budget - _cost([header, *lines]))
        return "\n".join([header, *lines, *summary]) + "\n"
