"""The redacting store reads an event's text in one pass, and lets through nothing it redacts string by string."""

from __future__ import annotations

import random
from pathlib import Path

from plait.events import SQLiteEventStore, ToolCalled, ToolReturned
from plait.events.store import RedactingStore
from plait.messages import ToolCall
from plait.redact import Redactor

SECRET = "Zq8VfT3kLm2Xp9Rw4Yb7Nc1"
FRAGMENTS = (
    "plain words ",
    "\n",
    " ",
    '"',
    "Authorization:",
    "authorization: ",
    "AUTHORİZATION: ",
    "Bearer ",
    "bearer abcdefghijkl",
    "x-api-key:",
    "X-Api-Key: 0123456789ab",
    "[REDACTED]",
    "https://user:",
    "pa55word",
    "@host/path",
    "-----BEGIN RSA PRIVATE KEY-----",
    "MIIEowIBAAKCAQEA1234567890abcdefghijklmnopqrstuvwxyzABCDEFGH",
    "-----END RSA PRIVATE KEY-----",
    "sk-ant-",
    "api03abcdefghijklmnop",
    "ghp_",
    "0123456789abcdefghijklmnopqrstuvwxyz",
    SECRET[:10],
    SECRET[10:],
    SECRET,
    "K",
    "ſ",
)


def test_finding_nothing_in_the_joined_texts_means_nothing_in_any_of_them() -> None:
    redact = Redactor([SECRET], env={})
    rng = random.Random(7)
    checked = 0
    for _ in range(4000):
        texts = ["".join(rng.choices(FRAGMENTS, k=rng.randint(0, 4))) for _ in range(rng.randint(1, 4))]
        if redact.finds_nothing(texts):
            checked += 1
            assert all(redact(t) == t for t in texts), texts
    assert checked > 200  # the shortcut was taken often enough to mean something


def test_a_secret_split_across_the_strings_of_an_event_is_redacted_in_each(tmp_path: Path) -> None:
    store = RedactingStore(SQLiteEventStore(tmp_path / "events.db"), Redactor([SECRET], env={}))
    call = ToolCall.parse("c1", "run", {"command": "curl -H 'Authorization:", "next": f"Bearer {SECRET}'"})
    store.append(ToolCalled(run_id="r", agent="a", call=call))
    store.append(ToolReturned(run_id="r", agent="a", call_id="c1", name="run", output=f"X-API-KEY:\n  {SECRET}"))
    stored = store.events("r")
    assert stored and all(SECRET not in e.model_dump_json() for e in stored)
