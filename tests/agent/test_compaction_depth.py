"""A compaction is rare and deep: between two, every request starts with the whole previous one (cacheable)."""

from __future__ import annotations

from plait.agent.context import Compactor, ContextBudget
from plait.messages import AssistantMessage, Message, ToolCall, ToolResultMessage, UserMessage

BRIEF = UserMessage(text="Your task:\n\nread every module and fix the bug.")


def _step(n: int) -> list[Message]:
    """A step that reads a module of about 1,800 tokens."""
    call = ToolCall.parse(f"c{n}", "read_file", {"path": f"src/m{n}.py"})
    content = "\n".join(f"{i}: value_{n}_{i} = compute({i})" for i in range(240))
    return [AssistantMessage(tool_calls=(call,)), ToolResultMessage(call_id=call.id, name="read_file", content=content)]


def _tokens(messages: list[Message]) -> int:
    chars = 0
    for m in messages:
        if isinstance(m, AssistantMessage):
            chars += sum(len(c.name) + len(c.raw_arguments) for c in m.tool_calls)
        else:
            chars += len(m.text) if isinstance(m, UserMessage) else len(m.content)
    return chars // 4


def _play(budget: ContextBudget, steps: int) -> tuple[int, int]:
    """(compactions, requests that started with the whole previous request) over `steps` model calls."""
    compactor = Compactor(budget)
    messages: list[Message] = [BRIEF]
    previous: list[Message] = []
    compactions = appended = 0
    for step in range(steps):
        done = compactor.compact(messages, step)
        if done is not None:
            messages, compactions = done.messages, compactions + 1
        elif previous and messages[: len(previous)] == previous:
            appended += 1
        assert _tokens(messages) < budget.tokens
        compactor.measured(messages, _tokens(messages))
        previous = list(messages)
        messages = [*messages, *_step(step + 1)]
    return compactions, appended


def test_compaction_goes_to_half_the_budget_so_the_next_is_steps_away() -> None:
    compactions, appended = _play(ContextBudget(tokens=10_000), steps=30)
    # 1,800 tokens a step: down to 5,000 at most, up to 8,000 again takes two steps or more
    assert compactions <= 10
    assert appended == 30 - 1 - compactions


def test_compacting_only_down_to_the_threshold_would_rewrite_the_prompt_at_nearly_every_step() -> None:
    shallow, _ = _play(ContextBudget(tokens=10_000, target=0.8), steps=30)
    deep, _ = _play(ContextBudget(tokens=10_000), steps=30)
    assert shallow >= 2 * deep
