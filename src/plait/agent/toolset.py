"""Tools declared once and combined: a `Tool` is a name, an argument model and a handler; a `Toolset` offers tools.

    Toolset.execute(call) ─► offered? ─ no ─► the first refusal that knows the name, else "unknown tool"
                                      └ yes ─► each wrap around it (it sees the call as sent)
                                               ─► arguments parsed: a malformed call is told what is wrong
                                               ─► handler(arguments, call) ─► ignored arguments noted

Toolsets combine by union (`a | b`; two tools of one name are an error) and narrow by `only` and `without`.
A tool marked `last` (finish) stays after every other tool of a union, as the models were always shown it.
Each tool's spec (its JSON schema) is built when the tool is declared, and a toolset's list of specs when the
set is made: an agent asks for its tools on every model call.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Collection, Iterable
from dataclasses import dataclass, replace
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from plait.agent.arguments import argument_problems, ignored_arguments, tool_spec
from plait.agent.journal import ARGUMENT_DEPTH
from plait.messages import ToolCall, ToolSpec

__all__ = ["FINISH", "Around", "Handler", "Refusal", "Run", "Tool", "ToolOutcome", "Toolset", "parse_arguments"]

A = TypeVar("A", bound=BaseModel)

FINISH = "finish"
"""The tool that ends an agent's work."""

_RAW_SHOWN = 200
_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')
_UNPAIRED = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True)
class ToolOutcome:
    """What a tool call produced: the observation for the model, and how the loop should treat it."""

    output: str
    is_error: bool = False
    format_error: bool = False
    """The call itself was malformed: unknown tool, bad JSON, a missing or invalid argument."""
    finished: bool = False
    """The finish tool was called."""
    summary: str = ""


Run = Callable[[ToolCall], Awaitable[ToolOutcome]]
"""Answers one call of a tool."""

Around = Callable[[ToolCall, Run], Awaitable[ToolOutcome]]
"""Sees a call of a wrapped tool as sent, before its arguments are parsed, and decides whether and how it runs."""

Handler = Callable[[A, ToolCall], Awaitable[ToolOutcome]]
"""Answers a call given its parsed arguments (and the call, for its id)."""

Refusal = Callable[[str, tuple[str, ...]], str | None]
"""Why a tool not offered cannot be called, given its name and the names offered; None when it is not one it knows."""


def _shorten(text: str, limit: int = _RAW_SHOWN) -> str:
    return text if len(text) <= limit else text[:limit] + f"... ({len(text) - limit} more characters)"


def _unpaired(what: str, text: str) -> str | None:
    """Says that `what` holds an unpaired surrogate, which no file or command can hold; None when it does not."""
    if (found := _UNPAIRED.search(text)) is None:
        return None
    return f"{what} contains an unpaired surrogate \\u{ord(found.group()):04x}; use valid UTF-8"


def _depth(raw: str) -> int:
    """How deep the brackets of JSON text nest, strings left out; counted without recursion."""
    deepest = depth = 0
    for token in _JSON_TOKEN.findall(raw):
        if token in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif token in "]}":
            depth -= 1
    return deepest


def _unpaired_json(raw: str) -> str | None:
    """What is wrong with the strings of JSON text `raw` that the log set aside for an unpaired surrogate."""
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    for key, item in value.items() if isinstance(value, dict) else ():
        problem = _unpaired("an argument name", key) or _unpaired(
            f"the {_shorten(key, 40)}", json.dumps(item, ensure_ascii=False)
        )
        if problem:
            return problem
    return None


def _not_an_object(call: ToolCall) -> ToolOutcome:
    raw, name = call.raw_arguments, _shorten(call.name, 80)
    if raw.startswith("<the arguments") and raw.endswith(">"):  # not JSON: a provider's note of what was wrong
        why = raw[1:-1] + ". Send the arguments as one valid JSON object, flat and within the cap"
    elif _depth(raw) > ARGUMENT_DEPTH:
        why = f"the arguments are nested more than {ARGUMENT_DEPTH} levels deep; send flat arguments"
    elif (problem := _unpaired_json(raw)) is not None:
        why = problem
    else:
        why = f"the arguments are not a JSON object: {_shorten(raw)!r}. Send the arguments as one valid JSON object"
    return ToolOutcome(f"invalid call of {name}: {why}.", format_error=True)


def parse_arguments(call: ToolCall, args_type: type[A]) -> A | ToolOutcome:
    """The call's arguments as `args_type`, or the format-error observation that says what is wrong with them."""
    if call.arguments is None:
        return _not_an_object(call)
    for key, value in call.arguments.items():
        if isinstance(value, str) and (why := _unpaired(f"the {_shorten(key, 40)}", value)):
            return ToolOutcome(f"invalid call of {_shorten(call.name, 80)}: {why}.", format_error=True)
    try:
        return args_type.model_validate(call.arguments)
    except ValidationError as exc:
        return ToolOutcome(argument_problems(call.name, exc, args_type, call.arguments), format_error=True)


class Tool(Generic[A]):
    """One tool: its name, its arguments (a pydantic model), its handler, and the spec the model is shown."""

    def __init__(
        self,
        name: str,
        args: type[A],
        handler: Handler[A],
        description: str | None = None,
        *,
        spec: ToolSpec | None = None,
        last: bool = False,
    ) -> None:
        """The description defaults to the argument model's docstring; `spec` replaces the one built from them
        (a tool whose schema comes from elsewhere). `last` keeps the tool after the others of any union."""
        self.name, self.args, self.handler, self.last = name, args, handler, last
        self.spec = spec if spec is not None else tool_spec(name, args, description)
        self._answer: Run = self._handled
        self._arounds: tuple[Around, ...] = ()

    @staticmethod
    def raw(spec: ToolSpec, run: Run) -> Tool[BaseModel]:
        """A tool that reads its call's arguments itself (a whole plan, in whatever shape it came): none parsed."""
        tool = Tool(spec.name, BaseModel, _never, spec=spec)
        tool._answer = run
        return tool

    def wrapped(self, around: Around) -> Tool[A]:
        """This tool, its calls going through `around` first (outside any wrap it already has)."""
        tool: Tool[A] = Tool(self.name, self.args, self.handler, spec=self.spec, last=self.last)
        tool._answer, tool._arounds = self._answer, (*self._arounds, around)
        return tool

    async def run(self, call: ToolCall) -> ToolOutcome:
        """Answer one call: through each wrap, then parsed, handled, and its ignored arguments noted."""
        step = self._answer
        for around in self._arounds:
            step = _through(around, step)
        return await step(call)

    async def _handled(self, call: ToolCall) -> ToolOutcome:
        args = parse_arguments(call, self.args)
        if isinstance(args, ToolOutcome):
            return args
        outcome = await self.handler(args, call)
        note = ignored_arguments(call.name, self.args, call.arguments)  # a misspelt `cwd` must not pass unnoticed
        return replace(outcome, output=f"{note}\n{outcome.output}") if note else outcome


async def _never(args: BaseModel, call: ToolCall) -> ToolOutcome:
    raise AssertionError(f"{call.name} reads its own arguments")


def _through(around: Around, step: Run) -> Run:
    async def run(call: ToolCall) -> ToolOutcome:
        return await around(call, step)

    return run


def _unknown(name: str, offered: tuple[str, ...]) -> str:
    return f"unknown tool {_shorten(name, 80)!r}: the tools are {', '.join(offered)}."


class Toolset:
    """Tools offered together: their specs, built once, and the answer to a call of any of them."""

    def __init__(self, tools: Iterable[Tool[Any]] = (), *, refusals: Iterable[Refusal] = ()) -> None:
        """`refusals` say why a name not offered cannot be called (the first that knows it); two tools of one
        name are an error."""
        ordered = sorted(tools, key=lambda t: t.last)
        self._tools: dict[str, Tool[Any]] = {}
        for tool in ordered:
            if tool.name in self._tools:
                raise ValueError(f"two tools are named {tool.name!r}")
            self._tools[tool.name] = tool
        self._refusals = tuple(dict.fromkeys(refusals))
        self._specs = tuple(tool.spec for tool in self._tools.values())
        self._names = tuple(self._tools)

    @property
    def tools(self) -> tuple[Tool[Any], ...]:
        """The tools offered, in the order the model is shown them."""
        return tuple(self._tools.values())

    @property
    def names(self) -> tuple[str, ...]:
        """The names of the tools offered, in order."""
        return self._names

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def specs(self) -> tuple[ToolSpec, ...]:
        """The tools offered, with JSON schemas and descriptions written for a model."""
        return self._specs

    async def execute(self, call: ToolCall) -> ToolOutcome:
        """Run one call; every failure becomes an observation the model can act on, never an exception."""
        tool = self._tools.get(call.name)
        if tool is None:
            return ToolOutcome(self._refused(call.name), format_error=True)
        return await tool.run(call)

    def _refused(self, name: str) -> str:
        for refusal in self._refusals:
            if (why := refusal(name, self._names)) is not None:
                return why
        return _unknown(name, self._names)

    def __or__(self, other: Toolset) -> Toolset:
        """The union: both sets' tools (the `last` ones at the end) and refusals; a name in both is an error."""
        return Toolset((*self.tools, *other.tools), refusals=(*self._refusals, *other._refusals))

    def only(self, names: Collection[str]) -> Toolset:
        """The tools named in `names`, with this set's refusals."""
        return Toolset((t for t in self.tools if t.name in names), refusals=self._refusals)

    def without(self, names: Collection[str], *, because: str | None = None) -> Toolset:
        """The tools not named in `names`; a call of one of those is refused with `because`, when given."""
        kept = (t for t in self.tools if t.name not in names)
        if because is None:
            return Toolset(kept, refusals=self._refusals)
        removed = frozenset(names)

        def refuse(name: str, offered: tuple[str, ...]) -> str | None:
            return because if name in removed else None

        return Toolset(kept, refusals=(refuse, *self._refusals))

    def refusing(self, refusal: Refusal) -> Toolset:
        """These tools, with `refusal` asked first about a call of a tool not offered."""
        return Toolset(self.tools, refusals=(refusal, *self._refusals))

    def wrap(self, around: Around) -> Toolset:
        """These tools, each call of one going through `around` first (a tool added later by union does not)."""
        return Toolset((t.wrapped(around) for t in self.tools), refusals=self._refusals)
