"""The tools an agent calls, confined to its worktree: read, list, search, edit, write, run, finish."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from pydantic import Field

from plait.agent import _files, _search
from plait.agent._files import ToolFailure
from plait.agent.arguments import PATH_LIMIT, SUMMARY_LIMIT, ToolArgs
from plait.agent.toolset import FINISH, Handler, Tool, ToolOutcome, Toolset
from plait.messages import ToolCall
from plait.redact import Redactor
from plait.workspace.command import Shell
from plait.workspace.paths import PathEscape, confine

__all__ = [
    "READ_TOOLS",
    "EditFileArgs",
    "FinishArgs",
    "ListFilesArgs",
    "ReadFileArgs",
    "RunArgs",
    "SearchArgs",
    "Toolbox",
    "WriteFileArgs",
]

A = TypeVar("A", bound=ToolArgs)

READ_TOOLS = ("read_file", "list_files", "search")
"""The tools that only read the worktree."""
_WRITE_TOOLS = ("edit_file", "write_file", "run")
_TYPICAL_LINE = 45
"""Characters of a typical numbered line of code, to say in lines what read_file's limit shows."""


class ReadFileArgs(ToolArgs):
    """Read a text file, with line numbers. Long files are cut; read further with start_line and end_line."""

    path: str = Field(max_length=PATH_LIMIT, description="File path, relative to the repository root.")
    start_line: int | None = Field(None, ge=1, description="First line to show (1-based). Default: 1.")
    end_line: int | None = Field(None, ge=1, description="Last line to show, inclusive. Default: the end.")


class ListFilesArgs(ToolArgs):
    """List files (not directories) matching a glob, sorted, leaving out files git ignores."""

    pattern: str = Field(
        "**/*",
        max_length=PATH_LIMIT,
        description="Glob such as 'src/**/*.py'; '*' stays within a directory, '**' crosses them. "
        "A pattern without '/' matches file names at any depth, so '*.py' finds every Python file.",
    )
    path: str = Field(".", max_length=PATH_LIMIT, description="Directory to list, relative to the repository root.")


class SearchArgs(ToolArgs):
    """Search file contents for a regular expression; prints matching lines as `path:line: text`."""

    pattern: str = Field(
        max_length=PATH_LIMIT,
        description="Regular expression, such as 'def \\w+_total\\(' (escape literal parentheses).",
    )
    path: str = Field(
        ".", max_length=PATH_LIMIT, description="File or directory to search in, relative to the repository root."
    )
    glob: str | None = Field(
        None, max_length=PATH_LIMIT, description="Only search files matching this glob, such as '*.py'."
    )
    ignore_case: bool = Field(False, description="Match regardless of case.")


class EditFileArgs(ToolArgs):
    """Replace an exact piece of text in a file with new text.

    `old` must match the file exactly, whitespace and indentation included, and occur once (include a few
    surrounding lines to make it unique), unless replace_all is true. Read the file first.
    """

    path: str = Field(max_length=PATH_LIMIT, description="File path, relative to the repository root.")
    old: str = Field(description="The exact text to replace.")
    new: str = Field(description="The text to put in its place.")
    replace_all: bool = Field(False, description="Replace every occurrence instead of requiring exactly one.")


class WriteFileArgs(ToolArgs):
    """Create a file, or overwrite it completely, with the given content. Parent directories are created."""

    path: str = Field(max_length=PATH_LIMIT, description="File path, relative to the repository root.")
    content: str = Field(description="The complete new content of the file.")


class RunArgs(ToolArgs):
    """Run a shell command with bash in the repository root and show its exit code and output.

    Use it to run tests, linters and builds. There is no input and no terminal: do not start editors or
    interactive programs. Background processes are killed when the command ends. Long output is cut in the middle.
    """

    command: str = Field(min_length=1, description="The bash command line, such as 'pytest -q tests/test_x.py'.")
    timeout: float | None = Field(None, gt=0, description="Seconds before the command is killed.")


class FinishArgs(ToolArgs):
    """Declare the task done, or impossible, and stop. Call it once, as your last action."""

    summary: str = Field(
        min_length=1,
        max_length=SUMMARY_LIMIT,
        description="What you changed and why, or why the task cannot be done.",
    )


def _doc(args: type[ToolArgs]) -> str:
    return " ".join((args.__doc__ or "").split())


class Toolbox(Toolset):
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
        shown = f"{output_limit:,} characters of numbered lines (about {output_limit // _TYPICAL_LINE:,} lines"
        tools: list[Tool[Any]] = [
            self._tool("read_file", ReadFileArgs, self._read, f" One call shows at most {shown} of typical code)."),
            self._tool("list_files", ListFilesArgs, self._list),
            self._tool("search", SearchArgs, self._search),
        ]
        if not read_only:
            tools += [
                self._tool("edit_file", EditFileArgs, self._edit),
                self._tool("write_file", WriteFileArgs, self._write),
                self._tool(
                    "run", RunArgs, self._run, f" Commands are killed after {command_timeout:g} seconds at most."
                ),
            ]
        tools.append(Tool(FINISH, FinishArgs, _finish, last=True))
        super().__init__(tools, refusals=(_read_only,) if read_only else ())

    def _tool(self, name: str, args: type[A], handler: Handler[A], limit: str = "") -> Tool[A]:
        """A tool of the worktree: a failure to read, write or run is an observation the model can act on."""
        return Tool(name, args, _observed(handler), _doc(args) + limit if limit else None)

    def _path(self, path: str) -> Path:
        return confine(self.root, path)

    async def _read(self, args: ReadFileArgs, call: ToolCall) -> ToolOutcome:
        target = self._path(args.path)
        text = await asyncio.to_thread(
            _files.read_file, target, args.path, args.start_line, args.end_line, self.output_limit
        )
        return ToolOutcome(self.redact(text))

    async def _list(self, args: ListFilesArgs, call: ToolCall) -> ToolOutcome:
        base = self._path(args.path)
        text = await asyncio.to_thread(_search.list_files, self.root, base, args.path, args.pattern, self.output_limit)
        return ToolOutcome(self.redact(text))

    async def _search(self, args: SearchArgs, call: ToolCall) -> ToolOutcome:
        base = self._path(args.path)
        text = await asyncio.to_thread(
            _search.search,
            self.root,
            base,
            args.path,
            args.pattern,
            args.glob,
            args.ignore_case,
            self.output_limit,
            self._rg,
        )
        return ToolOutcome(self.redact(text))

    async def _edit(self, args: EditFileArgs, call: ToolCall) -> ToolOutcome:
        target = self._path(args.path)
        text = await asyncio.to_thread(_files.edit_file, target, args.path, args.old, args.new, args.replace_all)
        return ToolOutcome(self.redact(text))

    async def _write(self, args: WriteFileArgs, call: ToolCall) -> ToolOutcome:
        text = await asyncio.to_thread(_files.write_file, self._path(args.path), args.path, args.content)
        return ToolOutcome(self.redact(text))

    async def _run(self, args: RunArgs, call: ToolCall) -> ToolOutcome:
        timeout = min(args.timeout or self.command_timeout, self.command_timeout)
        result = await self.runner.run(args.command, cwd=self.root, timeout=timeout, output_limit=self.output_limit)
        if result.timed_out:
            head = f"timed out after {timeout:g}s, process tree killed"
        elif result.exit_code is None:
            head = "killed by a signal"
        else:
            head = f"exit code {result.exit_code}"
        return ToolOutcome(f"{head}\n{result.output}", is_error=result.timed_out)


async def _finish(args: FinishArgs, call: ToolCall) -> ToolOutcome:
    return ToolOutcome("finished.", finished=True, summary=args.summary)


def _read_only(name: str, offered: tuple[str, ...]) -> str | None:
    if name not in _WRITE_TOOLS:
        return None
    return f"unknown tool {name!r} (this agent is read-only): the tools are {', '.join(offered)}."


def _observed(handler: Handler[A]) -> Callable[[A, ToolCall], Awaitable[ToolOutcome]]:
    """`handler`, with a path outside the worktree, a failed read or write, or text UTF-8 cannot hold, told."""

    async def run(args: A, call: ToolCall) -> ToolOutcome:
        try:
            return await handler(args, call)
        except (PathEscape, ToolFailure) as exc:
            return ToolOutcome(str(exc), is_error=True)
        except OSError as exc:
            return ToolOutcome(f"{call.name} failed: {exc.strerror or exc}", is_error=True)
        except UnicodeError as exc:
            return ToolOutcome(f"{call.name} failed: the text cannot be encoded as UTF-8 ({exc})", is_error=True)

    return run
