"""What a model is told when its tool call's arguments are wrong: enough to fix the call in one go."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from plait.agent.tools import Toolbox
from plait.agent.toolset import ToolOutcome
from plait.messages import ToolCall
from plait.workspace import LocalShell


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "README.md").write_text("# Demo\nTotal things.\n")
    return tmp_path


def call(root: Path, name: str, **arguments: Any) -> ToolOutcome:
    toolbox = Toolbox(root, LocalShell(grace=0.3), use_ripgrep=False)
    return asyncio.run(toolbox.execute(ToolCall(id="c1", name=name, arguments=arguments)))


def test_a_misnamed_argument_is_named_with_the_arguments_the_tool_takes(root: Path) -> None:
    outcome = call(root, "read_file", file="README.md", end_line=1)
    assert outcome.format_error
    assert "the required argument 'path' is missing" in outcome.output
    assert "unknown argument 'file'" in outcome.output
    assert "read_file takes path (required), start_line, end_line" in outcome.output


def test_a_number_sent_as_a_string_is_told_to_be_sent_as_a_number(root: Path) -> None:
    outcome = call(root, "read_file", path="README.md", start_line="2")
    assert outcome.format_error
    assert "argument 'start_line' must be an integer: send 2, not the string '2'" in outcome.output
    flag = call(root, "search", pattern="Total", ignore_case="yes")
    assert "argument 'ignore_case' must be a boolean: send true or false, not the string 'yes'" in flag.output


def test_an_ignored_argument_of_a_valid_call_is_pointed_out_before_the_result(root: Path) -> None:
    outcome = call(root, "read_file", path="README.md", start_line=2, max_lines=1)
    assert not outcome.format_error and not outcome.is_error
    note, _, rest = outcome.output.partition("\n")
    assert note == "(unknown argument 'max_lines' ignored: read_file takes path (required), start_line, end_line)"
    assert rest == "   2| Total things."


def test_a_valid_call_without_unknown_arguments_has_no_note(root: Path) -> None:
    assert call(root, "read_file", path="README.md", start_line=2).output == "   2| Total things."
