"""Top-level definitions of a source file: `ast` for Python, a cheap line regex for JS/TS, Go and Rust."""

from __future__ import annotations

import ast
import re
from pathlib import PurePosixPath

__all__ = ["SOURCE_SUFFIXES", "symbols"]

_LINE_CAP = 110
_JS = re.compile(
    r"^(?:export\s+(?:default\s+)?)?(?:declare\s+)?(?:async\s+)?(?:abstract\s+)?"
    r"(?:function\b|class\s|interface\s|enum\s|type\s+\w+\s*[=<])"
    r"|^export\s+(?:const|let|var)\s"
)
_GO = re.compile(r"^(?:func|type)\s")
_RUST = re.compile(r"^(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?(?:unsafe\s+)?(?:fn|struct|enum|trait|impl|type|mod)\b")
_LINE_RULES = {
    ".js": _JS,
    ".jsx": _JS,
    ".mjs": _JS,
    ".cjs": _JS,
    ".ts": _JS,
    ".tsx": _JS,
    ".go": _GO,
    ".rs": _RUST,
}
SOURCE_SUFFIXES = frozenset({".py", ".pyi", *_LINE_RULES})
_KEPT_DUNDERS = frozenset({"__init__", "__call__"})


def _cap(line: str) -> str:
    return line if len(line) <= _LINE_CAP else line[: _LINE_CAP - 3] + "..."


def _public(name: str) -> bool:
    return not name.startswith("_") or name in _KEPT_DUNDERS


def _param(arg: ast.arg, default: ast.expr | None) -> str:
    text = arg.arg + (f": {ast.unparse(arg.annotation)}" if arg.annotation else "")
    if default is not None:
        text += (" = " if arg.annotation else "=") + ast.unparse(default)
    return text


def _params(args: ast.arguments) -> str:
    """The parameters as PEP 8 writes them (`ast.unparse` leaves out the spaces around an annotated default)."""
    positional = [*args.posonlyargs, *args.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults)) + [*args.defaults]
    parts = [_param(arg, default) for arg, default in zip(positional, defaults, strict=True)]
    if args.posonlyargs:
        parts.insert(len(args.posonlyargs), "/")
    if args.vararg:
        parts.append("*" + _param(args.vararg, None))
    elif args.kwonlyargs:
        parts.append("*")
    parts += [_param(arg, default) for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=True)]
    if args.kwarg:
        parts.append("**" + _param(args.kwarg, None))
    return ", ".join(parts)


def _function(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    prefix = "async def" if isinstance(node, ast.AsyncFunctionDef) else "def"
    returns = f" -> {ast.unparse(node.returns)}" if node.returns else ""
    return _cap(f"{prefix} {node.name}({_params(node.args)}){returns}")


def _class(node: ast.ClassDef) -> str:
    bases = ", ".join(ast.unparse(b) for b in [*node.bases, *node.keywords])
    head = f"class {node.name}({bases})" if bases else f"class {node.name}"
    members = [n.name for n in node.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and _public(n.name)]
    fields = [
        n.target.id
        for n in node.body
        if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name) and _public(n.target.id)
    ]
    parts = ([f"fields {', '.join(fields)}"] if fields else []) + ([", ".join(members)] if members else [])
    return _cap(f"{head}: {'; '.join(parts)}" if parts else head)


def _python(text: str, is_test: bool) -> list[str]:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return ["(does not parse)"]
    if is_test:
        tests = sum(
            isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name.startswith("test") for n in tree.body
        )
        classes = sum(isinstance(n, ast.ClassDef) and n.name.startswith("Test") for n in tree.body)
        counted = f"{tests} test function" + ("s" if tests != 1 else "")
        return [counted + (f", {classes} test class" + ("es" if classes != 1 else "") if classes else "")]
    found = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and _public(node.name):
            found.append(_function(node))
        elif isinstance(node, ast.ClassDef) and _public(node.name):
            found.append(_class(node))
    return found


def _lines(text: str, rule: re.Pattern[str]) -> list[str]:
    found = []
    for line in text.splitlines():
        if rule.match(line):
            found.append(_cap(line.rstrip().rstrip("{").rstrip()))
    return found


def symbols(path: str, text: str) -> list[str]:
    """One line per top-level definition of the file at `path` (relative), in file order."""
    name = PurePosixPath(path)
    suffix = name.suffix
    if suffix in (".py", ".pyi"):
        return _python(text, name.name.startswith("test_") or name.stem.endswith("_test"))
    rule = _LINE_RULES.get(suffix)
    return _lines(text, rule) if rule else []
