"""The tools an agent calls, confined to its worktree: read, list, search, edit, write, run, finish."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from plait.agent import _files, _search
from plait.agent._files import ToolFailure
from plait.agent._tool_args import (
    EditFileArgs,
    FinishArgs,
    ListFilesArgs,
    ReadFileArgs,
    RunArgs,
    SearchArgs,
    WriteFileArgs,
    argument_problems,
    ignored_arguments,
    tool_spec,
)
from plait.agent.journal import ARGUMENT_DEPTH
from plait.messages import ToolCall, ToolSpec
from plait.redact import Redactor
from plait.workspace.command import Shell
from plait.workspace.paths import PathEscape, confine

__all__ = ["ToolOutcome", "Toolbox", "argument_problems", "parse_arguments"]

A = TypeVar("A", bound=BaseModel)

_READ_TOOLS: dict[str, type[BaseModel]] = {
    "read_file": ReadFileArgs,
    "list_files": ListFilesArgs,
    "search": SearchArgs,
}
_WRITE_TOOLS: dict[str, type[BaseModel]] = {
    "edit_file": EditFileArgs,
    "write_file": WriteFileArgs,
    "run": RunArgs,
}
_RAW_SHOWN = 200
_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')
_UNPAIRED = re.compile("[\ud800-\udfff]")
_TYPICAL_LINE = 45
"""Characters of a typical numbered line of code, to say in lines what read_file's limit shows."""


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


class Toolbox:
    """The tools of one agent, bound to its worktree `root` and a command runner."""

    def __init__(
        self,
        root: Path,
        runner: Shell,
        *,
        command_timeout: float = 300,
        output_limit: int = 16000,
        read_only: bool = False,
        use_ripgrep: bool | None = None,
    ) -> None:
        """`use_ripgrep` None uses `rg` when it is on PATH; False always searches in Python."""
        self.root = root.absolute()
        self.runner = runner
        self.redact = Redactor()
        self.command_timeout = command_timeout
        self.output_limit = output_limit
        self.read_only = read_only
        self._rg = shutil.which("rg") if use_ripgrep is not False else None
        tools = dict(_READ_TOOLS) if read_only else {**_READ_TOOLS, **_WRITE_TOOLS}
        self._args: dict[str, type[BaseModel]] = {**tools, "finish": FinishArgs}

    def specs(self) -> tuple[ToolSpec, ...]:
        """The tools offered, with JSON schemas and descriptions written for a model."""
        specs = [tool_spec(name, args) for name, args in self._args.items()]
        limits = {
            "run": f" Commands are killed after {self.command_timeout:g} seconds at most.",
            "read_file": f" One call shows at most {self.output_limit:,} characters of numbered lines "
            f"(about {self.output_limit // _TYPICAL_LINE:,} lines of typical code).",
        }
        return tuple(
            s.model_copy(update={"description": s.description + limits[s.name]}) if s.name in limits else s
            for s in specs
        )

    async def execute(self, call: ToolCall) -> ToolOutcome:
        """Run one call; every failure becomes an observation the model can act on, never an exception."""
        args_type = self._args.get(call.name)
        if args_type is None:
            valid = ", ".join(self._args)
            note = " (this agent is read-only)" if call.name in _WRITE_TOOLS else ""
            name = _shorten(call.name, 80)
            return ToolOutcome(f"unknown tool {name!r}{note}: the tools are {valid}.", format_error=True)
        args = parse_arguments(call, args_type)
        if isinstance(args, ToolOutcome):
            return args
        try:
            outcome = await self._dispatch(args)
        except (PathEscape, ToolFailure) as exc:
            outcome = ToolOutcome(str(exc), is_error=True)
        except OSError as exc:
            outcome = ToolOutcome(f"{call.name} failed: {exc.strerror or exc}", is_error=True)
        except UnicodeError as exc:
            outcome = ToolOutcome(f"{call.name} failed: the text cannot be encoded as UTF-8 ({exc})", is_error=True)
        note = ignored_arguments(call.name, args_type, call.arguments)  # a misspelt `cwd` must not pass unnoticed
        return replace(outcome, output=f"{note}\n{outcome.output}") if note else outcome

    def _path(self, path: str) -> Path:
        return confine(self.root, path)

    async def _dispatch(self, args: BaseModel) -> ToolOutcome:
        limit = self.output_limit
        match args:
            case ReadFileArgs():
                target = self._path(args.path)
                text = await asyncio.to_thread(
                    _files.read_file, target, args.path, args.start_line, args.end_line, limit
                )
            case ListFilesArgs():
                base = self._path(args.path)
                text = await asyncio.to_thread(_search.list_files, self.root, base, args.path, args.pattern, limit)
            case SearchArgs():
                base = self._path(args.path)
                text = await asyncio.to_thread(
                    _search.search,
                    self.root,
                    base,
                    args.path,
                    args.pattern,
                    args.glob,
                    args.ignore_case,
                    limit,
                    self._rg,
                )
            case EditFileArgs():
                target = self._path(args.path)
                text = await asyncio.to_thread(
                    _files.edit_file, target, args.path, args.old, args.new, args.replace_all
                )
            case WriteFileArgs():
                text = await asyncio.to_thread(_files.write_file, self._path(args.path), args.path, args.content)
            case RunArgs():
                return await self._run(args)
            case FinishArgs():
                return ToolOutcome("finished.", finished=True, summary=args.summary)
            case _:
                raise TypeError(f"no handler for {type(args).__name__}")
        return ToolOutcome(self.redact(text))

    async def _run(self, args: RunArgs) -> ToolOutcome:
        timeout = min(args.timeout or self.command_timeout, self.command_timeout)
        result = await self.runner.run(args.command, cwd=self.root, timeout=timeout, output_limit=self.output_limit)
        if result.timed_out:
            head = f"timed out after {timeout:g}s, process tree killed"
        elif result.exit_code is None:
            head = "killed by a signal"
        else:
            head = f"exit code {result.exit_code}"
        return ToolOutcome(f"{head}\n{result.output}", is_error=result.timed_out)
