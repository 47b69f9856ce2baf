"""What a resumed agent's replay costs, counted rather than timed: how often a reply's text is redacted."""

from __future__ import annotations

import asyncio
from pathlib import Path

from plait.agent._replaying import ReplayingModel
from plait.events import SQLiteEventStore
from plait.events.journal import Journal
from plait.models import FunctionModel, ModelRequest, ModelResponse, PriceTable, ToolCall, Usage, UserMessage
from plait.redact import REDACTED, Redactor

SECRET = "Zq8mN3xW7pL2vK9tR4yB6cJ1"


class CountingRedactor(Redactor):
    """A redactor that counts the texts it is handed."""

    def __init__(self) -> None:
        super().__init__([SECRET], env={})
        self.calls = 0

    def __call__(self, text: str) -> str:
        self.calls += 1
        return super().__call__(text)


def _reply(text: str) -> ModelResponse:
    args = {"path": "a.py", "start_line": 1, "end_line": 9, "note": text}
    usage = Usage(input_tokens=10, output_tokens=5)
    return ModelResponse(text=text, tool_calls=(ToolCall.parse("c1", "read_file", args),), usage=usage)


def _answer(tmp_path: Path, reply: ModelResponse) -> tuple[ModelResponse, int]:
    redact = CountingRedactor()
    journal = Journal(SQLiteEventStore(tmp_path / "events.db"), "r", "a", PriceTable())
    model = ReplayingModel(FunctionModel(lambda _: reply), journal, redact=redact)
    request = ModelRequest(system="s", messages=(UserMessage(text="go"),), max_output_tokens=10)
    response, _ = asyncio.run(model.complete(request))
    return response, redact.calls


def test_a_reply_without_a_secret_is_looked_at_in_one_pass(tmp_path: Path) -> None:
    reply = _reply("nothing to hide")
    response, calls = _answer(tmp_path, reply)
    assert response is reply
    assert calls == 1


def test_a_reply_with_a_secret_is_still_redacted(tmp_path: Path) -> None:
    response, _ = _answer(tmp_path, _reply(f"the key is {SECRET}"))
    assert response.text == f"the key is {REDACTED}"
    assert response.tool_calls[0].arguments == {"path": "a.py", "start_line": 1, "end_line": 9, "note": response.text}
