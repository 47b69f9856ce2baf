"""A request's fingerprint keeps its value (logs of earlier versions compare against it), however it is computed."""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import FrameType

import pytest

from plait.messages import (
    AssistantMessage,
    MessageChain,
    ModelRequest,
    ToolCall,
    ToolResultMessage,
    ToolSpec,
    UserMessage,
)

TOOLS = (
    ToolSpec(name="read_file", description="Read a file.", parameters={"type": "object", "properties": {}}),
    ToolSpec(name="finish", description="End the task.", parameters={"type": "object", "required": ["summary"]}),
)
TURNS = (
    UserMessage(text="Your task is `t1`."),
    AssistantMessage(text="step 0", tool_calls=(ToolCall(id="c0", name="read_file", arguments={"path": "a.txt"}),)),
    ToolResultMessage(call_id="c0", name="read_file", content="line 1\n"),
    AssistantMessage(text="step 1"),
    UserMessage(text="go on"),
)
SYSTEM = "You are an agent.\fOf this repository."


def _requests(**head: object) -> list[ModelRequest]:
    return [ModelRequest(system=SYSTEM, messages=TURNS[:n], tools=TOOLS, **head) for n in (1, 3, 5)]  # type: ignore[arg-type]


# Computed by the code that wrote the logs already on disk (before a conversation's head was hashed once).
EXPECTED = {
    "plain": [
        "eff2536451c657d22d005dac96d858fcf1b94f642bf0aba4e4c11f61fa893799",
        "fa552590230ef02181d446b8ef8cfa9ef4212b64fb7f8a46062c8e293b218c7e",
        "6c25040d79627b4e2ee057134663eaa601c9c7cbaf960bcb1803f71cf8c2a0c6",
    ],
    "chosen": [
        "c84b46076d7330be0696970ad90489a941f1a9026474beafcb2300e48c965a09",
        "4e2a2e25a7ade2e8c233d06d552a7d8f50ee3f975f78ec12a49e68abb0068f6e",
        "cd983c46564a1e96b04f65c0f7a15bc42214649c2a6d5ce42679eafc46caf8e0",
    ],
}
HEADS: dict[str, dict[str, object]] = {"plain": {}, "chosen": {"tool_choice": "finish", "max_output_tokens": 100}}


@pytest.mark.parametrize("head", sorted(HEADS))
def test_the_values_are_those_of_earlier_logs(head: str) -> None:
    requests = _requests(**HEADS[head])
    assert [r.fingerprint() for r in requests] == EXPECTED[head]
    chain = MessageChain()
    assert [r.fingerprint(chain) for r in requests] == EXPECTED[head]
    assert [r.fingerprint(chain) for r in requests] == EXPECTED[head]  # the chain starts again from the first


def test_a_conversation_whose_head_changes_hashes_the_new_head() -> None:
    chain = MessageChain()
    plain, chosen = _requests(), _requests(**HEADS["chosen"])
    found = [plain[0].fingerprint(chain), chosen[1].fingerprint(chain), plain[2].fingerprint(chain)]
    assert found == [EXPECTED["plain"][0], EXPECTED["chosen"][1], EXPECTED["plain"][2]]


def _hashes_made(calls: Callable[[], object]) -> int:
    """How many SHA-256 hashes `calls` starts, as the interpreter's profiling hook sees its built-in calls."""
    made = 0

    def seen(frame: FrameType, event: str, arg: object) -> None:
        nonlocal made
        made += event == "c_call" and getattr(arg, "__name__", "") == "openssl_sha256"

    sys.setprofile(seen)
    try:
        calls()
    finally:
        sys.setprofile(None)
    return made


def test_a_conversation_hashes_its_head_once() -> None:
    requests = _requests()
    chain = MessageChain()
    made = _hashes_made(lambda: [r.fingerprint(chain) for r in requests])
    # one per message (5), one for the head; before, the head (system prompt and tool schemas) at every step
    assert made == len(TURNS) + 1
