"""OpenTelemetry spans built from a run's event log, checked with the SDK's in-memory exporter."""

from __future__ import annotations

from collections import Counter

import pytest
from synthetic_run import ENV_SECRET, RUN_ID, T0, parallel_run

from plait.events.types import Event, ModelCallFinished, ModelCallStarted, ToolCalled

sdk_trace = pytest.importorskip("opentelemetry.sdk.trace", reason="the otel extra is not installed")
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402
from opentelemetry.trace import StatusCode  # noqa: E402

from plait.ui.tracing import export_run  # noqa: E402


def _export(events: list[Event]) -> tuple[int, list[ReadableSpan]]:
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    made = export_run(events, provider)
    provider.shutdown()
    return made, list(memory.get_finished_spans())


def _ns(ts: float) -> int:
    return int(ts * 1_000_000_000)


def test_a_run_becomes_a_tree_of_run_agent_model_and_tool_spans() -> None:
    events = parallel_run()
    made, spans = _export(events)
    assert made == len(spans)
    kinds = Counter(s.name.split()[0] for s in spans)
    responses = [e for e in events if isinstance(e, ModelCallFinished)]
    calls = [e for e in events if isinstance(e, ToolCalled)]
    assert kinds["plait"] == 1 and kinds["chat"] == len(responses) and kinds["execute_tool"] == len(calls)
    assert kinds["invoke_agent"] == 6, "planner, money, ledger, resolver-money, and two attempts of cli"
    assert kinds["plait.merge"] == 6 and kinds["plait.gate"] == 9
    root = next(s for s in spans if s.name == "plait run")
    assert root.parent is None and root.start_time == _ns(T0) and root.end_time == _ns(T0 + 53.3)
    assert root.attributes is not None and root.attributes["plait.run_id"] == RUN_ID
    by_id = {s.context.span_id: s for s in spans if s.context is not None}
    assert all(s.context is not None and s.context.trace_id == root.context.trace_id for s in spans)
    for span in spans:
        if span.name.startswith(("chat", "execute_tool")):
            assert span.parent is not None
            parent = by_id[span.parent.span_id]
            assert parent.name.startswith("invoke_agent")
            assert parent.start_time is not None and span.start_time is not None
            assert parent.start_time <= span.start_time
        elif span is not root:
            assert span.parent is not None and span.parent.span_id == root.context.span_id


def test_model_call_spans_carry_genai_usage_that_adds_up() -> None:
    events = parallel_run()
    _, spans = _export(events)
    chats = sorted((s for s in spans if s.name.startswith("chat")), key=lambda s: s.start_time or 0)
    starts = [e for e in events if isinstance(e, ModelCallStarted)]
    responses = [e for e in events if isinstance(e, ModelCallFinished)]
    for span, start in zip(chats, starts, strict=True):
        a = span.attributes or {}
        assert a["gen_ai.operation.name"] == "chat" and a["gen_ai.provider.name"] == "anthropic"
        assert a["gen_ai.request.model"] == start.model.split(":")[1]
        assert span.start_time == _ns(start.ts)
    assert sum(int((s.attributes or {})["gen_ai.usage.input_tokens"]) for s in chats) == sum(
        e.response.usage.input_tokens for e in responses
    )
    assert sum(int((s.attributes or {})["gen_ai.usage.output_tokens"]) for s in chats) == sum(
        e.response.usage.output_tokens for e in responses
    )
    retried = [s for s in chats if s.events]
    assert len(retried) == 1 and retried[0].events[0].name == "retry"
    agent = next(s for s in spans if s.name == "invoke_agent ledger")
    assert (agent.attributes or {})["gen_ai.agent.name"] == "ledger"


def test_failures_are_error_spans_and_tools_are_named() -> None:
    _, spans = _export(parallel_run())
    failed_gate = [s for s in spans if s.name == "plait.gate verify" and s.status.status_code == StatusCode.ERROR]
    assert len(failed_gate) == 1 and (failed_gate[0].attributes or {})["plait.tasks"] == ("cli", "ledger", "money")
    tools = {(s.attributes or {})["gen_ai.tool.name"] for s in spans if s.name.startswith("execute_tool")}
    assert tools == {"list_files", "read_file", "edit_file", "write_file", "run", "search", "finish"}


def test_an_unfinished_run_still_ends_every_span(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(*ENV_SECRET)
    events = parallel_run()
    cut = next(i for i, e in enumerate(events) if e.ts > T0 + 15.0)
    _, spans = _export(events[:cut])
    assert all(s.end_time is not None for s in spans)
    open_calls = [s for s in spans if s.name.startswith("chat") and s.status.status_code == StatusCode.ERROR]
    assert len(open_calls) == 2, "ledger and cli were waiting on the model when the log ends"
    root = next(s for s in spans if s.name == "plait run")
    assert root.end_time == _ns(events[cut - 1].ts)


def test_no_spans_for_no_events() -> None:
    assert _export([]) == (0, [])
