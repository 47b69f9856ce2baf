"""A small static check for Track B: undefined names and broken internal imports in a tree's Python files."""

from __future__ import annotations

import ast
import symtable
from collections.abc import Iterable, Iterator
from pathlib import PurePosixPath

from plait.reconcile._gitio import decode, git_bytes, read_blobs
from plait.reconcile._parsecheck import targets_python2
from plait.reconcile._undefined import known_names
from plait.workspace import Repo

__all__ = ["static_problems", "undefined_names"]


def _tables(table: symtable.SymbolTable) -> Iterator[symtable.SymbolTable]:
    yield table
    for child in table.get_children():
        yield from _tables(child)


def undefined_names(source: str, filename: str = "<module>", *, python2: bool = False) -> set[str]:
    """Names read as globals that the module never binds and the project's Python (3, and 2 if `python2`) does not
    provide ("<syntax>" if unparseable)."""
    try:
        top = symtable.symtable(source, filename, "exec")
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return {"<syntax>"}
    if any(isinstance(n, ast.ImportFrom) and any(a.name == "*" for a in n.names) for n in ast.walk(tree)):
        return set()
    bound = {s.get_name() for s in top.get_symbols() if s.is_assigned() or s.is_imported() or s.is_namespace()}
    for table in _tables(top):
        bound |= {s.get_name() for s in table.get_symbols() if s.is_declared_global() and s.is_assigned()}
    missing: set[str] = set()
    known = known_names(python2=python2)
    for table in _tables(top):
        for sym in table.get_symbols():
            if sym.is_referenced() and sym.is_global() and sym.get_name() not in bound | known:
                missing.add(sym.get_name())
    return missing


def _module_map(paths: Iterable[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    for path in paths:
        p = PurePosixPath(path)
        if p.suffix != ".py":
            continue
        parts = list(p.with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        for start in (0, 1) if parts and parts[0] in ("src", "lib") else (0,):
            if parts[start:]:
                found.setdefault(".".join(parts[start:]), path)
    return found


def _defined(source: str) -> set[str] | None:
    """Top-level names of a module; None when anything may be defined (star import, `__getattr__`, no parse)."""
    try:
        table = symtable.symtable(source, "<module>", "exec")
    except (SyntaxError, ValueError):
        return None
    names = {s.get_name() for s in table.get_symbols() if s.is_assigned() or s.is_imported() or s.is_namespace()}
    return None if "__getattr__" in names or "*" in names else names


def _imports(source: str, path: str) -> Iterator[tuple[str, str]]:
    """(module, name) for each `from module import name`, relative ones resolved against `path`."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return
    package = list(PurePosixPath(path).parent.parts)
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            anchor = package[: len(package) - node.level + 1] if node.level > 1 else package
            module = ".".join([*anchor, *(node.module.split(".") if node.module else [])])
        else:
            module = node.module or ""
        for alias in node.names:
            if alias.name != "*":
                yield module, alias.name


def static_problems(repo: Repo, commit: str, paths: Iterable[str]) -> set[str]:
    """Problems in the given Python files of `commit`: undefined names (read with the builtins of the Python the
    project declares) and imports of missing internal names."""
    wanted = [p for p in paths if p.endswith(".py")]
    _, listing = git_bytes(repo, "ls-tree", "-r", "-z", commit)
    entries = dict(
        (decode(path), info.split()[2].decode())
        for info, path in (line.split(b"\t", 1) for line in listing.split(b"\0") if line)
    )
    modules = _module_map(entries)
    present = [p for p in wanted if p in entries]
    blobs = read_blobs(repo, [entries[p] for p in present])
    python2 = targets_python2(
        lambda name: decode(read_blobs(repo, [entries[name]])[entries[name]]) if name in entries else None
    )
    problems: set[str] = set()
    defined_cache: dict[str, set[str] | None] = {}
    for path in present:
        source = decode(blobs[entries[path]])
        problems |= {f"{path}: undefined name {name}" for name in undefined_names(source, path, python2=python2)}
        for module, name in _imports(source, path):
            target = modules.get(module)
            if target is None or f"{module}.{name}" in modules:
                continue
            if target not in defined_cache:
                data = read_blobs(repo, [entries[target]])[entries[target]]
                defined_cache[target] = _defined(decode(data))
            names = defined_cache[target]
            if names is not None and name not in names:
                problems.add(f"{path}: cannot import {name} from {module}")
    return problems
