"""Cost of the event log: appends per second, and the journal's overhead on a model call.

Baseline, measured in the same run: the same calls made without the journal (no log at all).
Run: .venv/bin/python benchmarks/bench_event_log.py [--events N]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from plait.agent.journal import ModelCallJournal
from plait.events import Decision, SQLiteEventStore
from plait.events.runlog import RunLog
from plait.messages import ModelRequest, UserMessage
from plait.models import PriceTable, ScriptedModel


def appends_per_second(path: Path, n: int, synchronous: str) -> float:
    store = SQLiteEventStore(path, synchronous=synchronous)
    started = time.perf_counter()
    for i in range(n):
        store.append(Decision(run_id="bench", agent="a", topic="t", decision="x" * 200, data={"i": i}))
    elapsed = time.perf_counter() - started
    store.close()
    return n / elapsed


def calls_per_second(n: int, store: SQLiteEventStore | None) -> float:
    model = ScriptedModel([{"text": "ok", "usage": {"input_tokens": 10, "output_tokens": 2}}] * n)
    journal = ModelCallJournal(RunLog(store, "bench-j"), "a", PriceTable()) if store else None
    requests = [ModelRequest(system="s" * 2000, messages=(UserMessage(text=f"q{i}"),)) for i in range(n)]

    async def go() -> None:
        for request in requests:
            if journal:
                await journal.complete(model, request)
            else:
                await model.complete(request)

    started = time.perf_counter()
    asyncio.run(go())
    return n / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=5000)
    n = parser.parse_args().events
    with tempfile.TemporaryDirectory() as tmp:
        normal = appends_per_second(Path(tmp) / "normal.db", n, "NORMAL")
        full = appends_per_second(Path(tmp) / "full.db", n, "FULL")
        bare = calls_per_second(n // 5, None)
        logged = calls_per_second(n // 5, SQLiteEventStore(Path(tmp) / "journal.db"))
    per_call_ms = (1 / logged - 1 / bare) * 1000
    print(f"{'measure':<44} {'value':>14}")
    print(f"{'appends/s, synchronous=NORMAL (default)':<44} {normal:>14,.0f}")
    print(f"{'appends/s, synchronous=FULL':<44} {full:>14,.0f}")
    print(f"{'model calls/s, no log (baseline)':<44} {bare:>14,.0f}")
    print(f"{'model calls/s, journaled (2 events/call)':<44} {logged:>14,.0f}")
    print(f"{'journal overhead per model call':<44} {per_call_ms:>11.3f} ms")
    print(f"{'ratio journaled / baseline throughput':<44} {logged / bare:>14.3f}")


if __name__ == "__main__":
    main()
