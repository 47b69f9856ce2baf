"""Does a file's text parse? Python compiles, JSON/TOML/YAML load; and are conflict markers left in it?"""

from __future__ import annotations

import functools
import json
import re
import tomllib
import warnings
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # yaml is imported when a YAML file is checked
    import yaml

__all__ = ["CHECKED_SUFFIXES", "conflict_markers", "syntax_error"]

CHECKED_SUFFIXES = frozenset({".py", ".pyi", ".json", ".toml", ".yaml", ".yml"})
"""The kinds of file whose syntax is checked; others pass."""

_JSON_WITH_COMMENTS = re.compile(r"(^|/)(tsconfig[^/]*|jsconfig[^/]*|\.vscode/[^/]*|devcontainer)\.json$")
_TEMPLATE = ("{{", "{%")
_MARKER = re.compile(r"^(<{7}|>{7})(?: |$)", re.MULTILINE)


@functools.cache
def _any_tag_loader() -> type[yaml.SafeLoader]:
    """Safe YAML that reads application tags (`!Ref`, `!include`...) as plain data instead of failing."""
    import yaml

    def plain(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> Any:
        if isinstance(node, yaml.MappingNode):
            return loader.construct_mapping(node)
        if isinstance(node, yaml.SequenceNode):
            return loader.construct_sequence(node)
        return loader.construct_scalar(node)  # type: ignore[arg-type]

    class AnyTagLoader(yaml.SafeLoader):
        pass

    AnyTagLoader.add_multi_constructor("", plain)
    return AnyTagLoader


def _python(path: str, text: str) -> str | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarning for odd escapes is not an error
            compile(text, path, "exec", dont_inherit=True)
    except SyntaxError as exc:
        return f"{path}:{exc.lineno or 0}: {exc.msg}"
    except ValueError as exc:  # source with null bytes
        return f"{path}: {exc}"
    return None


def syntax_error(path: str, text: str) -> str | None:
    """A one-line description of why `text` (the content of `path`) does not parse, or None when it does.

    Files of kinds not in `CHECKED_SUFFIXES`, JSON-with-comments files and templated YAML are not checked.
    """
    suffix = PurePosixPath(path).suffix.lower()
    if suffix in (".py", ".pyi"):
        return _python(path, text)
    if suffix in (".yaml", ".yml"):
        return None if any(t in text for t in _TEMPLATE) else _yaml_error(path, text)
    try:
        if suffix == ".json" and not _JSON_WITH_COMMENTS.search(path):
            json.loads(text)
        elif suffix == ".toml":
            tomllib.loads(text)
    except json.JSONDecodeError as exc:
        return f"{path}:{exc.lineno}: invalid JSON: {exc.msg}"
    except tomllib.TOMLDecodeError as exc:
        return f"{path}: invalid TOML: {exc}"
    return None


def _yaml_error(path: str, text: str) -> str | None:
    import yaml

    try:
        for _ in yaml.load_all(text, Loader=_any_tag_loader()):  # a safe loader, with lenient tags
            pass
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        return f"{path}{line}: invalid YAML: {problem}"
    return None


def conflict_markers(text: str, *originals: str | None) -> int:
    """How many conflict-marker lines `text` has beyond those in the most marked of `originals` (0: none new)."""
    found = len(_MARKER.findall(text))
    if not found:
        return 0
    already = max((len(_MARKER.findall(o)) for o in originals if o), default=0)
    return max(found - already, 0)
