"""The cross-branch check: a name that existed at the base, is gone from the combined tree, and is still used;
and a name a changed file reads that nothing binds, when the commit brought it (`_namecheck`).

Python only, read with `ast`, tuned for few false alarms: a name counts as gone only when its module
can be told apart (one file, no star import, no module `__getattr__`, no `globals()`), and a use
counts only when it is an import, an attribute of the imported module, a bare name in the module
itself, or an `__all__` entry. An import added since the base of a name its module never defined is
reported too (a branch that relied on another branch's new name, which was then left out).
"""

from __future__ import annotations

import ast
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from plait.reconcile._namecheck import new_unbound_names
from plait.reconcile._pyscan import (
    ModuleFacts,
    ModuleIndex,
    Reference,
    _guarded_imports,
    _package,
    _top_level,
    references,
    statements,
)
from plait.reconcile._sources import Sources
from plait.reconcile._trees import changed_paths, grep_files, read_blobs, tree_paths
from plait.workspace import Repo

__all__ = ["Breakage", "attribute", "find_breakage"]

_GLOBAL = re.compile(r"(?:^|[;:])[ \t\f]*global\b", re.MULTILINE)
"""Where a `global` statement may be: a logical line's start, after `;`, or after a one-line block's `:`."""


@dataclass(frozen=True)
class Breakage:
    """One use, in the combined tree, of a name or module that is not there."""

    path: str
    line: int
    module: str
    name: str
    """Empty when the whole module is missing."""
    message: str
    files: tuple[str, ...]
    """The files involved: where it is used, and where it was defined."""

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


class _Tree:
    """One commit's Python modules, read in batches and parsed on demand: a bare parse first, a full scan if needed."""

    def __init__(self, sources: Sources, commit: str, paths: list[str]) -> None:
        self.sources, self.repo, self.commit, self.paths = sources, sources.repo, commit, paths
        self.index = ModuleIndex(paths)

    def read(self, paths: Iterable[str]) -> None:
        """Read the texts of `paths` not read yet, in one batch."""
        self.sources.read(self.commit, paths)

    def text(self, path: str) -> str | None:
        return self.sources.text(self.commit, path)

    def tree(self, path: str) -> ast.Module | None:
        """The module's syntax tree, or None when it does not parse (exactly when `facts` is None)."""
        oid = self.sources.blob(self.commit, path)
        return None if oid is None else self.sources.tree(oid)

    def facts(self, *paths: str) -> list[ModuleFacts | None]:
        found = self.sources.read(self.commit, paths)
        return [None if (oid := found[p]) is None else self.sources.facts(oid) for p in paths]

    def top(self, path: str) -> frozenset[str] | None:
        """The names the module binds at its top level (`_top_level`), None when it does not parse."""
        oid = self.sources.blob(self.commit, path)
        tree = None if oid is None else self.sources.tree(oid)
        if oid is None or tree is None:
            return None
        return self.sources.made(oid, "top level", lambda: _top_names(tree))

    def defines(self, module: str, name: str) -> bool:
        """Whether `module` has `name` (or it cannot be known); a submodule counts."""
        path = self.index.file(module)
        if path is None or self.index.exists(f"{module}.{name}"):
            return True
        top = self.top(path)
        if top is None or name in top:
            return True  # its facts' names are its top-level names and those `global` statements declare
        (facts,) = self.facts(path)
        return facts is None or facts.open or name in facts.names


def _top_names(tree: ast.Module) -> frozenset[str]:
    names: set[str] = set()
    _top_level(tree, names)
    return frozenset(names)


def _may_lose(base: _Tree, combined: _Tree, path: str, now: str) -> bool:
    """Whether the module may have lost a name, told cheaply: its top-level names (what `scan_module` adds to them
    is only what `global` statements declare), before the full scan of both sides."""
    old, new = base.top(path), combined.top(now)
    if old is None or new is None:
        return False  # a side that does not parse has no facts: nothing is judged
    lost = {n for n in old - new if not (n.startswith("__") and n.endswith("__"))}
    return bool(lost) or bool(_GLOBAL.search(base.text(path) or ""))


def _gone(base: _Tree, combined: _Tree, changed: Mapping[str, str]) -> tuple[dict[str, set[str]], dict[str, str]]:
    """Names removed from each module since the base, and modules removed altogether (module -> base file)."""
    removed: dict[str, set[str]] = {}
    gone_modules: dict[str, str] = {}
    for path, status in changed.items():
        module = base.index.canonical.get(path)
        if status == "A" or module is None or base.index.internal(module) != path:
            continue
        now = combined.index.file(module)
        if now is None:
            if not combined.index.exists(module):
                gone_modules[module] = path
            continue
        if not _may_lose(base, combined, path, now):
            continue
        before, after = base.facts(path)[0], combined.facts(now)[0]
        if before is None or after is None or before.open or after.open:
            continue
        lost = {n for n in before.names - after.names if not (n.startswith("__") and n.endswith("__"))}
        if lost:
            removed[module] = lost
    return removed, gone_modules


def _uses(
    combined: _Tree, removed: Mapping[str, set[str]], gone_modules: Mapping[str, str]
) -> dict[str, tuple[ModuleFacts, list[Reference]]]:
    """References made by the combined tree's files that mention a name removed or a module gone, in files that may
    refer to one of them."""
    words = {n for names in removed.values() for n in names} | {m.rsplit(".", 1)[-1] for m in gone_modules}
    paths = grep_files(combined.repo, combined.commit, words)
    texts = combined.sources.texts(combined.commit, paths) if paths and not gone_modules else {}
    found: dict[str, tuple[ModuleFacts, list[Reference]]] = {}
    for path in paths:
        module = combined.index.canonical.get(path)
        if module is None or (texts and not _may_refer(module, texts[path] or "", removed)):
            continue
        (facts,) = combined.facts(path)
        if facts is None:
            continue
        found[path] = (facts, list(references(facts, module, path.endswith("__init__.py"), combined.index)))
    return found


def _may_refer(module: str, text: str, removed: Mapping[str, set[str]]) -> bool:
    """Whether the file of `module` may refer to a module of `removed`: it is that module, or a module of its package
    (whose `from . import x` reads it), or it spells the module's last name, as every other reference to it does
    (an import names it; an attribute is read through what an import bound), as Python reads identifiers: NFKC
    normalized."""
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
    for other in removed:
        if module == other or module.startswith(f"{other}."):
            return True
        if re.search(rf"\b{re.escape(other.rsplit('.', 1)[-1])}\b", text):
            return True
    return False


def find_breakage(
    repo: Repo,
    base: str,
    commit: str,
    changes: Mapping[str, str] | None = None,
    sources: Sources | None = None,
) -> list[Breakage]:
    """Uses in `commit` of names or modules that existed at `base` and are gone, new imports of absent names, and
    new reads of names bound nowhere.

    `changes`: the paths that differ between the two (`changed_paths`), when the caller has them already;
    `sources`: what was read of the repository's blobs before (the gate's), so that nothing is read or parsed twice.
    """
    every = changed_paths(repo, base, commit) if changes is None else changes
    changed = {p: s for p, s in every.items() if p.endswith(".py")}
    if not changed:
        return []
    sources = sources or Sources(repo)
    paths = tree_paths(repo, commit)
    at_base = [p for p in paths if every.get(p) != "A"] + [p for p, s in every.items() if s == "D"]
    before, after = _Tree(sources, base, at_base), _Tree(sources, commit, paths)
    before.read(p for p, s in changed.items() if s != "A")
    after.read(p for p, s in changed.items() if s != "D")
    removed, gone_modules = _gone(before, after, changed)
    found: dict[tuple[str, int, str, str], Breakage] = {}
    for path, (facts, refs) in _uses(after, removed, gone_modules).items():
        for ref in refs:
            hit = _judge(ref, path, facts.strings, removed, gone_modules, before, after)
            if hit is not None:
                found.setdefault((hit.path, hit.line, hit.module, hit.name), hit)
    for hit in _new_imports(before, after, changed):
        found.setdefault((hit.path, hit.line, hit.module, hit.name), hit)
    for new in new_unbound_names(sources, base, commit, changed, after.paths):
        module = after.index.canonical.get(new.path, "")
        unbound = Breakage(new.path, new.line, module, new.name, new.message, (new.path,))
        found.setdefault((new.path, new.line, module, new.name), unbound)
    return sorted(found.values(), key=lambda b: (b.path, b.line, b.name))


def _missing_module(ref: Reference, gone_modules: Mapping[str, str], after: _Tree) -> str | None:
    """The removed module an import refers to, if any."""
    if ref.how != "import":
        return None
    if ref.module in gone_modules:
        return ref.module
    sub = f"{ref.module}.{ref.name}"
    return sub if ref.name and sub in gone_modules and not after.defines(ref.module, ref.name) else None


def _judge(
    ref: Reference,
    path: str,
    strings: frozenset[str],
    removed: Mapping[str, set[str]],
    gone_modules: Mapping[str, str],
    before: _Tree,
    after: _Tree,
) -> Breakage | None:
    gone = _missing_module(ref, gone_modules, after)
    if gone is not None:
        leaf = gone.rsplit(".", 1)[-1]
        if {leaf, f"{leaf}.py"} & strings:
            return None  # the file names the module in a string: it likely writes it at run time (a test fixture)
        verb = "imports from" if gone == ref.module and ref.name else "imports"
        return Breakage(path, ref.line, gone, "", f"{verb} {gone}, which no longer exists", (path, gone_modules[gone]))
    sub = f"{ref.module}.{ref.name}"
    if ref.name not in removed.get(ref.module, ()) or after.index.exists(sub):
        return None
    involved = (path, before.index.file(ref.module) or "", after.index.file(ref.module) or "")
    files = tuple(dict.fromkeys(f for f in involved if f))
    what = {
        "import": f"imports '{ref.name}' from {ref.module}",
        "attribute": f"uses {ref.module}.{ref.name}",
        "name": f"uses '{ref.name}'",
        "__all__": f"lists '{ref.name}' in __all__",
    }[ref.how]
    return Breakage(path, ref.line, ref.module, ref.name, f"{what}, which {ref.module} no longer defines", files)


def _from_imports(tree: ast.Module, module: str, is_init: bool) -> list[tuple[ast.ImportFrom, str, str]]:
    """Each `from M import x` (not `*`) of a module: the statement, M as an absolute name, x; as `references`
    gives them, guarded ones too."""
    found: list[tuple[ast.ImportFrom, str, str]] = []
    for node in statements(tree):
        if isinstance(node, ast.ImportFrom):
            base = _package(module, is_init, node.level) if node.level else ""
            source = ".".join(p for p in (base, node.module or "") if p)
            found += [(node, source, a.name) for a in node.names if a.name != "*"]
    return found


def _new_imports(before: _Tree, after: _Tree, changed: Mapping[str, str]) -> list[Breakage]:
    """`from M import x`, new since the base, where M is this tree's own module and defines no x.

    New means not among the references of the file at the base; the cheap tests come first (imports the base
    had unguarded), the module's definitions next, the base's full references last.
    """
    hits: list[Breakage] = []
    for path, status in changed.items():
        module = after.index.canonical.get(path)
        tree = after.tree(path) if status != "D" and module is not None else None
        if tree is None or module is None:
            continue
        is_init = path.endswith("__init__.py")
        new = _from_imports(tree, module, is_init)
        old_tree = before.tree(path) if status != "A" and new else None
        if old_tree is not None:
            had = _from_imports(old_tree, module, is_init)
            if {(s, n) for _, s, n in new} & {(s, n) for _, s, n in had}:
                guarded = _guarded_imports(old_tree)
                unguarded = {(s, n) for node, s, n in had if id(node) not in guarded}
                new = [item for item in new if (item[1], item[2]) not in unguarded]
        new = [(node, source, name) for node, source, name in new if _lacks(after, source, name)]
        if new:
            guarded = _guarded_imports(tree)
            new = [item for item in new if id(item[0]) not in guarded]
        old = before.facts(path)[0] if new and old_tree is not None else None
        known = {(r.module, r.name) for r in references(old, module, is_init, before.index)} if old else set()
        for node, source, name in new:
            if (source, name) not in known:
                message = f"imports '{name}' from {source}, which does not define it"
                hits.append(
                    Breakage(path, node.lineno, source, name, message, (path, after.index.internal(source) or ""))
                )
    return hits


def _lacks(tree: _Tree, module: str, name: str) -> bool:
    """Whether `module` is this tree's own and surely defines no `name`."""
    target = tree.index.internal(module)
    return target is not None and not tree.defines(module, name) and not _hooked(tree, target)


def _hooked(tree: _Tree, path: str) -> bool:
    """Whether a module's top-level code calls something (`ModuleFacts.calls`): an import hook may give it names
    `ast` cannot see."""
    module = tree.tree(path)
    return module is None or any(isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) for s in module.body)


def attribute(repo: Repo, base: str, breakage: Breakage, branches: Mapping[str, str]) -> tuple[str, ...]:
    """The tasks (of `branches`, task -> commit) that changed a file involved in `breakage`."""
    word = re.compile(rf"\b{re.escape(breakage.name or breakage.module.rsplit('.', 1)[-1])}\b")
    involved: list[str] = []
    for task, commit in branches.items():
        touched = changed_paths(repo, base, commit)
        if any(f in touched for f in breakage.files[1:]):
            involved.append(task)
        elif breakage.path in touched:
            text = read_blobs(repo, commit, [breakage.path]).get(breakage.path) or ""
            if word.search(text):
                involved.append(task)
    return tuple(involved)
