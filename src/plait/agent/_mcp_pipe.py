"""One MCP server of an agent: started by the agent's own command runner, spoken to with the SDK's `ClientSession`.

The SDK's `stdio_client` spawns its server itself, outside any sandbox; here the server is a command of the
agent's runner (its policy, OS layer, environment allow-list, limits, the worktree as its directory), with its
stdin and stdout on two FIFOs in `.plait-mcp/` of the worktree. The messages are the same newline-delimited
JSON-RPC. Cancelling the command (the attempt ends) kills the server's whole process tree: the runner's clean-up.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from plait._mcp_config import McpServer
from plait.workspace import CommandResult
from plait.workspace.command import Shell

if TYPE_CHECKING:  # the SDK is imported when a server starts: a run without MCP servers never pays for it
    import mcp_types
    from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
    from mcp import ClientSession
    from mcp.shared.message import SessionMessage

__all__ = ["DIR", "ServerFailed", "ServerProcess"]

DIR = ".plait-mcp"
_LINE_LIMIT = 8 * 1024 * 1024
_LIFETIME_S = 7 * 24 * 3600.0
"""The runner's timeout for a server: it lives as long as its attempt, which ends it."""


class ServerFailed(Exception):
    """The server did not start, or stopped: what it said, in one line."""


def _files(worktree: Path, name: str) -> tuple[Path, Path, Path]:
    folder = worktree / DIR
    folder.mkdir(exist_ok=True)
    (folder / ".gitignore").write_text("*\n")
    paths = (folder / f"{name}.in", folder / f"{name}.out", folder / f"{name}.env")
    for fifo in paths[:2]:
        fifo.unlink(missing_ok=True)
        os.mkfifo(fifo, 0o600)
    return paths


class ServerProcess:
    """A running server and the session over its pipes; `start` it, `call` its tools, `stop` it (same task)."""

    def __init__(self, name: str, spec: McpServer, runner: Shell, worktree: Path) -> None:
        self.name, self.spec, self.runner, self.worktree = name, spec, runner, worktree
        self.session: ClientSession | None = None
        self._task: asyncio.Task[None] | None = None
        self._ready: asyncio.Future[list[mcp_types.Tool]] | None = None
        self._stop = asyncio.Event()

    async def start(self, timeout: float) -> list[mcp_types.Tool]:  # noqa: ASYNC109
        """Start the server and list its tools; raises `ServerFailed` when it cannot."""
        self._ready = asyncio.get_running_loop().create_future()
        self._task = asyncio.create_task(self._serve(), name=f"mcp-{self.name}")
        try:
            return await asyncio.wait_for(asyncio.shield(self._ready), timeout)
        except TimeoutError as exc:
            raise ServerFailed(f"MCP server {self.name} did not answer within {timeout:g}s") from exc

    async def call(self, tool: str, arguments: dict[str, Any], timeout: float) -> mcp_types.CallToolResult:  # noqa: ASYNC109
        """Call `tool`; raises `ServerFailed` when the server is gone or silent for `timeout` seconds."""
        if self.session is None or self._task is None or self._task.done():
            raise ServerFailed(f"MCP server {self.name} is not running")
        calling = asyncio.ensure_future(self.session.call_tool(tool, arguments))
        done, _ = await asyncio.wait({calling, self._task}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        if calling in done:
            return calling.result()
        calling.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await calling
        if done:
            raise ServerFailed(f"MCP server {self.name} stopped during the call")
        raise ServerFailed(f"MCP server {self.name} did not answer within {timeout:g}s")

    async def stop(self) -> None:
        """Stop the session and kill the server's process tree."""
        self._stop.set()
        if self._task is not None:
            with contextlib.suppress(asyncio.CancelledError, ServerFailed):
                await self._task
        for path in (self.worktree / DIR).glob(f"{self.name}.*"):
            path.unlink(missing_ok=True)

    def _command(self, env_file: Path) -> str:
        words = " ".join(shlex.quote(w) for w in self.spec.command)
        where = f"{DIR}/{self.name}"
        prefix = ""
        if self.spec.env:
            env_file.write_text("".join(f"export {k}={shlex.quote(v)}\n" for k, v in self.spec.env.items()))
            env_file.chmod(0o600)
            prefix = f". {where}.env && "
        return f"{prefix}exec {words} < {where}.in > {where}.out"

    async def _serve(self) -> None:
        fifo_in, fifo_out, env_file = _files(self.worktree, self.name)
        # plait holds both ends open read-write: neither side's open waits, and the server's death is seen as its
        # command ending, not as an end of file
        fd_in = os.open(fifo_in, os.O_RDWR | os.O_NONBLOCK)
        fd_out = os.open(fifo_out, os.O_RDWR | os.O_NONBLOCK)
        command = self._command(env_file)
        running = asyncio.ensure_future(
            self.runner.run(command, cwd=self.worktree, timeout=_LIFETIME_S, output_limit=4000)
        )
        try:
            await self._talk(fd_in, fd_out, running)
        except Exception as exc:  # whatever broke the session ends this server; the agent is told why
            self._fail(ServerFailed(f"MCP server {self.name} failed: {type(exc).__name__}: {exc}"))
        finally:
            running.cancel()  # the runner kills the process tree
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await running
            os.close(fd_in)
            os.close(fd_out)

    def _fail(self, exc: ServerFailed) -> None:
        if self._ready is not None and not self._ready.done():
            self._ready.set_exception(exc)

    async def _talk(self, fd_in: int, fd_out: int, running: asyncio.Future[CommandResult]) -> None:
        from mcp import ClientSession
        from mcp.shared.message import SessionMessage

        to_session, from_server = anyio.create_memory_object_stream[SessionMessage | Exception](16)
        to_server, from_session = anyio.create_memory_object_stream[SessionMessage](16)
        async with anyio.create_task_group() as group:
            group.start_soon(_read, fd_out, to_session)
            group.start_soon(_write, fd_in, from_session)
            async with ClientSession(from_server, to_server) as session:
                starting = asyncio.ensure_future(_opened(session))
                first: set[asyncio.Future[Any]] = {starting, running}
                done, _ = await asyncio.wait(first, return_when=asyncio.FIRST_COMPLETED)
                if starting not in done:
                    starting.cancel()
                    self._fail(ServerFailed(_ended(self.name, running.result())))
                    group.cancel_scope.cancel()
                    return
                self.session = session
                assert self._ready is not None
                self._ready.set_result(starting.result())
                stopping = asyncio.ensure_future(self._stop.wait())
                until: set[asyncio.Future[Any]] = {stopping, running}
                await asyncio.wait(until, return_when=asyncio.FIRST_COMPLETED)
                stopping.cancel()
            group.cancel_scope.cancel()


async def _opened(session: ClientSession) -> list[mcp_types.Tool]:
    await session.initialize()
    return list((await session.list_tools()).tools)


def _ended(name: str, result: CommandResult) -> str:
    said = " ".join(result.output.split())[-300:]
    return f"MCP server {name} ended before it answered (exit code {result.exit_code}): {said or 'no output'}"


async def _read(fd: int, out: MemoryObjectSendStream[SessionMessage | Exception]) -> None:
    import mcp_types
    from mcp.shared.message import SessionMessage

    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=_LINE_LIMIT)
    transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(os.dup(fd), "rb", 0)
    )
    try:
        async with out:
            while line := await reader.readline():
                if not line.strip():
                    continue
                try:
                    message: SessionMessage | Exception = SessionMessage(
                        mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                    )
                except ValueError as exc:
                    message = exc
                await out.send(message)
    finally:
        transport.close()


async def _write(fd: int, messages: MemoryObjectReceiveStream[SessionMessage]) -> None:
    # not a write-pipe transport: on a FIFO held read-write it would read back what it wrote, as if closed
    async with messages:
        async for message in messages:
            data = (message.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n").encode()
            while data:
                try:
                    data = data[os.write(fd, data) :]
                except BlockingIOError:
                    await _writable(fd)


async def _writable(fd: int) -> None:
    loop = asyncio.get_running_loop()
    ready = loop.create_future()
    loop.add_writer(fd, ready.set_result, None)
    try:
        await ready
    finally:
        loop.remove_writer(fd)
