"""The gate's check for undefined names: a name a changed Python file reads that nothing binds, held only when new.

A name the file already read unbound at the base, or on the side the commit lands on (its first parent), is
not the commit's doing. One that a merged branch's own version of the file already reads unbound is that
branch's, reported as such with the command that shows it; any other is the merge's. Names are read with the
builtins of the Python the project declares (Python 2's too, where it still declares Python 2); a file this
interpreter cannot parse is the parse stage's, and is not judged here.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from plait.reconcile._parsecheck import DECLARING, targets_python2
from plait.reconcile._sources import Sources
from plait.reconcile._undefined import Unbound, unbound_names

__all__ = ["NewUnbound", "new_unbound_names", "shows_name"]


@dataclass(frozen=True)
class NewUnbound:
    """An undefined name held against a commit: where, which, and why it is the commit's."""

    path: str
    line: int
    name: str
    message: str


def shows_name(commit: str, path: str, name: str) -> str:
    """The command that shows every line of `path` at `commit` that mentions `name`."""
    return f"git show {shlex.quote(f'{commit}:{path}')} | grep -nw {shlex.quote(name)}"


def _submodules(path: str, paths: Sequence[str]) -> frozenset[str]:
    """For a package's `__init__.py`, the names of what its directory holds (a submodule `__all__` may list)."""
    if PurePosixPath(path).name != "__init__.py":
        return frozenset()
    folder = path[: -len("__init__.py")]
    return frozenset(p[len(folder) :].split("/")[0].split(".")[0] for p in paths if p.startswith(folder) and p != path)


class _Scan:
    """Undefined names of files at any commit, with the project's Python and submodules fixed; each blob read once."""

    def __init__(self, sources: Sources, paths: Sequence[str], python2: bool) -> None:
        self.sources, self.paths, self.python2 = sources, paths, python2

    def blob(self, oid: str | None, path: str) -> list[Unbound]:
        """The names the blob, as the file at `path`, reads unbound."""
        if oid is None:
            return []
        submodules = _submodules(path, self.paths)
        return self.sources.made(oid, ("unbound", self.python2, submodules), lambda: self._names(oid, submodules))

    def _names(self, oid: str, submodules: frozenset[str]) -> list[Unbound]:
        text = self.sources.source(oid)
        return unbound_names(text, python2=self.python2, submodules=submodules, tree=lambda: self.sources.tree(oid))

    def at(self, commit: str, paths: Sequence[str]) -> dict[str, set[tuple[str, bool]]]:
        """For each path, the (name, listed) pairs unbound in its version at `commit`."""
        blobs = self.sources.read(commit, paths)
        return {p: {(u.name, u.listed) for u in self.blob(blobs[p], p)} for p in paths}


def new_unbound_names(
    sources: Sources, base: str, commit: str, changed: Mapping[str, str], paths: Sequence[str]
) -> list[NewUnbound]:
    """The undefined names `commit` brings into the Python files it changed since `base`, as told above.

    `paths` are every file of its tree.
    """
    wanted = [p for p, status in changed.items() if status != "D" and p.endswith(".py")]
    blobs = sources.read(commit, wanted)
    scan = _Scan(sources, paths, python2=False)
    hits = {p: names for p in wanted if (names := scan.blob(blobs[p], p))}
    if hits and targets_python2(sources.texts(commit, DECLARING).get):
        scan = _Scan(sources, paths, python2=True)
        hits = {p: names for p, names in ((p, scan.blob(blobs[p], p)) for p in hits) if names}
    if not hits:
        return []
    old = scan.at(base, list(hits))
    said = sources.repo.git("rev-parse", f"{commit}^@", check=False).split()
    parents = [p for p in said if not p.endswith("^@")]  # a tree (the ladder's trial merges) has none
    landing = scan.at(parents[0], list(hits)) if parents and parents[0] != base else {}
    others = {p: scan.at(p, list(hits)) for p in parents[1:] if p != base}
    found: list[NewUnbound] = []
    for path, names in hits.items():
        for u in names:
            key = (u.name, u.listed)
            if key in old[path] or key in landing.get(path, set()):
                continue
            what = f"__all__ lists '{u.name}', which the module does not define" if u.listed else ""
            what = what or f"undefined name '{u.name}' (bound nowhere: not in the module, its imports or the builtins)"
            owner = next((p for p, at in others.items() if key in at[path]), None)
            if owner is not None:
                shown = shows_name(owner, path, u.name)
                what += f", already in {owner[:10]} on its own, not made by the merge; shown by: {shown}"
            found.append(NewUnbound(path, u.line, u.name, what))
    return found
