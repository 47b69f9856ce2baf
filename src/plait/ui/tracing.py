"""OpenTelemetry export (the `plait[otel]` extra): a run's events become spans, after the fact or again.

    run ─┬─ invoke_agent <agent> (one per attempt) ─┬─ chat <model>         (gen_ai.usage.* tokens)
         │                                          └─ execute_tool <name>
         ├─ plait.merge <task>
         └─ plait.gate <stage>

Attributes follow the OpenTelemetry GenAI semantic conventions (gen_ai.operation.name, gen_ai.request.model,
gen_ai.usage.input_tokens...); plait's own are under `plait.`. Tool arguments and outputs are not exported.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, TracerProvider

from plait.events.types import (
    Event,
    GateChecked,
    MergeStep,
    ModelCallFailed,
    ModelCallFinished,
    ModelCallRetried,
    ModelCallStarted,
    ToolCalled,
    ToolReturned,
)
from plait.models.rates import Tokens
from plait.redact import Redactor
from plait.ui.feed import redact_event
from plait.ui.runview import RunView

__all__ = ["export_run"]


def _ns(ts: float) -> int:
    return int(ts * 1_000_000_000)


def _usage(usage: Tokens) -> dict[str, int]:
    return {
        "gen_ai.usage.input_tokens": usage.input_tokens,
        "gen_ai.usage.output_tokens": usage.output_tokens,
        "gen_ai.usage.cache_read.input_tokens": usage.cached_tokens,
        "gen_ai.usage.cache_creation.input_tokens": usage.cache_write_tokens,
    }


def _model_attrs(model: str) -> dict[str, str]:
    provider, _, name = model.partition(":")
    if not name:
        return {"gen_ai.request.model": model}
    if provider == "openai-compatible":
        provider, name = "openai", name.split("@", 1)[0]
    return {"gen_ai.provider.name": provider, "gen_ai.request.model": name}


class _Exporter:
    def __init__(self, view: RunView, provider: TracerProvider) -> None:
        self.view = view
        self.tracer = provider.get_tracer("plait")
        self.end = view.ended or view.last_ts
        start = view.started or self.end
        attrs: dict[str, Any] = {"plait.run_id": view.run_id, "plait.task": view.task, "plait.status": view.status}
        attrs.update({"gen_ai.operation.name": "invoke_workflow", **_model_attrs(view.model), **_usage(view.usage)})
        attrs["plait.cost_usd"] = view.cost_usd
        self.run = self.tracer.start_span("plait run", attributes=attrs, start_time=_ns(start))
        self.tasks: dict[str, list[tuple[float, Span]]] = {}
        self.count = 1
        for agent in view.agents.values():
            for n, span in enumerate(agent.spans, 1):
                attrs = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": agent.id}
                attrs |= {"gen_ai.agent.id": f"{view.run_id}/{agent.id}/{n}", "plait.attempt": span.attempt}
                attrs |= {"plait.status": span.status, "plait.task": agent.title}
                otel = self._start(f"invoke_agent {agent.id}", span.start, self.run, attrs)
                self.tasks.setdefault(agent.id, []).append((span.start, otel))
                if span.status in ("failed", "dropped"):
                    otel.set_status(Status(StatusCode.ERROR, agent.reason or span.status))

    def _start(self, name: str, ts: float, parent: Span, attrs: dict[str, Any], client: bool = False) -> Span:
        self.count += 1
        context = trace.set_span_in_context(parent)
        kind = SpanKind.CLIENT if client else SpanKind.INTERNAL
        return self.tracer.start_span(name, context=context, kind=kind, attributes=attrs, start_time=_ns(ts))

    def parent(self, agent: str, ts: float) -> Span:
        spans = self.tasks.get(agent)
        if not spans:
            return self.run
        i = bisect_right([start for start, _ in spans], ts) - 1
        return spans[max(i, 0)][1]

    def model_call(self, start: ModelCallStarted, done: ModelCallFinished | ModelCallFailed | None) -> Span:
        attrs: dict[str, Any] = {"gen_ai.operation.name": "chat", **_model_attrs(start.model), "plait.call": start.call}
        name = f"chat {attrs['gen_ai.request.model']}"
        span = self._start(name, start.ts, self.parent(start.agent, start.ts), attrs, client=True)
        if isinstance(done, ModelCallFinished):
            response = done.response
            span.set_attributes(_usage(response.usage))
            span.set_attribute("plait.cost_usd", done.cost_usd)
            if response.model:
                span.set_attribute("gen_ai.response.model", response.model)
            if response.stop_reason:
                span.set_attribute("gen_ai.response.finish_reasons", [response.stop_reason])
        elif isinstance(done, ModelCallFailed):
            span.set_attribute("error.type", "model_error")
            span.set_status(Status(StatusCode.ERROR, done.error))
        else:
            span.set_status(Status(StatusCode.ERROR, "no answer was logged (the run stopped during the call)"))
        return span

    def tool_call(self, call: ToolCalled, result: ToolReturned | None) -> None:
        attrs = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": call.call.name}
        attrs |= {"gen_ai.tool.call.id": call.call.id, "gen_ai.tool.type": "function"}
        span = self._start(f"execute_tool {call.call.name}", call.ts, self.parent(call.agent, call.ts), attrs)
        if result is None or result.is_error:
            span.set_status(Status(StatusCode.ERROR, "the tool failed" if result else "no result was logged"))
        span.end(_ns(result.ts if result else self.end))

    def queue_step(self, event: MergeStep | GateChecked) -> None:
        attrs: dict[str, Any]
        if isinstance(event, MergeStep):
            attrs = {"plait.task": event.task, "plait.rung": event.rung, "plait.outcome": event.outcome}
            span = self._start(f"plait.merge {event.task}", event.ts, self.run, attrs | {"plait.files": event.files})
            span.end(_ns(event.ts))
            return
        attrs = {"plait.stage": event.stage, "plait.passed": event.passed, "plait.tasks": event.tasks}
        span = self._start(f"plait.gate {event.stage}", event.ts - event.duration_s, self.run, attrs)
        if not event.passed:
            span.set_status(Status(StatusCode.ERROR, "the gate failed"))
        span.end(_ns(event.ts))

    def finish(self) -> None:
        for agent in self.view.agents.values():
            for span, (_, otel) in zip(agent.spans, self.tasks.get(agent.id, []), strict=True):
                otel.end(_ns(span.end if span.end is not None else agent.last_ts))
        self.run.end(_ns(self.end))


def export_run(events: list[Event], provider: TracerProvider, *, redact: Redactor | None = None) -> int:
    """Turn the events of one run into spans on `provider`'s tracer; returns how many spans were made."""
    redact = redact if redact is not None else Redactor()
    events = [redact_event(e, redact) for e in events]
    if not events:
        return 0
    exporter = _Exporter(RunView.of(events[0].run_id, events), provider)
    calls: dict[tuple[str, int], ModelCallStarted] = {}
    retries: dict[tuple[str, int], list[ModelCallRetried]] = {}
    tools: dict[tuple[str, str], ToolCalled] = {}
    for event in events:
        if isinstance(event, ModelCallStarted):
            calls[(event.agent, event.call)] = event
        elif isinstance(event, ModelCallRetried):
            retries.setdefault((event.agent, event.call), []).append(event)
        elif isinstance(event, ModelCallFinished | ModelCallFailed) and (event.agent, event.call) in calls:
            key = (event.agent, event.call)
            span = exporter.model_call(calls.pop(key), event)
            for r in retries.pop(key, []):
                attrs: dict[str, Any] = {"plait.attempt": r.attempt, "plait.wait_s": r.wait_s, "plait.reason": r.reason}
                span.add_event("retry", attrs, _ns(r.ts))
            span.end(_ns(event.ts))
        elif isinstance(event, ToolCalled):
            tools[(event.agent, event.call.id)] = event
        elif isinstance(event, ToolReturned) and (event.agent, event.call_id) in tools:
            exporter.tool_call(tools.pop((event.agent, event.call_id)), event)
        elif isinstance(event, MergeStep | GateChecked):
            exporter.queue_step(event)
    for start in calls.values():
        exporter.model_call(start, None).end(_ns(exporter.end))
    for call in tools.values():
        exporter.tool_call(call, None)
    exporter.finish()
    return exporter.count
