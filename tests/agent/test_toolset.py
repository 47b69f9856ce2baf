"""Declared tools: a toolset offers its tools' specs, built once, and answers calls; toolsets combine by union."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from pydantic import Field

from plait.agent.arguments import ToolArgs
from plait.agent.tools import Toolbox
from plait.agent.toolset import Run, Tool, ToolOutcome, Toolset
from plait.messages import ToolCall
from plait.workspace import LocalShell


class _EchoArgs(ToolArgs):
    """Say something back."""

    text: str = Field(min_length=1, description="What to say.")


async def _echo(args: _EchoArgs, call: ToolCall) -> ToolOutcome:
    return ToolOutcome(f"{call.name}: {args.text}")


def _tool(name: str, *, last: bool = False) -> Tool[_EchoArgs]:
    return Tool(name, _EchoArgs, _echo, last=last)


def _call(tools: Toolset, name: str, **arguments: object) -> ToolOutcome:
    return asyncio.run(tools.execute(ToolCall.parse("1", name, arguments)))


def test_a_union_offers_both_sets_in_order_with_the_last_tool_at_the_end() -> None:
    first = Toolset([_tool("a"), _tool("done", last=True)])
    both = first | Toolset([_tool("b")])

    assert both.names == ("a", "b", "done")
    assert _call(both, "b", text="hi").output == "b: hi"
    assert both.specs() is both.specs()  # built once, not per call


def test_two_tools_of_one_name_are_an_error_when_the_set_is_made() -> None:
    with pytest.raises(ValueError, match="two tools are named 'a'"):
        _ = Toolset([_tool("a")]) | Toolset([_tool("a")])


def test_only_and_without_narrow_a_set_and_a_removed_tool_may_be_refused_with_a_reason() -> None:
    tools = Toolset([_tool("a"), _tool("b"), _tool("c")])

    assert tools.only({"a", "c"}).names == ("a", "c")
    narrowed = tools.without({"b"}, because="b is not for you.")
    assert narrowed.names == ("a", "c")
    refused = _call(narrowed, "b", text="x")
    assert refused.format_error and refused.output == "b is not for you."
    unknown = _call(narrowed, "z", text="x")
    assert unknown.format_error and unknown.output == "unknown tool 'z': the tools are a, c."


def test_a_wrap_sees_each_call_as_sent_before_its_arguments_are_parsed() -> None:
    seen: list[object] = []

    async def around(call: ToolCall, run: Run) -> ToolOutcome:
        seen.append(call.arguments)
        if call.arguments == {"text": "stop"}:
            return ToolOutcome("stopped", is_error=True)
        return await run(call)

    tools = Toolset([_tool("a")]).wrap(around) | Toolset([_tool("b")])

    assert _call(tools, "a", text="stop").output == "stopped"
    assert _call(tools, "a").format_error  # the wrap let it through; the parsing refused it
    assert _call(tools, "b", text="x").output == "b: x"  # not wrapped
    assert seen == [{"text": "stop"}, {}]


def test_a_call_is_parsed_and_its_ignored_arguments_noted() -> None:
    tools = Toolset([_tool("a")])

    missing = _call(tools, "a")
    assert missing.format_error and "the required argument 'text' is missing" in missing.output
    noted = _call(tools, "a", text="hi", cwd="/tmp")
    assert noted.output.startswith("(unknown argument 'cwd' ignored") and noted.output.endswith("a: hi")


def test_a_read_only_toolbox_says_so_of_a_write_tool(tmp_path: Path) -> None:
    tools = Toolbox(tmp_path, LocalShell(), read_only=True)

    refused = _call(tools, "write_file", path="a.py", content="")
    assert refused.format_error
    assert refused.output == (
        "unknown tool 'write_file' (this agent is read-only): the tools are read_file, list_files, search, finish."
    )
