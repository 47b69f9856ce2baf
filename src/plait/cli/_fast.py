"""The commands started without typer: `--version`, the top-level help, the read-only `runs`, `status`, `show`,
`log` and `cost`, `integrate`, and `resume` (a run goes on from its log), with plain options.

Importing typer (which builds its parameters with pydantic) costs more than most of these commands do. Their few
options are read here by hand, as typer reads them (an option's value after it or after `=`, options and
arguments in any order, the last of a repeated option kept); anything else, such as `--help` of a command, an
unknown or combined option, `--` or a value typer would refuse, is left to typer, which then says what it says.
A test runs both ways and compares what they print.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, NamedTuple

__all__ = ["start"]


class _Spec(NamedTuple):
    """A command's arguments (in order, how many are required) and options (each name to its parameter)."""

    arguments: tuple[str, ...]
    required: int
    flags: dict[str, str]
    values: dict[str, str]
    many: bool = False
    """Whether the last argument takes all the arguments left, as a list (`BRANCH...`)."""


_REPO = {"--repo": "repo_path", "-C": "repo_path"}
_SPECS = {
    "runs": _Spec((), 0, {"--json": "as_json"}, _REPO),
    "status": _Spec(
        ("run_ref",),
        0,
        {"--json": "as_json", "--plain": "plain", "--follow": "follow", "-f": "follow"},
        {**_REPO, "--interval": "interval"},
    ),
    "show": _Spec(("run_ref", "task"), 1, {"--json": "as_json", "--full": "full", "--no-pager": "no_pager"}, _REPO),
    "log": _Spec(
        ("run_ref",),
        1,
        {"--json": "as_json", "--follow": "follow", "-f": "follow"},
        {**_REPO, "--agent": "agent", "--interval": "interval"},
    ),
    "cost": _Spec(("run_ref",), 1, {"--json": "as_json"}, _REPO),
    "resume": _Spec(("run_ref",), 1, {"--json": "as_json", "--quiet": "quiet", "-q": "quiet"}, _REPO),
    "integrate": _Spec(
        ("branches",),
        1,
        {"--no-llm": "no_llm", "--no-verify": "no_verify", "--json": "as_json"},
        {**_REPO, "--onto": "onto", "--model": "model", "-m": "model", "--verify": "verify"},
        many=True,
    ),
}
_MIN_INTERVAL = 0.05


def _parse(spec: _Spec, args: list[str]) -> dict[str, Any] | None:
    """The parameters `args` give, or None when typer has to read them."""
    given: dict[str, Any] = {}
    arguments: list[str] = []
    rest = list(args)
    while rest:
        token = rest.pop(0)
        name, eq, value = token.partition("=") if token.startswith("--") else (token, "", "")
        if name in spec.values:
            if not eq:
                if not rest or rest[0].startswith("-"):
                    return None
                value = rest.pop(0)
            given[spec.values[name]] = value
        elif token in spec.flags:
            given[spec.flags[token]] = True
        elif token.startswith("-") or (len(arguments) == len(spec.arguments) and not spec.many):
            return None
        else:
            arguments.append(token)
    if len(arguments) < spec.required:
        return None
    if spec.many:
        last = len(spec.arguments) - 1
        given[spec.arguments[last]], arguments = arguments[last:], arguments[:last]
    given |= dict(zip(spec.arguments, arguments, strict=False))
    if "interval" in given:
        try:
            given["interval"] = float(given["interval"])
        except ValueError:
            return None
        if given["interval"] < _MIN_INTERVAL:
            return None
    if "repo_path" in given:
        given["repo_path"] = Path(given["repo_path"])
    return given


def _run(command: str, given: dict[str, Any]) -> None:
    repo_path: Path = given.get("repo_path", Path())
    as_json = bool(given.get("as_json"))
    if command == "runs":
        from plait.ui._runs import list_runs

        list_runs(repo_path, as_json)
        return
    if command == "show":
        from plait.ui._runs import show_run

        full, no_pager = bool(given.get("full")), bool(given.get("no_pager"))
        if not as_json:
            from plait.ui._fast_view import show_transcript

            if show_transcript(repo_path, given["run_ref"], given.get("task"), full=full, no_pager=no_pager):
                return  # else read the full way
        show_run(given["run_ref"], given.get("task"), repo_path, full=full, no_pager=no_pager, as_json=as_json)
        return
    interval, follow = given.get("interval", 0.25), bool(given.get("follow"))
    if command == "log" and not (as_json or follow):
        from plait.ui._fast_log import read_log

        if read_log(repo_path, given["run_ref"], given.get("agent")):  # else read the full way
            return
    if command == "status" and not follow and (as_json or given.get("plain") or not sys.stdout.isatty()):
        from plait.ui._fast_view import show_status

        if show_status(repo_path, given.get("run_ref") or "last", as_json=as_json):  # else read the full way
            return
    if command == "cost":
        from plait.ui._fast_view import show_cost

        if show_cost(repo_path, given["run_ref"], as_json=as_json):  # else read the full way
            return
    from plait.ui import _view

    if command == "status":
        from plait.cli._steering import LoggedSteering

        plain, steering = bool(given.get("plain")), LoggedSteering()
        _view.run_status(
            given.get("run_ref"),
            repo_path,
            as_json=as_json,
            plain=plain,
            follow=follow,
            interval=interval,
            steering=steering,
        )
    elif command == "log":
        agent = given.get("agent")
        _view.run_log(given["run_ref"], repo_path, as_json=as_json, follow=follow, agent=agent, interval=interval)
    else:
        _view.run_cost(given["run_ref"], repo_path, as_json=as_json)


def _version() -> None:
    from plait import __version__

    line = f"plait {__version__}"
    if sys.stdout.isatty() or any(os.environ.get(v) for v in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE")):
        from plait.ui._reading import out

        out.print(line)  # highlighted as rich highlights it
        return
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def _root_help() -> None:
    from plait.cli._commands import COMMANDS
    from plait.cli._root_help import ROOT_HELP, ROOT_OPTIONS, ROOT_USAGE, render_root_help
    from plait.ui._reading import console

    commands = {name: entry.help for name, entry in COMMANDS.items()}
    render_root_help(console(), ROOT_USAGE, ROOT_HELP, ROOT_OPTIONS, commands)


def start(argv: list[str] | None) -> int | None:
    """Run `argv` (the process's arguments when None) if it is one of the commands read here and return its exit
    code, else None (nothing was done): typer reads it then."""
    if "_PLAIT_COMPLETE" in os.environ:  # the shell asks typer to complete a word
        return None
    args = sys.argv[1:] if argv is None else list(argv)
    if args in ([], ["--help"], ["-h"]):
        _root_help()
        if not args:
            return 2  # typer shows the help for no command too, as a usage error
        sys.stdout.write("\n")  # click echoes the help typer drew, itself nothing, and a newline
        return 0
    if args == ["--version"]:
        _version()
        return 0
    directory = None
    if len(args) > 1 and args[0] == "-C" and not args[1].startswith("-"):
        directory, args = Path(args[1]), args[2:]
    spec = _SPECS.get(args[0]) if args else None
    given = _parse(spec, args[1:]) if spec is not None else None
    if given is None:
        return None
    if directory is not None:
        from plait.errors import EnvironmentProblem

        try:
            os.chdir(directory)
        except OSError as exc:
            raise EnvironmentProblem(f"cannot work in {directory} (-C): {exc.strerror}") from None
    if args[0] == "resume":  # a run goes on: typer and the merge machinery are not imported before its first call
        from plait.cli._starting import resume_run

        return resume_run(**given)
    if args[0] == "integrate":
        from plait.cli._integrate import integrate_branches

        return integrate_branches(**given)
    _run(args[0], given)
    return 0
