"""Names a Python module may read without binding them: the builtins of the project's Python, and the module's own."""

from __future__ import annotations

import ast
import builtins
import re
import symtable
import warnings
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from plait.reconcile._pyscan import _binds_unseen, _exported, parse

__all__ = ["PYTHON2_BUILTINS", "Unbound", "known_names", "unbound_names"]

PYTHON2_BUILTINS = frozenset(
    {
        "apply",
        "basestring",
        "buffer",
        "cmp",
        "coerce",
        "execfile",
        "file",
        "intern",
        "long",
        "raw_input",
        "reduce",
        "reload",
        "StandardError",
        "unichr",
        "unicode",
        "xrange",
    }
)
"""Builtins of Python 2 that Python 3 no longer has."""

_LATER_BUILTINS = frozenset({"EncodingWarning", "PythonFinalizationError", "aiter", "anext"})
"""Builtins of Python 3 versions that code guarded by a version check may use under an older interpreter."""

_PLATFORM_BUILTINS = frozenset({"WindowsError"})
"""Builtins of Python 3 on one platform only."""

_MODULE_NAMES = frozenset(
    {
        "__annotations__",
        "__builtins__",
        "__cached__",
        "__doc__",
        "__file__",
        "__loader__",
        "__name__",
        "__package__",
        "__path__",
        "__spec__",
    }
)
"""Names Python binds in every module's namespace."""

_CLASS_NAMES = frozenset({"__class__", "__module__", "__qualname__"})
"""Names Python binds in a class body (and `__class__` in its methods)."""

_CHECKER_NAMES = frozenset({"reveal_locals", "reveal_type"})
"""Names type checkers provide, used in files they read and nobody runs."""

_PYTHON3 = frozenset(dir(builtins)) | _LATER_BUILTINS | _PLATFORM_BUILTINS
_KNOWN3 = _PYTHON3 | _MODULE_NAMES | _CLASS_NAMES | _CHECKER_NAMES


def known_names(*, python2: bool = False) -> frozenset[str]:
    """The names a module reads without binding them, for a project that runs on Python 3 (and 2, if `python2`)."""
    return _KNOWN3 | PYTHON2_BUILTINS if python2 else _KNOWN3


@dataclass(frozen=True)
class Unbound:
    """A name a module reads that nothing binds: not the module, its imports, nor the builtins."""

    name: str
    line: int
    """The first line that reads it (or, for `__all__`, lists it)."""
    listed: bool = False
    """Whether it is an entry of `__all__` rather than a read."""


def unbound_names(
    source: str,
    *,
    python2: bool = False,
    submodules: Iterable[str] = (),
    tree: Callable[[], ast.Module | None] | None = None,
) -> list[Unbound]:
    """The names `source` reads that nothing binds, first use each, by line; none when it cannot be told.

    Silent on a module that does not parse (the parse stage's), that imports `*`, or that may bind names unseen
    (`globals()`, `locals()`, `vars()`, `exec`, its own module object, `__builtins__`). Not reads: a name inside a
    `try` that expects a NameError, under `if TYPE_CHECKING:`, in an annotation Python never evaluates (a function's
    variables', or any under `from __future__ import annotations`), on a line whose `# noqa` (bare, or naming F821)
    says it is unbound on purpose, and Python 2's builtins under an `if` that tests the Python version.
    `submodules`: the names a package's `__init__` may list in `__all__` without binding them; `tree` gives the
    source's syntax tree (None when it does not parse), parsed before, when it is needed.
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            top = symtable.symtable(source, "<module>", "exec")
    except (SyntaxError, ValueError, RecursionError):
        return []
    bound = _module_bound(top)
    known = known_names(python2=python2)
    wanted = {
        s.get_name()
        for t in _tables(top)
        for s in t.get_symbols()
        if s.is_referenced() and _global(s, t) and s.get_name() not in bound and s.get_name() not in known
    }
    listing = "__all__" in source and "__getattr__" not in bound
    if not wanted and not listing:
        return []  # the common case, told by the compiler's symbol table alone, without a syntax tree
    parsed = parse(source) if tree is None else tree()
    if parsed is None or _open(parsed, source):
        return []
    quiet = _quiet_lines(source)
    found = [Unbound(n, line) for n, line in _first_reads(parsed, top, wanted, quiet).items()]
    if listing:
        allowed = bound | known | set(submodules)
        listed = _exported(parsed)
        found += [
            Unbound(name, line, listed=True) for name, line in listed if name not in allowed and line not in quiet
        ]
    return sorted(found, key=lambda u: (u.line, u.name))


def _open(tree: ast.Module, source: str) -> bool:
    """Whether the module may bind names `ast` cannot see: a star import, a namespace written to, the builtins."""
    if not _MAY_OPEN.search(source):
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
            return True
        if isinstance(node, ast.Name) and node.id in ("__builtins__", "execfile"):
            return True
        if _binds_unseen(node):
            return True
    return False


def _tables(table: symtable.SymbolTable) -> Iterator[symtable.SymbolTable]:
    yield table
    for child in table.get_children():
        yield from _tables(child)


def _global(symbol: symtable.Symbol, table: symtable.SymbolTable) -> bool:
    """Whether `symbol` is looked up in the module's namespace (`is_global` alone takes a function named `top`'s
    locals for globals: Python 3.11's symtable tells the module's table by that name)."""
    return symbol.is_global() and (table.get_type() == "module" or not symbol.is_local())


def _module_bound(top: symtable.SymbolTable) -> set[str]:
    """The names bound in the module's namespace: at its top level, or in any scope that declares them `global`."""
    bound = {s.get_name() for s in top.get_symbols() if s.is_assigned() or s.is_imported() or s.is_namespace()}
    for table in _tables(top):
        bound |= {
            s.get_name()
            for s in table.get_symbols()
            if s.is_declared_global() and (s.is_assigned() or s.is_imported() or s.is_namespace())
        }
    return bound


_SCOPES = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.Lambda,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
)
_TABLE_NAMES = {
    ast.Lambda: "lambda",
    ast.ListComp: "listcomp",
    ast.SetComp: "setcomp",
    ast.DictComp: "dictcomp",
    ast.GeneratorExp: "genexpr",
}
_MAY_OPEN = re.compile(r"import\s*\*|\b(?:globals|locals|vars|exec|execfile|__builtins__|modules)\b")
"""Words without which a module cannot be open (what `_open` looks for), to skip its walk."""
_VERSION = re.compile(r"^_?(?:IS_)?PY(?:THON)?_?[23]K?$|version", re.IGNORECASE)
"""A name that tells which Python runs the code: `PY2`, `IS_PY3`, `PYTHON2`, `version_info`, `hexversion`."""
_NOQA = re.compile(r"#\s*noqa\b(?::\s*([A-Za-z0-9, ]+))?", re.IGNORECASE)
_PROBES = frozenset({"NameError", "Exception", "BaseException"})
"""What an `except` that expects a read of an unbound name catches."""


class _Reads:
    """Walks a module's syntax tree beside its symbol tables, keeping the first unguarded global read of each name."""

    def __init__(self, tree: ast.Module, wanted: set[str], quiet: set[int]) -> None:
        self.wanted, self.quiet = wanted, quiet
        self.first: dict[str, int] = {}
        self.versioned = 0
        """How many `if`s that test the Python version the walk is in (Python 2's builtins are known there)."""
        self.lazy = any(
            isinstance(s, ast.ImportFrom) and s.module == "__future__" and any(a.name == "annotations" for a in s.names)
            for s in tree.body
        )

    def visit(self, node: ast.AST, table: symtable.SymbolTable, children: dict[tuple[str, int], list[Any]]) -> None:
        """Visit `node`, read in `table` (whose child tables, by name and line, are `children`)."""
        if isinstance(node, ast.Name):
            self._read(node, table)
        elif isinstance(node, _SCOPES):
            self._scope(node, table, children)
        elif isinstance(node, (ast.Try, ast.TryStar)) and any(_expects_unbound(h) for h in node.handlers):
            for child in [*node.handlers, *node.orelse, *node.finalbody]:
                self.visit(child, table, children)
        elif isinstance(node, ast.If) and _type_checking(node.test):
            for child in node.orelse:
                self.visit(child, table, children)
        elif isinstance(node, (ast.If, ast.IfExp)) and _tests_version(node.test):
            self.visit(node.test, table, children)
            self.versioned += 1
            for child in [*_as_list(node.body), *_as_list(node.orelse)]:
                self.visit(child, table, children)
            self.versioned -= 1
        elif isinstance(node, ast.AnnAssign) and (self.lazy or table.get_type() == "function"):
            for name, child in ast.iter_fields(node):
                if name != "annotation" and isinstance(child, ast.AST):
                    self.visit(child, table, children)
        else:
            for child in ast.iter_child_nodes(node):
                self.visit(child, table, children)

    def _read(self, node: ast.Name, table: symtable.SymbolTable) -> None:
        if node.id not in self.wanted or node.id in self.first or isinstance(node.ctx, ast.Store):
            return
        if node.lineno in self.quiet or (self.versioned and node.id in PYTHON2_BUILTINS):
            return
        try:
            symbol = table.lookup(node.id)
        except KeyError:
            return
        if _global(symbol, table):
            self.first[node.id] = node.lineno

    def _scope(self, node: ast.AST, table: symtable.SymbolTable, children: dict[tuple[str, int], list[Any]]) -> None:
        """The parts evaluated where the scope is made, in `table`; the rest in the scope's own table."""
        name = getattr(node, "name", None) or _TABLE_NAMES[type(node)]
        queue = children.get((name, getattr(node, "lineno", 0)))
        inner = queue.pop(0) if queue else None
        outside, inside = _split(node, self.lazy)
        for child in outside:
            self.visit(child, table, children)
        if inner is None:
            return  # no table found for it: its reads cannot be placed, so none is judged
        grand = _by_place(inner)
        for child in inside:
            self.visit(child, inner, grand)


def _split(node: ast.AST, lazy: bool) -> tuple[list[ast.AST], list[ast.AST]]:
    """The children of a scope's node evaluated outside it, and those inside it."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        args = node.args
        outside: list[ast.AST] = [*node.decorator_list, *args.defaults, *(d for d in args.kw_defaults if d)]
        if not lazy:
            every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
            outside += [a.annotation for a in every if a is not None and a.annotation is not None]
            outside += [node.returns] if node.returns else []
        return outside, list(node.body)
    if isinstance(node, ast.ClassDef):
        return [*node.decorator_list, *node.bases, *node.keywords], list(node.body)
    if isinstance(node, ast.Lambda):
        return [*node.args.defaults, *(d for d in node.args.kw_defaults if d)], [node.body]
    assert isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp))
    first, *rest = node.generators
    elements = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
    inside: list[ast.AST] = [first.target, *first.ifs, *rest, *elements]
    return [first.iter], inside


def _by_place(table: symtable.SymbolTable) -> dict[tuple[str, int], list[Any]]:
    found: dict[tuple[str, int], list[Any]] = {}
    for child in table.get_children():
        found.setdefault((child.get_name(), child.get_lineno()), []).append(child)
    return found


def _first_reads(tree: ast.Module, top: symtable.SymbolTable, wanted: set[str], quiet: set[int]) -> dict[str, int]:
    """The first line reading each of `wanted` as a global, outside the guards `unbound_names` tells."""
    if not wanted:
        return {}
    reads = _Reads(tree, wanted, quiet)
    children = _by_place(top)
    for stmt in tree.body:
        reads.visit(stmt, top, children)
    return reads.first


def _quiet_lines(source: str) -> set[int]:
    """The lines whose `# noqa` comment covers an undefined name (bare, or listing F821)."""
    quiet: set[int] = set()
    if "noqa" not in source.lower():
        return quiet
    for number, line in enumerate(source.splitlines(), 1):
        found = _NOQA.search(line)
        if found and (found.group(1) is None or "F821" in found.group(1).upper()):
            quiet.add(number)
    return quiet


def _expects_unbound(handler: ast.ExceptHandler) -> bool:
    kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(
        k is None
        or (isinstance(k, ast.Name) and k.id in _PROBES)
        or (isinstance(k, ast.Attribute) and k.attr in _PROBES)
        for k in kinds
    )


def _tests_version(test: ast.expr) -> bool:
    """Whether a condition tests which Python runs it (`PY2`, `six.PY3`, `sys.version_info`...)."""
    return any(
        _VERSION.search(n.id if isinstance(n, ast.Name) else n.attr)
        for n in ast.walk(test)
        if isinstance(n, (ast.Name, ast.Attribute))
    )


def _as_list(part: ast.AST | list[ast.stmt]) -> list[ast.AST]:
    return list(part) if isinstance(part, list) else [part]


def _type_checking(test: ast.expr) -> bool:
    """Whether an `if` tests TYPE_CHECKING (its body is read by type checkers only)."""
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )
