"""The mark of a compacted conversation's summary: the agent writes it, a scripted model counts the steps it holds."""

from __future__ import annotations

import re

__all__ = ["SUMMARY_HEADER", "summarised_steps", "summary_heading"]

SUMMARY_HEADER = "Earlier steps of this conversation, summarised to fit the model's context"
"""How the user message that stands for a conversation's earlier steps begins."""
_STEPS = re.compile(r"\(steps 1-(\d+);")


def summary_heading(last: int) -> str:
    """The first line of a summary of steps 1 to `last`."""
    return f"{SUMMARY_HEADER} (steps 1-{last}; tool outputs are elided, run a tool again to see one):"


def summarised_steps(text: str) -> int:
    """The steps a message's `text` stands for: those its summary heading names, 0 for any other message."""
    if not text.startswith(SUMMARY_HEADER):
        return 0
    found = _STEPS.search(text.split("\n", 1)[0])
    return int(found.group(1)) if found else 0
