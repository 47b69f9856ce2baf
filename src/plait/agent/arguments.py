"""A tool's arguments: the base of their pydantic models, the limits on prose, what a malformed call is told, and
the JSON schema (`tool_spec`) the model is shown."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from plait.messages import ToolSpec

__all__ = [
    "PATH_LIMIT",
    "SUMMARY_LIMIT",
    "TEXT_LIMIT",
    "ToolArgs",
    "argument_problems",
    "ignored_arguments",
    "tool_spec",
]


PATH_LIMIT = 4096
"""Characters of a path or pattern: a longer one is refused, never echoed back whole."""
SUMMARY_LIMIT = 16_384
"""Characters of a finish summary: a longer one is refused (not cut), so the model can say what matters in less."""
TEXT_LIMIT = 16_384
"""Characters of any other prose argument (a note, a question, an answer, a brief): longer is refused, not cut."""


class ToolArgs(BaseModel):
    """The base of every tool's arguments: strict types, unknown arguments ignored."""

    # Models often add arguments nobody asked for; ignoring them costs nothing, refusing them costs a turn.
    # Strict: "yes" is not a boolean, nor "3" a line number; the model is told so instead of being guessed at.
    model_config = ConfigDict(extra="ignore", strict=True)


_SHOWN = 80
_KINDS = {"int_type": ("an integer", int), "float_type": ("a number", float), "bool_type": ("a boolean", bool)}


def _short(text: str, limit: int = _SHOWN) -> str:
    return text if len(text) <= limit else text[:limit] + f"... ({len(text) - limit} more characters)"


def _takes(name: str, args: type[BaseModel]) -> str:
    """Says which arguments tool `name` takes, the required ones marked."""
    fields = [f"{key} (required)" if field.is_required() else key for key, field in args.model_fields.items()]
    return f"{_short(name)} takes {', '.join(fields) or 'no arguments'}"


def _unknown(args: type[BaseModel] | None, given: Mapping[str, Any] | None) -> list[str]:
    """The arguments of `given` that `args` ignores (it takes none of that name)."""
    if args is None or given is None or args.model_config.get("extra") != "ignore":
        return []
    return [key for key in given if key not in args.model_fields]


def _named(keys: list[str]) -> str:
    shown = ", ".join(repr(_short(key, 40)) for key in keys[:5]) + (
        f" and {len(keys) - 5} more" if len(keys) > 5 else ""
    )
    return f"unknown argument{'s' if len(keys) > 1 else ''} {shown}"


def ignored_arguments(name: str, args: type[BaseModel], given: Mapping[str, Any] | None) -> str:
    """A note for a valid call that also sent arguments the tool does not take (they were ignored); '' if none."""
    unknown = _unknown(args, given)
    return f"({_named(unknown)} ignored: {_takes(name, args)})" if unknown else ""


def _wrong_type(where: str, kind: str, value: object) -> str | None:
    """Says how to send a number or boolean that came as a string; None when that is not what went wrong."""
    if kind not in _KINDS or not isinstance(value, str):
        return None
    what, parse = _KINDS[kind]
    if parse is bool:
        return f"argument '{where}' must be a boolean: send true or false, not the string {_short(repr(value))}"
    try:
        number = parse(value.strip())
    except ValueError:
        return f"argument '{where}' must be {what}, not the string {_short(repr(value))}"
    return f"argument '{where}' must be {what}: send {number}, not the string {_short(repr(value))}"


def argument_problems(
    name: str, exc: ValidationError, args: type[BaseModel] | None = None, given: Mapping[str, Any] | None = None
) -> str:
    """What is wrong with a call's arguments, each problem named, and (given `args`) what the tool takes."""
    problems = []
    for error in exc.errors():
        where = ".".join(str(part) for part in error["loc"]) or "arguments"
        if error["type"] == "missing":
            problems.append(f"the required argument '{where}' is missing")
        elif error["type"] == "string_too_long" and isinstance(error["input"], str):
            limit = (error.get("ctx") or {}).get("max_length", 0)
            problems.append(
                f"argument '{where}' is {len(error['input']):,} characters long, over the limit of {limit:,}: "
                "send a shorter one"
            )
        elif (typed := _wrong_type(where, error["type"], error["input"])) is not None:
            problems.append(typed)
        else:
            problems.append(f"argument '{where}': {error['msg']} (got {_short(repr(error['input']))})")
    if unknown := _unknown(args, given):
        problems.append(_named(unknown))
    takes = f" ({_takes(name, args)})" if args is not None and args.model_fields else ""
    return f"invalid call of {_short(name)}: " + "; ".join(problems) + f"{takes}. Call it again with valid arguments."


def _clean(node: Any) -> Any:
    """Drop pydantic's titles and turn `X | None` into plain `X`, which every provider accepts."""
    if isinstance(node, list):
        return [_clean(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {k: _clean(v) for k, v in node.items() if k != "title"}
    options = out.get("anyOf")
    if isinstance(options, list) and {"type": "null"} in options:
        rest = [o for o in options if o != {"type": "null"}]
        if len(rest) == 1:
            del out["anyOf"]
            out = {**rest[0], **out}
    if out.get("default", 0) is None:
        del out["default"]
    return out


def tool_spec(name: str, args: type[BaseModel], description: str | None = None) -> ToolSpec:
    """The spec of a tool whose arguments are `args`; the description defaults to the model's docstring.

    Built once per name, model and description and shared afterwards (a `ToolSpec` is frozen): agents ask
    for their tools on every model call, and building a JSON schema costs milliseconds each time.
    """
    return _built_spec(name, args, description)


@functools.lru_cache(maxsize=512)
def _built_spec(name: str, args: type[BaseModel], description: str | None) -> ToolSpec:
    schema = _clean(args.model_json_schema())
    schema.pop("description", None)
    doc = description or " ".join((args.__doc__ or "").split())
    return ToolSpec(name=name, description=doc, parameters=schema)
