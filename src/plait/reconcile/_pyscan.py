"""What a Python tree defines and references, read with `ast`: module names, top-level names, imports."""

from __future__ import annotations

import ast
import builtins
import sys
import warnings
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

__all__ = ["ModuleFacts", "ModuleIndex", "Reference", "parse", "references", "scan_module", "statements", "walk"]

_STDLIB = frozenset(sys.stdlib_module_names)
_BUILTINS = frozenset(dir(builtins))
_IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})


class ModuleIndex:
    """The module names a tree's .py files are imported by, found from where the `__init__.py` files are."""

    def __init__(self, paths: Iterable[str]) -> None:
        py = [p for p in paths if p.endswith(".py")]
        packages = {p.rpartition("/")[0] for p in py if p.rpartition("/")[2] == "__init__.py"}
        self.canonical: dict[str, str] = {}
        self._files: dict[str, set[str]] = {}
        for path in py:
            names = _module_names(path, packages)
            if not names:
                continue
            self.canonical[path] = names[0]
            for name in names:
                self._files.setdefault(name, set()).add(path)

    def file(self, module: str) -> str | None:
        """The one file that is `module`, or None when there is none or more than one."""
        files = self._files.get(module, set())
        return next(iter(files)) if len(files) == 1 else None

    def exists(self, module: str) -> bool:
        """Whether some file is `module`."""
        return module in self._files

    def internal(self, module: str) -> str | None:
        """The file of `module` when it is unambiguously this tree's own (its canonical name, not a stdlib name)."""
        path = self.file(module)
        if path is None or self.canonical.get(path) != module or module.split(".")[0] in _STDLIB:
            return None
        return path


def _module_names(path: str, packages: set[str]) -> list[str]:
    """The canonical dotted name of `path` first, then the longer names that include non-package folders."""
    parts = path[:-3].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    if not parts or not all(p.isidentifier() for p in parts):
        return []
    folders = path.split("/")[:-1]
    top = len(folders)
    while top > 0 and "/".join(folders[:top]) in packages:
        top -= 1
    return [".".join(parts[start:]) for start in range(min(top, len(parts) - 1), -1, -1)]


def parse(text: str) -> ast.Module | None:
    """The module's syntax tree, or None when it does not parse (or nests too deep for the parser)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return None


def walk(tree: ast.AST) -> list[ast.AST]:
    """Every node under `tree` (itself first), in the order `ast.walk` gives them, made once into a list."""
    found = [tree]
    for node in found:  # the list grows as it is read: breadth first, as ast.walk goes
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, ast.AST):
                found.append(value)
            elif isinstance(value, list):
                found += [item for item in value if isinstance(item, ast.AST)]
    return found


_BLOCKS = frozenset({"body", "orelse", "finalbody", "handlers", "cases"})
"""The fields that hold statements (and the `except` and `case` clauses that hold them); an expression holds none."""


def statements(tree: ast.AST) -> list[ast.AST]:
    """The statements under `tree` (itself first, with the `except` and `case` clauses between), in `ast.walk`'s
    order: what `walk` gives of them, without visiting an expression."""
    found = [tree]
    for node in found:
        for name in node._fields:
            if name in _BLOCKS:
                value = getattr(node, name, None)
                if isinstance(value, list):
                    found += value
    return found


@dataclass
class ModuleFacts:
    """The top-level names a module binds; `open` when it can bind names `ast` cannot see."""

    tree: ast.Module
    nodes: list[ast.AST]
    """Every node of `tree`, as `walk` gives them."""
    names: set[str]
    open: bool
    bound: set[str]
    """Every name bound anywhere in the module (parameters, locals, imports...)."""
    exported: list[tuple[str, int]] = field(default_factory=list)
    """The literal entries of `__all__`, with their lines."""
    calls: bool = False
    """Whether top-level code calls something (which may install an import hook or add names)."""
    strings: frozenset[str] = frozenset()
    """The short string constants of the module (a module name among them may be made at run time)."""


def scan_module(tree: ast.Module, nodes: list[ast.AST]) -> ModuleFacts:
    """The facts of one module, from its syntax tree and every node of it (`walk`)."""
    names: set[str] = set()
    is_open = _top_level(tree, names)
    bound: set[str] = set()
    strings: set[str] = set()
    for node in nodes:
        bound.update(_binds(node))
        if isinstance(node, ast.Global):
            names.update(node.names)
        elif isinstance(node, ast.Constant):
            if isinstance(node.value, str) and len(node.value) < 80:
                strings.add(node.value)
        elif _binds_unseen(node):
            is_open = True
    is_open = is_open or "__getattr__" in names
    hooked = any(isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) for s in tree.body)
    exported = _exported(tree)
    return ModuleFacts(tree, nodes, names, is_open, bound, exported=exported, calls=hooked, strings=frozenset(strings))


def _binds_unseen(node: ast.AST) -> bool:
    """Whether `node` can bind module names `ast` cannot see: `globals()`, `vars()`, `locals()`, `exec`, or
    the module object itself (`sys.modules[__name__]`)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return node.func.id in ("globals", "vars", "locals", "exec")
    return (
        isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Attribute)
        and node.value.attr == "modules"
        and isinstance(node.slice, ast.Name)
        and node.slice.id == "__name__"
    )


def _binds(node: ast.AST) -> Iterator[str]:
    if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
        yield node.id
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        yield node.name
    elif isinstance(node, ast.arg):
        yield node.arg
    elif isinstance(node, (ast.Import, ast.ImportFrom)):
        yield from (a.asname or a.name.split(".")[0] for a in node.names)
    elif isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and node.name:
        yield node.name
    elif isinstance(node, ast.MatchMapping) and node.rest:
        yield node.rest
    elif isinstance(node, (ast.Global, ast.Nonlocal)):
        yield from node.names


def _top_level(node: ast.AST, names: set[str]) -> bool:
    """Add the names bound in the module's own scope; True when a star import makes it open."""
    is_open = False
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(child.name)
            continue
        if isinstance(child, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            continue
        if isinstance(child, ast.ImportFrom) and any(a.name == "*" for a in child.names):
            is_open = True
        names.update(_binds(child))
        is_open = _top_level(child, names) or is_open
    return is_open


def _exported(tree: ast.Module) -> list[tuple[str, int]]:
    found: list[tuple[str, int]] = []
    for stmt in tree.body:
        targets = (
            stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] if isinstance(stmt, ast.AugAssign) else []
        )
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            value = stmt.value if isinstance(stmt, (ast.Assign, ast.AugAssign)) else None
            if isinstance(value, (ast.List, ast.Tuple)):
                found += [
                    (e.value, e.lineno) for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)
                ]
    return found


@dataclass(frozen=True)
class Reference:
    """One place a module refers to a name of another module (or of itself)."""

    line: int
    module: str
    name: str
    """Empty when the module itself is what is referred to."""
    how: str
    """`import`, `attribute`, `name` or `__all__`."""


def _guarded_imports(tree: ast.Module) -> set[int]:
    """ids of import statements that expect an ImportError: in a `try` that catches it, or in a `with`
    that names it (`pytest.raises(ImportError)`, `suppress(ImportError)`)."""
    guarded: set[int] = set()
    for node in statements(tree):
        if isinstance(node, ast.Try) and any(_catches_import_error(h) for h in node.handlers):
            body = node.body
        elif isinstance(node, (ast.With, ast.AsyncWith)) and any(
            _names_import_error(i.context_expr) for i in node.items
        ):
            body = node.body
        else:
            continue
        guarded.update(id(n) for s in body for n in statements(s) if isinstance(n, (ast.Import, ast.ImportFrom)))
    return guarded


def _names_import_error(expr: ast.expr) -> bool:
    return any(
        (isinstance(n, ast.Name) and n.id in _IMPORT_ERRORS)
        or (isinstance(n, ast.Attribute) and n.attr in _IMPORT_ERRORS)
        for n in ast.walk(expr)
    )


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(k is None or (isinstance(k, ast.Name) and k.id in _IMPORT_ERRORS) for k in kinds)


def _package(module: str, is_init: bool, level: int) -> str:
    parts = module.split(".") if module else []
    parts = parts if is_init else parts[:-1]
    return ".".join(parts[: len(parts) - (level - 1)] if level > 1 else parts)


def references(facts: ModuleFacts, module: str, is_init: bool, index: ModuleIndex) -> Iterator[Reference]:
    """Every import, module attribute and same-module name in a module, as absolute module names."""
    guarded = _guarded_imports(facts.tree)
    aliases: dict[str, str] = {}
    rebound = facts.bound - {
        a for n in statements(facts.tree) if isinstance(n, (ast.Import, ast.ImportFrom)) for a in _binds(n)
    }
    for node in facts.nodes:
        if isinstance(node, ast.ImportFrom):
            base = _package(module, is_init, node.level) if node.level else ""
            source = ".".join(p for p in (base, node.module or "") if p)
            for alias in node.names:
                sub = f"{source}.{alias.name}"
                if index.exists(sub):
                    aliases[alias.asname or alias.name] = sub
                if id(node) not in guarded and alias.name != "*":
                    yield Reference(node.lineno, source, alias.name, "import")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                aliases[alias.asname or alias.name.split(".")[0]] = (
                    alias.name if alias.asname else alias.name.split(".")[0]
                )
                if id(node) not in guarded:
                    yield Reference(node.lineno, alias.name, "", "import")
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            owner = _module_of(node.value, aliases, rebound, index)
            if owner is not None and not index.exists(f"{owner}.{node.attr}"):
                yield Reference(node.lineno, owner, node.attr, "attribute")
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            if node.id not in facts.bound and node.id not in _BUILTINS:
                yield Reference(node.lineno, module, node.id, "name")
    for name, line in facts.exported:
        yield Reference(line, module, name, "__all__")


def _module_of(expr: ast.expr, aliases: dict[str, str], rebound: set[str], index: ModuleIndex) -> str | None:
    if isinstance(expr, ast.Name):
        return None if expr.id in rebound else aliases.get(expr.id)
    if isinstance(expr, ast.Attribute):
        owner = _module_of(expr.value, aliases, rebound, index)
        if owner is not None and index.exists(f"{owner}.{expr.attr}"):
            return f"{owner}.{expr.attr}"
    return None
