"""Context budget: an agent's conversation is compacted when it nears what its model can take.

    [brief] [step 1 .. step k-4] [step k-3 .. step k]      before
    [brief] [summary]            [step k-3 .. step k]      after

The first message (the brief, with its interfaces) and the last few steps, each with its tool
results, stay verbatim. The steps between become one user message: a line per tool call (what was
called and how it went, its output elided), the assistant's words shortened, delivered notes
shortened but never dropped, and later prompts (an expert's questions) kept verbatim.

No model call writes the summary, and whether to compact depends only on the messages and the usage
the model reported for the previous call, both in the log: a resumed agent, replaying its log,
rebuilds exactly the requests it sent before.

Between compactions the conversation only grows, so each call's prompt starts with the whole of the
one before and the provider bills it at the cached price. A compaction rewrites that prefix and the next
call pays it in full, so it is rare and deep: it starts near the budget's `threshold` and brings the
conversation down to its `target`, well under it, so that many steps pass before the next one.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from itertools import islice
from typing import Any

from plait.compaction_mark import SUMMARY_HEADER, summary_heading
from plait.messages import AssistantMessage, Message, ToolCall, ToolResultMessage, UserMessage

__all__ = [
    "BUILTIN_CONTEXT",
    "DEFAULT_CONTEXT",
    "NOTES_HEADER",
    "Compaction",
    "Compactor",
    "ContextBudget",
    "context_budget",
]

DEFAULT_CONTEXT = 128_000
"""Tokens assumed for a model the table does not know (scripted models included)."""

BUILTIN_CONTEXT: Mapping[str, int] = {
    "*:claude-*": 200_000,
    "*:gpt-5*": 272_000,  # a 400k window, of which 272k may be input
    "*:gpt-4.1*": 1_000_000,
    "*:gpt-4o*": 128_000,
    "*:o3*": 200_000,
    "*:o4-mini*": 200_000,
}
"""Context budgets by model-name glob; the `context_tokens` setting adds to and overrides these."""

NOTES_HEADER = "Notes from the rest of the run"
_NOTES_KEPT = 1500
_TEXT_KEPT = 200
_ANSWER_KEPT = 400


@dataclass(frozen=True)
class ContextBudget:
    """How much of a model's context an agent's conversation may fill before older steps are summarised."""

    tokens: int = DEFAULT_CONTEXT
    threshold: float = 0.8
    """Part of `tokens` a request may reach before it is compacted."""
    target: float = 0.5
    """Part of `tokens` a compaction brings the request down to, when keeping fewer whole steps can."""
    keep_last: int = 4
    """Steps (an assistant message with its tool results) kept whole at the end; fewer if they alone are too big."""

    @property
    def limit(self) -> int:
        return int(self.tokens * self.threshold)

    @property
    def goal(self) -> int:
        return int(self.tokens * min(self.target, self.threshold))


def context_budget(model: str, overrides: Mapping[str, int] | None = None) -> ContextBudget:
    """The budget of `model` (a full name such as `anthropic:claude-sonnet-4-5`).

    The longest glob of `overrides` (the `context_tokens` setting) matching the name wins, then the
    longest of `BUILTIN_CONTEXT`, then `DEFAULT_CONTEXT`.
    """
    for table in (overrides or {}, BUILTIN_CONTEXT):
        hits = sorted((len(glob), glob, tokens) for glob, tokens in table.items() if fnmatchcase(model, glob))
        if hits:
            return ContextBudget(tokens=hits[-1][2])
    return ContextBudget()


@dataclass(frozen=True)
class Compaction:
    """The conversation after one compaction, and what it saved."""

    messages: list[Message]
    messages_before: int
    tokens_before: int
    tokens_after: int
    summarised: int
    """Steps the summary covers now (1 to this)."""

    @property
    def decision(self) -> str:
        return (
            f"summarised steps 1-{self.summarised}: {self.messages_before} messages (~{self.tokens_before} tokens) "
            f"became {len(self.messages)} (~{self.tokens_after} tokens)"
        )

    def data(self) -> dict[str, Any]:
        return {
            "messages_before": self.messages_before,
            "messages_after": len(self.messages),
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "summarised": self.summarised,
        }


def _chars(messages: Iterable[Message]) -> int:
    total = 0
    for m in messages:
        if isinstance(m, AssistantMessage):
            total += len(m.text) + sum(len(c.name) + len(c.raw_arguments) for c in m.tool_calls)
        else:
            total += len(m.text) if isinstance(m, UserMessage) else len(m.content)
    return total


class _Counted:
    """The characters of a conversation, each message counted once.

    Between compactions a conversation only grows, and its messages are frozen: when the messages counted
    last are still its first ones (the same objects), only the new ones are counted. Anything else (a
    compacted conversation, a candidate for one) is counted afresh.
    """

    def __init__(self) -> None:
        self._seen: list[Message] = []
        self._total = 0

    def __call__(self, messages: Sequence[Message]) -> int:
        n = len(self._seen)
        if len(messages) >= n and all(map(operator.is_, self._seen, messages)):
            self._total += _chars(islice(messages, n, None))
            self._seen.extend(islice(messages, n, None))
        else:
            self._seen, self._total = list(messages), _chars(messages)
        return self._total


def _is_summary(message: Message) -> bool:
    return isinstance(message, UserMessage) and message.text.startswith(SUMMARY_HEADER)


def _is_prompt(message: Message) -> bool:
    """A user message that is neither a summary nor delivered notes: a brief or a later turn's question."""
    return isinstance(message, UserMessage) and not message.text.startswith((SUMMARY_HEADER, NOTES_HEADER))


class Compactor:
    """Compacts one agent's conversation against `budget`.

    `keep` marks the messages whose text must reach the model verbatim even once summarised
    (by default the prompts: a brief, an expert's questions, a session user's messages).
    """

    def __init__(self, budget: ContextBudget, keep: Callable[[Message], bool] = _is_prompt) -> None:
        self.budget, self.keep = budget, keep
        self._tokens = 0
        self._chars = 0
        self._count = _Counted()

    def measured(self, messages: Sequence[Message], input_tokens: int) -> None:
        """The model's count of the request just answered, with the messages it held."""
        self._tokens, self._chars = input_tokens, self._count(messages)

    def estimate(self, messages: Sequence[Message]) -> int:
        """Tokens of a request holding `messages`: the last measure, plus or minus 4 characters a token."""
        return max(0, self._tokens + (self._count(messages) - self._chars) // 4)

    def compact(self, messages: Sequence[Message], steps: int) -> Compaction | None:
        """`messages` with older steps summarised, or None when they fit (or nothing can be summarised).

        `steps` is the number of model calls made so far: the step of each assistant message.
        """
        before = self.estimate(messages)
        if before < self.budget.limit or not messages:
            return None
        turns = [i for i, m in enumerate(messages) if i > 0 and isinstance(m, AssistantMessage)]
        first_step = steps - len(turns) + 1
        best: Compaction | None = None
        for keep_last in range(min(self.budget.keep_last, len(turns) - 1), 0, -1):
            cut = turns[-keep_last]
            elided = sum(1 for i in turns if i < cut)
            summary = _summary(messages[1:cut], first_step, first_step + elided - 1, self.keep)
            # a copy of the first message: the journal's hash chain then sees a rewritten conversation
            kept = [messages[0].model_copy(), UserMessage(text=summary), *messages[cut:]]
            best = Compaction(kept, len(messages), before, self.estimate(kept), first_step + elided - 1)
            if best.tokens_after < self.budget.goal:
                break
        return best


def _summary(region: Sequence[Message], first: int, last: int, keep: Callable[[Message], bool]) -> str:
    lines = [summary_heading(last)]
    step = first - 1
    i = 0
    while i < len(region):
        message = region[i]
        i += 1
        if _is_summary(message):
            assert isinstance(message, UserMessage)
            lines += message.text.splitlines()[1:]
        elif isinstance(message, AssistantMessage):
            step += 1
            results: dict[str, ToolResultMessage] = {}
            while i < len(region) and isinstance(region[i], ToolResultMessage):
                result = region[i]
                assert isinstance(result, ToolResultMessage)
                results[result.call_id] = result
                i += 1
            lines += _step_lines(step, message, results, keep)
            if not message.tool_calls and i < len(region) and isinstance(region[i], UserMessage):
                i += 1  # the loop's reminder to call a tool
        elif isinstance(message, UserMessage) and message.text.startswith(NOTES_HEADER):
            lines.append(f"notes delivered before step {step + 1}:")
            lines += ["  " + line for line in _cut(message.text.split("\n", 1)[-1].strip(), _NOTES_KEPT).splitlines()]
        else:
            text = message.text if isinstance(message, UserMessage) else message.content
            if keep(message):
                lines += [f"message before step {step + 1}, verbatim:", text]
            else:
                lines.append(f"message before step {step + 1}: {_cut(' '.join(text.split()), _TEXT_KEPT)}")
    return "\n".join(lines)


def _step_lines(
    step: int, message: AssistantMessage, results: Mapping[str, ToolResultMessage], keep: Callable[[Message], bool]
) -> list[str]:
    lines = []
    if message.text.strip():
        said = message.text.strip() if keep(message) else _cut(" ".join(message.text.split()), _TEXT_KEPT)
        lines.append(f"step {step}: you said: {said}")
    if not message.tool_calls:
        lines.append(f"step {step}: replied without calling a tool")
    for call in message.tool_calls:
        result = results.get(call.id)
        outcome = "no result" if result is None else _outcome(call, result, keep(result))
        lines.append(f"step {step}: {_called(call)} → {outcome}")
    return lines


def _called(call: ToolCall) -> str:
    args = call.arguments or {}
    if call.name == "run":
        return f"run `{_cut(str(args.get('command', '')), 160)}`"
    if call.name == "read_file" and (args.get("start_line") or args.get("end_line")):
        return f"read_file {args.get('path', '')}:{args.get('start_line') or 1}-{args.get('end_line') or 'end'}"
    if call.name == "search":
        return f"search {str(args.get('pattern', ''))!r} in {args.get('path', '.')}"
    for key in ("path", "pattern", "expert", "topic"):
        if key in args:
            return f"{call.name} {_cut(str(args[key]), 160)}"
    return f"{call.name} {_cut(call.raw_arguments, 120)}"


def _outcome(call: ToolCall, result: ToolResultMessage, verbatim: bool) -> str:
    if verbatim:
        return "\n" + result.content
    first = result.content.strip().split("\n", 1)[0]
    if result.is_error:
        return f"error: {_cut(first, 160)}"
    if call.name in ("read_file", "list_files", "search"):
        return f"{len(result.content.splitlines())} lines (elided; {call.name} again if you need it)"
    if call.name in ("edit_file", "write_file"):
        return "ok"
    if call.name in ("finish", "answer"):
        args = call.arguments or {}
        return f"{first}: {_cut(str(args.get('answer', args.get('summary', ''))), _ANSWER_KEPT)}"
    return _cut(first, 160)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"... ({len(text) - limit} more characters)"
