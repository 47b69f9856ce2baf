"""The compactor's estimate counts each message of a growing conversation once, not once per step, and stays
the estimate a full count gives (after a compaction, or a message replaced, too)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import pytest

from plait.agent import context
from plait.agent.context import Compactor, ContextBudget
from plait.messages import AssistantMessage, Message, ToolCall, ToolResultMessage, UserMessage


def _step(n: int) -> list[Message]:
    call = ToolCall.parse(f"c{n}", "read_file", {"path": f"f{n}.py"})
    result = ToolResultMessage(call_id=call.id, name=call.name, content="x" * (40 + n))
    return [AssistantMessage(text=f"step {n}", tool_calls=(call,)), result]


def _full(messages: list[Message]) -> int:
    total = 0
    for m in messages:
        if isinstance(m, AssistantMessage):
            total += len(m.text) + sum(len(c.name) + len(c.raw_arguments) for c in m.tool_calls)
        else:
            total += len(m.text) if isinstance(m, UserMessage) else len(m.content)
    return total


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many messages the compactor has measured, in all."""
    seen = [0]
    measure = context._chars

    def counting(messages: Iterable[Message]) -> int:
        def each() -> Iterator[Message]:
            for m in messages:
                seen[0] += 1
                yield m

        return measure(each())

    monkeypatch.setattr(context, "_chars", counting)
    return seen


def test_a_growing_conversation_is_counted_once(counted: list[int]) -> None:
    compactor = Compactor(ContextBudget(tokens=10_000_000))
    messages: list[Message] = [UserMessage(text="Your task: read everything")]
    measured_chars, tokens = 0, 0
    for n in range(1, 301):
        assert compactor.estimate(messages) == tokens + (_full(messages) - measured_chars) // 4
        assert compactor.compact(messages, n - 1) is None
        request = tuple(messages)  # what the loop sends: a tuple of the same messages
        tokens, measured_chars = 1000 + 30 * n, _full(messages)
        compactor.measured(request, tokens)
        messages = [*messages, *_step(n)]
    assert counted[0] <= len(messages)  # a count per step would be ~90,000 here


def test_a_compacted_or_changed_conversation_is_counted_afresh() -> None:
    compactor = Compactor(ContextBudget(tokens=2_000, keep_last=2))
    messages: list[Message] = [UserMessage(text="Your task: read everything")]
    for n in range(1, 40):
        messages += _step(n)
    compactor.measured(messages, 1_900)
    bigger = [*messages, *_step(40)]
    assert compactor.estimate(bigger) == 1_900 + (_full(bigger) - _full(messages)) // 4
    done = compactor.compact(bigger, 40)
    assert done is not None
    assert done.tokens_after == 1_900 + (_full(done.messages) - _full(messages)) // 4
    assert compactor.estimate(done.messages) == done.tokens_after
    changed = [*bigger[:5], UserMessage(text="y" * 500), *bigger[6:]]  # a message replaced in the middle
    assert compactor.estimate(changed) == 1_900 + (_full(changed) - _full(messages)) // 4
