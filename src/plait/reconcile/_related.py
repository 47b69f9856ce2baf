"""Which conflicted files of one merge go to the model together: a module and its tests, a definition and its users.

Groups are the connected parts of the "related" relation over the merge's open conflicts, cut in path order
when too large, so that every file of a group finds the same group (and the same single call).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import PurePosixPath

from plait.reconcile._intent import defined_names
from plait.reconcile.types import FileConflict

__all__ = ["group_of"]

_MARKED = re.compile(r"^<{7}[^\n]*\n(.*?)^>{7}[^\n]*$", re.DOTALL | re.MULTILINE)


def _stem(path: str) -> str:
    p = PurePosixPath(path)
    return p.parent.name if p.stem == "__init__" else p.stem


def _tests(test: str, module: str) -> bool:
    name, stem = PurePosixPath(test).stem, _stem(module)
    return len(stem) > 2 and name in (f"test_{stem}", f"{stem}_test", f"tests_{stem}") and test != module


def _texts(conflict: FileConflict) -> str:
    return (conflict.ours or "") + (conflict.theirs or "")


def _conflicted(conflict: FileConflict) -> str:
    """The lines inside git's conflict blocks (the whole file when there are none)."""
    blocks = _MARKED.findall(conflict.merged)
    return "".join(blocks) if blocks else _texts(conflict)


def _imports(user: FileConflict, module: FileConflict) -> bool:
    stem = _stem(module.path)
    if len(stem) < 3 or not user.path.endswith(".py"):
        return False
    name = re.escape(stem)
    pattern = (
        rf"^\s*(?:from\s+[\w.]*\b{name}\b\s+import|import\s+[\w.]*\b{name}\b"
        rf"|from\s+[\w.]+\s+import\s+.*\b{name}\b)"
    )
    return re.search(pattern, _texts(user), re.MULTILINE) is not None


def _uses(user: FileConflict, definer: FileConflict) -> bool:
    names = {n for n in defined_names(_conflicted(definer).splitlines()) if len(n) > 3}
    block = _conflicted(user)
    return any(re.search(rf"\b{re.escape(n)}\b", block) for n in names)


def related(a: FileConflict, b: FileConflict) -> bool:
    """Whether two conflicted Python files are best resolved together."""
    if not (a.path.endswith(".py") and b.path.endswith(".py")):
        return False
    if _tests(a.path, b.path) or _tests(b.path, a.path):
        return True
    return _imports(a, b) or _imports(b, a) or _uses(a, b) or _uses(b, a)


def group_of(
    conflict: FileConflict, siblings: Sequence[FileConflict], *, max_files: int = 4, max_chars: int = 300_000
) -> list[FileConflict]:
    """The files to resolve in one call with `conflict` (itself included), in path order."""
    everyone = sorted({c.path: c for c in [*siblings, conflict]}.values(), key=lambda c: c.path)
    parent = list(range(len(everyone)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, a in enumerate(everyone):
        for j in range(i + 1, len(everyone)):
            if root(i) != root(j) and related(a, everyone[j]):
                parent[root(j)] = root(i)
    mine = root(next(i for i, c in enumerate(everyone) if c.path == conflict.path))
    members = [c for i, c in enumerate(everyone) if root(i) == mine]
    chunks: list[list[FileConflict]] = [[]]
    size = 0
    for c in members:
        weight = len(c.merged or _texts(c))
        if chunks[-1] and (len(chunks[-1]) >= max_files or size + weight > max_chars):
            chunks.append([])
            size = 0
        chunks[-1].append(c)
        size += weight
    return next(chunk for chunk in chunks if any(c.path == conflict.path for c in chunk))
