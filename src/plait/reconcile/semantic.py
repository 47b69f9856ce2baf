"""The cross-branch check: a name that existed at the base, is gone from the combined tree, and is still used.

Python only, read with `ast`, tuned for few false alarms: a name counts as gone only when its module
can be told apart (one file, no star import, no module `__getattr__`, no `globals()`), and a use
counts only when it is an import, an attribute of the imported module, a bare name in the module
itself, or an `__all__` entry. An import added since the base of a name its module never defined is
reported too (a branch that relied on another branch's new name, which was then left out).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from plait.reconcile._pyscan import ModuleFacts, ModuleIndex, Reference, references, scan_module
from plait.reconcile._trees import changed_paths, grep_files, read_blobs, tree_paths
from plait.workspace import Repo

__all__ = ["Breakage", "attribute", "find_breakage"]


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
    """One commit's Python modules, parsed on demand."""

    def __init__(self, repo: Repo, commit: str) -> None:
        self.repo, self.commit = repo, commit
        self.index = ModuleIndex(tree_paths(repo, commit))
        self._facts: dict[str, ModuleFacts | None] = {}

    def facts(self, *paths: str) -> list[ModuleFacts | None]:
        missing = [p for p in paths if p not in self._facts]
        for path, text in read_blobs(self.repo, self.commit, missing).items():
            self._facts[path] = None if text is None else scan_module(text)
        return [self._facts[p] for p in paths]

    def defines(self, module: str, name: str) -> bool:
        """Whether `module` has `name` (or it cannot be known); a submodule counts."""
        path = self.index.file(module)
        if path is None or self.index.exists(f"{module}.{name}"):
            return True
        (facts,) = self.facts(path)
        return facts is None or facts.open or name in facts.names


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
        before, after = base.facts(path)[0], combined.facts(now)[0]
        if before is None or after is None or before.open or after.open:
            continue
        lost = {n for n in before.names - after.names if not (n.startswith("__") and n.endswith("__"))}
        if lost:
            removed[module] = lost
    return removed, gone_modules


def _uses(combined: _Tree, words: set[str]) -> dict[str, tuple[ModuleFacts, list[Reference]]]:
    """References made by the combined tree's files that mention any of `words`."""
    found: dict[str, tuple[ModuleFacts, list[Reference]]] = {}
    for path in grep_files(combined.repo, combined.commit, words):
        module = combined.index.canonical.get(path)
        (facts,) = combined.facts(path)
        if module is None or facts is None:
            continue
        found[path] = (facts, list(references(facts, module, path.endswith("__init__.py"), combined.index)))
    return found


def find_breakage(repo: Repo, base: str, commit: str) -> list[Breakage]:
    """Uses in `commit` of names or modules that existed at `base` and are gone, and new imports of absent names."""
    changed = {p: s for p, s in changed_paths(repo, base, commit).items() if p.endswith(".py")}
    if not changed:
        return []
    before, after = _Tree(repo, base), _Tree(repo, commit)
    removed, gone_modules = _gone(before, after, changed)
    found: dict[tuple[str, int, str, str], Breakage] = {}
    words = {n for names in removed.values() for n in names} | {m.rsplit(".", 1)[-1] for m in gone_modules}
    for path, (facts, refs) in _uses(after, words).items():
        for ref in refs:
            hit = _judge(ref, path, facts.strings, removed, gone_modules, before, after)
            if hit is not None:
                found.setdefault((hit.path, hit.line, hit.module, hit.name), hit)
    for hit in _new_imports(before, after, changed):
        found.setdefault((hit.path, hit.line, hit.module, hit.name), hit)
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


def _new_imports(before: _Tree, after: _Tree, changed: Mapping[str, str]) -> list[Breakage]:
    """`from M import x`, new since the base, where M is this tree's own module and defines no x."""
    hits: list[Breakage] = []
    for path, status in changed.items():
        module = after.index.canonical.get(path)
        if status == "D" or module is None:
            continue
        facts, old = after.facts(path)[0], before.facts(path)[0] if status != "A" else None
        if facts is None:
            continue
        is_init = path.endswith("__init__.py")
        known = {(r.module, r.name) for r in references(old, module, is_init, before.index)} if old else set()
        for ref in references(facts, module, is_init, after.index):
            if ref.how != "import" or not ref.name or (ref.module, ref.name) in known:
                continue
            target = after.index.internal(ref.module)
            if target is None or after.defines(ref.module, ref.name) or _hooked(after, target):
                continue
            message = f"imports '{ref.name}' from {ref.module}, which does not define it"
            hits.append(Breakage(path, ref.line, ref.module, ref.name, message, (path, target)))
    return hits


def _hooked(tree: _Tree, path: str) -> bool:
    """Whether a module's top-level code calls something: an import hook may give it names `ast` cannot see."""
    (facts,) = tree.facts(path)
    return facts is None or facts.calls


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
