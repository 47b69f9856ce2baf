"""The fingerprint of an agent's requests serialises its system prompt and tools once, not at every call.

A resumed agent fingerprints every call it replays; what stays the same from call to call is not written
out again, and the fingerprint is the one an unchained request gets, changing when any part of it changes.
"""

from __future__ import annotations

from typing import Any

from plait.messages import MessageChain, ModelRequest, ToolSpec, UserMessage


class CountedSpec(ToolSpec):
    """A tool spec that counts how often it is serialised."""

    def model_dump(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        DUMPS.append(self.name)
        return super().model_dump(*args, **kwargs)


DUMPS: list[str] = []


def _request(messages: int, system: str = "you code", tools: tuple[ToolSpec, ...] = ()) -> ModelRequest:
    said = tuple(UserMessage(text=f"message {i}") for i in range(messages))
    return ModelRequest(system=system, messages=said, tools=tools)


def test_the_head_of_an_agents_requests_is_serialised_once() -> None:
    DUMPS.clear()
    tools = (CountedSpec(name="read_file", description="reads", parameters={"type": "object"}),)
    chain = MessageChain()
    digests = [_request(n, tools=tools).fingerprint(chain) for n in range(1, 6)]
    assert DUMPS == ["read_file"]
    assert digests == [_request(n, tools=tools).fingerprint() for n in range(1, 6)]


def test_a_changed_head_changes_the_fingerprint() -> None:
    tools = (ToolSpec(name="read_file", description="reads", parameters={"type": "object"}),)
    other = (ToolSpec(name="read_file", description="reads a file", parameters={"type": "object"}),)
    chain = MessageChain()
    first = _request(2, tools=tools).fingerprint(chain)
    assert _request(2, tools=other).fingerprint(chain) == _request(2, tools=other).fingerprint() != first
    assert _request(2, system="you review", tools=tools).fingerprint(chain) != first
    assert _request(2, tools=tools).fingerprint(chain) == first
