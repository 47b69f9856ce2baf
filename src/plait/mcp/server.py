"""The MCP server (the official SDK's `MCPServer`): plait's runs as tools and resources for another agent.

Each tool is a function of `Desk` or `Actions` wrapped by `_guarded`: its result leaves through `Desk.safe`
(redacted, control characters visible), and a `PlaitError` is a tool error (`isError`) with plait's one-line
message, never a traceback.
"""

from __future__ import annotations

import functools
import json
import socket
import sys
from collections.abc import Callable
from typing import Annotated, Any, Literal, ParamSpec

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from plait import __version__
from plait.errors import PlaitError, UsageError
from plait.mcp._actions import Actions
from plait.mcp._desk import Desk
from plait.workspace import Repo

__all__ = ["build_server", "serve_http", "serve_stdio"]

P = ParamSpec("P")

RunRef = Annotated[str, Field(description="A run id, a unique prefix of one, or `last`.")]
Wait = Annotated[float, Field(ge=0, le=600, description="Seconds to wait for it to end before returning (0: at once).")]
Model = Annotated[
    str | None,
    Field(description="openai:NAME, anthropic:NAME, openai-compatible:NAME@URL (this machine only) or scripted:FILE."),
]

_INSTRUCTIONS = """\
plait runs coding agents in parallel git worktrees of this repository and integrates their work on a tested branch.
Start a change with start_run (it returns at once with a run id), follow it with run_status (wait_s waits for
its end) and run_events (pass next_after back as after), read a task's work with task_diff, and bring the
verified result into the current branch with apply (try dry_run first). ask runs read-only investigators and
returns one answer. Runs cost model calls; the user's checkout is not changed until apply."""


def _failed(desk: Desk, message: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=str(desk.safe(message)))], is_error=True)


def _guarded(desk: Desk, fn: Callable[P, Any]) -> Callable[P, Any]:
    """`fn` whose results are made safe to hand out and whose plait errors are tool errors with their own line."""

    @functools.wraps(fn)
    def tool(*args: P.args, **kwargs: P.kwargs) -> Any:
        try:
            return desk.safe(fn(*args, **kwargs))
        except PlaitError as exc:
            return _failed(desk, str(exc))
        except OSError as exc:
            return _failed(desk, f"{exc.strerror or exc} ({exc.filename})" if exc.filename else str(exc))

    return tool


def _resource(desk: Desk, fn: Callable[P, str]) -> Callable[P, str]:
    @functools.wraps(fn)
    def read(*args: P.args, **kwargs: P.kwargs) -> str:
        try:
            return str(desk.safe(fn(*args, **kwargs)))
        except UsageError as exc:
            raise ResourceNotFoundError(desk.safe(str(exc))) from None
        except PlaitError as exc:
            raise ResourceError(desk.safe(str(exc))) from None

    return read


def build_server(repo: Repo) -> MCPServer:
    """The MCP server of `repo`'s runs."""
    desk = Desk(repo)
    act = Actions(desk)
    server: MCPServer = MCPServer("plait", version=__version__, instructions=_INSTRUCTIONS, log_level="WARNING")
    reads = ToolAnnotations(read_only_hint=True, open_world_hint=False)
    starts = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=True)

    def start_run(
        task: Annotated[str, Field(description="What the agents should do, as you would tell a colleague.")],
        mode: Annotated[
            Literal["single", "parallel"] | None,
            Field(description="single: one agent, no planning; parallel (default): plan, then split if it helps."),
        ] = None,
        plan_file: Annotated[str | None, Field(description="A plan (YAML) in the repository to run.")] = None,
        model: Model = None,
    ) -> dict[str, Any]:
        """Start a plait run in the background; returns at once with its run id."""
        return act.start_run(task, mode, plan_file, model)

    def run_status(
        run_id: RunRef,
        wait_s: Annotated[
            float, Field(ge=0, le=600, description="Wait up to this long for the run's process to end (0: at once).")
        ] = 0,
    ) -> dict[str, Any]:
        """A run's state: status, live, its agents (state, attempts, merge), merges, gate verdicts, cost so far."""
        return desk.status(run_id, wait_s)

    def run_events(
        run_id: RunRef,
        after: Annotated[int, Field(ge=0, description="Only events after this sequence number.")] = 0,
        limit: Annotated[int, Field(ge=1, le=1000, description="At most this many events.")] = 100,
        agent: Annotated[str | None, Field(description="Only this agent's events (a task id, planner).")] = None,
        max_chars: Annotated[int, Field(ge=100, le=100_000, description="Longer strings are cut.")] = 2000,
    ) -> dict[str, Any]:
        """A run's events in order, after a sequence number; pass next_after back to follow it."""
        return desk.events(run_id, after=after, limit=limit, agent=agent, max_chars=max_chars)

    def task_diff(
        run_id: RunRef,
        task: Annotated[str | None, Field(description="A task id; without it, the run's integrated result.")] = None,
        max_chars: Annotated[int, Field(ge=1000, le=2_000_000)] = 200_000,
    ) -> dict[str, Any]:
        """The diff of one task's work (from the commit its attempt started on), or of the run's result."""
        return desk.diff(run_id, task, max_chars=max_chars)

    def integrate(
        branches: Annotated[list[str], Field(min_length=1, max_length=50, description="Branches, in order.")],
        onto: Annotated[str, Field(description="Where the integration branch starts.")] = "HEAD",
        no_llm: Annotated[bool, Field(description="Only the merge rungs that need no model.")] = False,
        model: Model = None,
        wait_s: Wait = 0,
    ) -> dict[str, Any]:
        """`plait integrate`: merge branches onto a new integration branch, gated by the tests; in the background."""
        return act.integrate(branches, onto, no_llm, model, wait_s)

    def apply(
        run_id: RunRef,
        dry_run: Annotated[bool, Field(description="Say what would happen; change nothing.")] = False,
    ) -> dict[str, Any]:
        """`plait apply`: bring a finished run's verified result into the current branch (fast-forward or merge)."""
        return act.apply(run_id, dry_run)

    def ask(
        question: Annotated[str, Field(description="What to find out about the code.")],
        model: Model = None,
        follow_up: Annotated[str | None, Field(description="An earlier ask's run id, to ask its team again.")] = None,
        wait_s: Wait = 0,
    ) -> dict[str, Any]:
        """`plait ask`: read-only investigators, one per area, and one combined answer (costs model calls)."""
        return act.ask(question, model, follow_up, wait_s)

    def list_runs() -> dict[str, Any]:
        """The runs of this repository, oldest first."""
        return {"runs": desk.list_runs()}

    for fn, hints in (
        (start_run, starts),
        (run_status, reads),
        (run_events, reads),
        (task_diff, reads),
        (integrate, starts),
        (apply, ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False)),
        (ask, starts),
        (list_runs, reads),
    ):
        server.add_tool(_guarded(desk, fn), annotations=hints, structured_output=True)

    def report(run_id: str) -> str:
        return desk.report_text(run_id)

    def report_html(run_id: str) -> str:
        return desk.report_html(run_id)

    # made safe before they are dumped: in JSON an ESC is `\u001b`, which the reader's parser turns back into one
    def summary(run_id: str) -> str:
        return json.dumps(desk.safe(desk.status(run_id)), indent=2)

    def runs() -> str:
        return json.dumps(desk.safe(desk.list_runs()), indent=2)

    uri = "plait://runs/{run_id}"
    server.resource(uri + "/report", name="report", description="A run's report as text.", mime_type="text/plain")(
        _resource(desk, report)
    )
    server.resource(uri + "/report.html", name="report.html", description="The HTML report.", mime_type="text/html")(
        _resource(desk, report_html)
    )
    server.resource(uri + "/summary", name="summary", description="run_status as JSON.", mime_type="application/json")(
        _resource(desk, summary)
    )
    server.resource("plait://runs", name="runs", description="The runs, oldest first.", mime_type="application/json")(
        _resource(desk, runs)
    )
    return server


def serve_stdio(repo: Repo) -> None:
    build_server(repo).run("stdio")


def serve_http(repo: Repo, host: str, port: int, allowed_hosts: list[str]) -> None:
    """Serve streamable HTTP at http://HOST:PORT/mcp; only requests naming an allowed Host (or Origin) are served,
    which keeps a web page from reaching the server through DNS rebinding."""
    import anyio
    import uvicorn

    hosts = ["127.0.0.1:*", "localhost:*", "[::1]:*", *(f"{h}:*" for h in allowed_hosts)]
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=hosts,
        allowed_origins=[f"http://{h}" for h in hosts],
    )
    app = build_server(repo).streamable_http_app(transport_security=security, host=host)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(128)  # connections wait from now on, so the address printed below is good at once
    except OSError as exc:
        sock.close()
        raise UsageError(f"cannot listen on {host}:{port} ({exc.strerror}): choose another --port") from None
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    print(f"plait mcp: serving {repo.root} at http://{shown}:{bound}/mcp", file=sys.stderr, flush=True)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    anyio.run(lambda: server.serve(sockets=[sock]))
