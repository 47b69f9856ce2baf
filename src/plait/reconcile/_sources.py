"""Files read from commits without a work tree, each blob read, parsed and scanned once.

The gate's stages read the same files: the parse stage compiles what a commit changed, the semantic check parses
those and the base's versions, scans the modules it must and reads the names they leave unbound. `Sources` keeps
what was read and made of each blob by the blob's id (a blob never changes), and which blob a path of a commit is
when the commit is named by its id (a ref may move), for as long as it lives: one gate.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import TypeVar, cast

from plait.reconcile._gitio import read_objects
from plait.reconcile._pyscan import ModuleFacts, parse, scan_module, walk
from plait.workspace import Repo

__all__ = ["Sources"]

_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_T = TypeVar("_T")


class Sources:
    """Blobs of one repository's commits: texts, syntax trees, node lists, module facts, and anything else made of
    a blob (`made`), each kept by blob id."""

    def __init__(self, repo: Repo) -> None:
        self.repo = repo
        self._at: dict[tuple[str, str], str | None] = {}
        self._texts: dict[str, str] = {}
        self._trees: dict[str, ast.Module | None] = {}
        self._nodes: dict[str, list[ast.AST]] = {}
        self._facts: dict[str, ModuleFacts | None] = {}
        self._made: dict[tuple[str, Hashable], object] = {}
        self.parses = 0
        """Syntax trees made: one per blob parsed."""

    def read(self, commit: str, paths: Iterable[str]) -> dict[str, str | None]:
        """The blob id of each path at `commit` (None where it is no file), reading those not known in one call."""
        return self.read_all([(commit, paths)])[0]

    def read_all(self, wanted: Sequence[tuple[str, Iterable[str]]]) -> list[dict[str, str | None]]:
        """`read` of each (commit, paths), in one call for all."""
        asked = [(commit, list(dict.fromkeys(paths))) for commit, paths in wanted]
        missing = [
            (commit, p)
            for commit, paths in asked
            for p in paths
            if not _ID.fullmatch(commit) or (commit, p) not in self._at
        ]
        found: dict[tuple[str, str], str | None] = {}
        for key, got in zip(missing, read_objects(self.repo, [f"{c}:{p}" for c, p in missing]), strict=True):
            oid = got[0] if got is not None and got[1] == b"blob" else None
            if got is not None and oid is not None:
                self._texts.setdefault(oid, got[2].decode("utf-8", errors="replace"))
            found[key] = oid
            if _ID.fullmatch(key[0]):
                self._at[key] = oid
        return [{p: found[(c, p)] if (c, p) in found else self._at[(c, p)] for p in paths} for c, paths in asked]

    def texts(self, commit: str, paths: Iterable[str]) -> dict[str, str | None]:
        """The text of each path at `commit` (undecodable bytes replaced), None where it is no file."""
        return {p: None if oid is None else self._texts[oid] for p, oid in self.read(commit, paths).items()}

    def text(self, commit: str, path: str) -> str | None:
        """The text of `path` at `commit`, None when it is no file there."""
        return self.texts(commit, [path])[path]

    def source(self, oid: str) -> str:
        """The text of a blob `read` found."""
        return self._texts[oid]

    def blob(self, commit: str, path: str) -> str | None:
        """The blob id of `path` at `commit`, None when it is no file there."""
        return self.read(commit, [path])[path]

    def tree(self, oid: str) -> ast.Module | None:
        """The blob's syntax tree, parsed once; None when it does not parse."""
        if oid not in self._trees:
            self.parses += 1
            self._trees[oid] = parse(self._texts[oid])
        return self._trees[oid]

    def nodes(self, oid: str) -> list[ast.AST]:
        """Every node of the blob's syntax tree (none when it does not parse), listed once."""
        if oid not in self._nodes:
            tree = self.tree(oid)
            self._nodes[oid] = [] if tree is None else walk(tree)
        return self._nodes[oid]

    def facts(self, oid: str) -> ModuleFacts | None:
        """What the blob's module binds (`scan_module`), scanned once; None when it does not parse."""
        if oid not in self._facts:
            tree = self.tree(oid)
            self._facts[oid] = None if tree is None else scan_module(tree, self.nodes(oid))
        return self._facts[oid]

    def made(self, oid: str, key: Hashable, make: Callable[[], _T]) -> _T:
        """What `make` makes of the blob, made once for each `key` (what else it depends on)."""
        if (oid, key) not in self._made:
            self._made[(oid, key)] = make()
        return cast(_T, self._made[(oid, key)])
