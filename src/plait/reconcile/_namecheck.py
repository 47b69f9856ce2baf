"""The gate's check for undefined names: a name a changed Python file reads that nothing binds, held only when new.

A name the file already read unbound at the base, or on the side the commit lands on (its first parent), is
not the commit's doing. One that a merged branch's own version of the file already reads unbound is that
branch's, reported as such with the command that shows it; any other is the merge's. Names are read with the
builtins of the Python the project declares (Python 2's too, where it still declares Python 2); a file this
interpreter cannot parse is the parse stage's, and is not judged here.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from plait.reconcile._parsecheck import targets_python2
from plait.reconcile._trees import read_blobs
from plait.reconcile._undefined import Unbound, unbound_names
from plait.workspace import Repo

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
    """Undefined names of files at any commit, with the project's Python and submodules fixed."""

    def __init__(self, repo: Repo, paths: Sequence[str], python2: bool) -> None:
        self.repo, self.paths, self.python2 = repo, paths, python2

    def text(self, text: str | None, path: str) -> list[Unbound]:
        if text is None:
            return []
        return unbound_names(text, python2=self.python2, submodules=_submodules(path, self.paths))

    def at(self, commit: str, paths: Sequence[str]) -> dict[str, set[tuple[str, bool]]]:
        """For each path, the (name, listed) pairs unbound in its version at `commit`."""
        texts = read_blobs(self.repo, commit, paths)
        return {p: {(u.name, u.listed) for u in self.text(texts[p], p)} for p in paths}


def new_unbound_names(
    repo: Repo,
    base: str,
    commit: str,
    changed: Mapping[str, str],
    read: Callable[[str], str | None],
    paths: Sequence[str],
) -> list[NewUnbound]:
    """The undefined names `commit` brings into the Python files it changed since `base`, as told above.

    `read` gives a path's text at `commit`; `paths` are every file of its tree.
    """
    wanted = [p for p, status in changed.items() if status != "D" and p.endswith(".py")]
    scan = _Scan(repo, paths, python2=False)
    hits = {p: names for p in wanted if (names := scan.text(read(p), p))}
    if hits and targets_python2(lambda name: read_blobs(repo, commit, [name])[name]):
        scan = _Scan(repo, paths, python2=True)
        hits = {p: names for p, names in ((p, scan.text(read(p), p)) for p in hits) if names}
    if not hits:
        return []
    old = scan.at(base, list(hits))
    said = repo.git("rev-parse", f"{commit}^@", check=False).split()
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
