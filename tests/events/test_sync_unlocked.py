"""A durable append syncs the log after letting go of the store: other appends are not held up by its sync."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from plait.events import ModelCallFinished, SQLiteEventStore, ToolCalled
from plait.messages import ModelResponse, ToolCall


def _answer() -> ModelCallFinished:
    response = ModelResponse(text="done", tool_calls=(ToolCall.parse("c1", "finish", {}),))
    return ModelCallFinished(run_id="r", agent="a", call=1, req_hash="h", response=response)


def _tool(agent: str) -> ToolCalled:
    return ToolCalled(run_id="r", agent=agent, call=ToolCall.parse("c1", "read_file", {"path": "x.py"}))


def test_another_append_goes_through_while_an_answer_syncs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = SQLiteEventStore(tmp_path / "e.db")
    store.append(_tool("a"))
    syncing, done = threading.Event(), threading.Event()
    real_fsync = os.fsync
    released: list[bool] = []

    def slow_fsync(fd: int) -> None:  # a disk that takes its time, until the test has appended
        if threading.current_thread() is not threading.main_thread() and not syncing.is_set():
            syncing.set()
            released.append(done.wait(timeout=10))  # False: the fail-safe ended the wait, not the test
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", slow_fsync)
    answered: list[int | None] = []
    answering = threading.Thread(target=lambda: answered.append(store.append(_answer()).seq))
    answering.start()
    assert syncing.wait(timeout=10), "the answer's append never synced the log itself"
    assert store.synced == 0  # not yet on disk: not yet said to be
    other = store.append(_tool("b"))  # waits for nothing: the store's lock is not held through the sync
    done.set()
    answering.join()
    assert released == [True] and other.seq == 3
    assert answered == [2] and store.synced == 2
    assert [e.kind for e in store.events("r")] == ["tool_call", "model_response", "tool_call"]
