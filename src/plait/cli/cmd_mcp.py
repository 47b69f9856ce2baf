"""`plait mcp`: plait as an MCP server, so that another agent can start, follow and apply plait's runs."""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Annotated, Literal

import typer

from plait.cli._options import RepoOpt
from plait.errors import UsageError
from plait.workspace import Repo

__all__ = ["mcp"]


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def mcp(
    transport: Annotated[
        Literal["stdio", "http"], typer.Option("--transport", "-t", help="stdio, or streamable HTTP at /mcp.")
    ] = "stdio",
    host: Annotated[str, typer.Option("--host", help="Where the HTTP transport listens.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="The HTTP port; 0 picks a free one.")] = 8848,
    allow_remote: Annotated[
        bool,
        typer.Option(
            "--allow-remote",
            help="Listen on a --host that is not this machine's loopback. The server has no authentication: "
            "whoever reaches it runs agents with your API keys.",
        ),
    ] = False,
    allowed_hosts: Annotated[
        list[str] | None,
        typer.Option("--allowed-host", help="A Host header (besides localhost) the HTTP server answers; repeatable."),
    ] = None,
    repo_path: RepoOpt = Path(),
) -> None:
    """Serve this repository's runs to another agent over MCP (stdio or HTTP).

    Claude Code, Codex, Cursor or any MCP client can then delegate to
    plait: start_run (returns at once with the run id), run_status,
    run_events, task_diff, integrate, apply (with dry_run), ask and
    list_runs; the report of a run is the resource
    plait://runs/RUN/report (also report.html and summary).

    A run goes on in the background as its own `plait run` process and
    keeps going when the client leaves. The HTTP transport listens on
    127.0.0.1 and answers only requests addressed to localhost.

    [bold]Examples[/]

      claude mcp add plait -- plait mcp

      plait mcp --transport http --port 8848
    """
    repo = Repo.discover(repo_path)
    if transport == "http" and not _loopback(host) and not allow_remote:
        raise UsageError(
            f"--host {host} is not this machine's loopback: anyone who reaches it could run agents with your keys; "
            "add --allow-remote if that is what you want"
        )
    from plait.mcp.server import serve_http, serve_stdio

    if transport == "stdio":
        serve_stdio(repo)
    else:
        serve_http(repo, host, port, [*(allowed_hosts or []), *([host] if not _loopback(host) else [])])
