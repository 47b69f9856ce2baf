"""The coordination and lead tools take their arguments as strictly as the file tools: a wrong type or an
oversized text is an observation naming the field, never a guess."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from plait.agent.arguments import TEXT_LIMIT
from plait.agent.toolset import ToolOutcome, parse_arguments
from plait.coord.answering import _AnswerArgs
from plait.coord.asking import _AskArgs
from plait.coord.tools import ClaimArgs, PostNoteArgs
from plait.messages import ToolCall
from plait.run._lead import _AskArgs as _LeadAskArgs
from plait.run.investigate import _AnswerArgs as _LeadAnswerArgs
from plait.run.investigate import _InvestigateArgs
from plait.run.session import _DispatchArgs, _SpawnArgs

HUGE = "x" * (TEXT_LIMIT + 1)

CASES: list[tuple[type[BaseModel], dict[str, Any], str]] = [
    (_AskArgs, {"expert": "db", "question": HUGE}, "question"),
    (_AskArgs, {"expert": 7, "question": "why?"}, "expert"),
    (_LeadAskArgs, {"expert": "db", "question": HUGE}, "question"),
    (_AnswerArgs, {"answer": HUGE}, "answer"),
    (_AnswerArgs, {"answer": "a", "references": "a.py:1"}, "references"),
    (_LeadAnswerArgs, {"answer": "a", "disagreements": HUGE}, "disagreements"),
    (_InvestigateArgs, {"question": "q", "areas": [{"name": "db", "paths": [5]}]}, "paths"),
    (_InvestigateArgs, {"question": "q", "areas": [{"name": "db", "question": HUGE}]}, "question"),
    (_SpawnArgs, {"name": "db", "area": ["src/db/**"], "brief": HUGE}, "brief"),
    (_SpawnArgs, {"name": 3}, "name"),
    (_DispatchArgs, {"task": HUGE}, "task"),
]


@pytest.mark.parametrize(("args_type", "arguments", "field"), CASES)
def test_a_wrong_type_or_an_oversized_text_is_a_format_error_naming_the_field(
    args_type: type[BaseModel], arguments: dict[str, Any], field: str
) -> None:
    outcome = parse_arguments(ToolCall(id="c", name="tool", arguments=arguments), args_type)
    assert isinstance(outcome, ToolOutcome) and outcome.format_error, outcome
    assert field in outcome.output and len(outcome.output) < 2000, outcome.output


def test_well_formed_arguments_still_read() -> None:
    ok = parse_arguments(ToolCall(id="c", name="ask_expert", arguments={"expert": "db", "question": "why?"}), _AskArgs)
    assert isinstance(ok, _AskArgs) and ok.question == "why?"


def test_a_claim_or_a_note_is_as_strict() -> None:
    for args_type, arguments, field in (
        (ClaimArgs, {"path": "a.py", "why": "w", "wait": "yes"}, "wait"),
        (ClaimArgs, {"path": "a" * 5000, "why": "w"}, "path"),
        (PostNoteArgs, {"topic": "t", "text": HUGE}, "text"),
    ):
        outcome = parse_arguments(ToolCall(id="c", name="claim", arguments=arguments), args_type)
        assert isinstance(outcome, ToolOutcome) and outcome.format_error and field in outcome.output, outcome
