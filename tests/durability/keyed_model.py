"""A model server that answers from a conversation script by the request alone, and counts what it answered.

The same request always gets the same turn, so a resumed run that replays its history is answered
as before; every answer carries a serial marker, so a test can tell which answer the run logged.
"""

from __future__ import annotations

import re
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import yaml


class KeyedModel:
    """The reply function of a `WireServer` (OpenAI wire format), played from a `conversations:` script."""

    def __init__(self, script: Path, *, delay_scale: float = 1.0) -> None:
        data = yaml.safe_load(script.read_text())
        self.conversations = [(c["name"], re.compile(c["match"], re.DOTALL), c["turns"]) for c in data["conversations"]]
        self.delay_scale = delay_scale
        self.answers: dict[tuple[str, int], list[int]] = defaultdict(list)
        self._serial = 0
        self._lock = threading.Lock()

    def __call__(self, fmt: str, body: dict[str, Any]) -> dict[str, Any]:
        messages = body["messages"]
        system = next((m["content"] for m in messages if m["role"] == "system"), "")
        first = next((m["content"] for m in messages if m["role"] == "user"), "")
        turn = sum(1 for m in messages if m["role"] == "assistant")
        found = [(n, t) for n, pattern, t in self.conversations if pattern.search(f"{system}\n{first}")]
        if not found:
            return {"status": 400, "message": f"no conversation matches {first[:80]!r}"}
        name, turns = found[0]
        if turn >= len(turns):
            return {"status": 400, "message": f"{name} has {len(turns)} turns; asked for turn {turn + 1}"}
        scripted = turns[turn]
        time.sleep(float(scripted.get("delay", 0.0)) * self.delay_scale)
        with self._lock:
            self._serial += 1
            serial = self._serial
            self.answers[(name, turn)].append(serial)
        text = (scripted.get("text") or "").strip()
        return {
            "text": f"{text} [answer {serial}]".strip(),
            "tool_calls": [
                {"name": c["name"], "arguments": c.get("arguments", {})} for c in scripted.get("tool_calls", [])
            ],
        }
