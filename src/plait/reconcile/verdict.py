"""One line of why, from what the gate recorded: what a progress line, a run's reason and a rejection show."""

from __future__ import annotations

import re

__all__ = ["gate_why", "last_line", "shorten"]

_STATUS = re.compile(r"\[(exit -?\d+|exit None|timed out)\]")
_FAILED = ("FAILED ", "ERROR ")
_WIDTH = 200


def _short(text: str) -> str:
    return text if len(text) <= _WIDTH else text[: _WIDTH - 1] + "…"


def last_line(output: str) -> str:
    """The last line a command printed (a test runner's count, say), without the gate's `$ command` and status."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    body = [line for line in lines if not line.startswith("$ ") and not _STATUS.fullmatch(line)]
    return _short(body[-1]) if body else ""


def gate_why(stage: str, output: str, *, passed: bool = False) -> str:
    """The line that says why a gate stage passed or failed.

    Parse and semantic stages start with the reason. The verify stage's output is `$ command`, `[exit N]`, then
    what the command printed, perhaps after a line of the gate's own (its verdict, or that nothing ran): a failure
    is that line of the gate's with the failure of a test it names, else the first failed test a pytest summary
    names; a pass is the gate's line and the command's last line.
    """
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    if not lines:
        return ""
    if stage != "verify":
        return _short(lines[0])
    said = lines[0] if not lines[0].startswith("$ ") else ""
    body = [line for line in lines[1 if said else 0 :] if not line.startswith("$ ") and not _STATUS.fullmatch(line)]
    failures = [line for line in body if line.startswith(_FAILED)]
    failed = failures[0] if failures else ""
    if failed and not passed:
        if not said:
            return _short(failed)
        # the gate's own line names the tests held against the work: the failure of one of those, not another's
        held = next((line for line in failures if line.split()[1] in said), "")
        return _short("; ".join(part for part in (said.rstrip(":"), held) if part))
    picked = failed or (body[-1] if body else "")
    return _short("; ".join(part for part in (said.rstrip(":"), picked) if part))


def shorten(text: str, width: int) -> str:
    """`text` in at most `width` characters, cut at a word with an ellipsis when it is longer."""
    if len(text) <= width:
        return text
    cut = text[: width - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > width // 2 else cut).rstrip(" ,;:") + "…"
