"""A realistic parallel run as events: a planner, three agents interleaved in time, a model retry, a merge
conflict resolved by an LLM resolver, a gate failure that ejects a task, its second attempt, and costs.

Timestamps are fixed, so everything rendered from these events is the same on every run of the tests.
"""

from __future__ import annotations

import hashlib
from typing import Any

from plait.events.store import EventStore
from plait.events.types import (
    AgentStopped,
    Committed,
    Decision,
    Event,
    GateChecked,
    Integrated,
    MergeStep,
    ModelCallFinished,
    ModelCallRetried,
    ModelCallStarted,
    NotePosted,
    PlanMade,
    PlanRejected,
    PromptGiven,
    RunFinished,
    RunStarted,
    TaskFinished,
    TaskStarted,
    ToolCalled,
    ToolReturned,
)
from plait.messages import ModelResponse, ToolCall, Usage
from plait.models.pricing import PriceTable
from plait.plan_model import Plan

RUN_ID = "20260101-000000-beef"
T0 = 1_767_225_600.0
MODEL = "anthropic:claude-sonnet-4-5"
RESOLVER_MODEL = "anthropic:claude-haiku-4-5"
FAKE_KEY = "sk-proj-FAKEfake0123456789abcdefABCDEF"
"""A secret-shaped value that shows up in one command's output; no view may show it."""
ENV_SECRET = ("DEPLOY_TOKEN", "opaque-deploy-value-8c1f")
"""A secret known only by its name in the environment (set it there); it shows up in the same output."""


def sha(label: str) -> str:
    return hashlib.sha1(label.encode()).hexdigest()


class _Script:
    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self.timed: list[tuple[float, int, Event]] = []
        self.calls: dict[str, int] = {}
        self.spent: dict[str, tuple[Usage, float]] = {}
        self.prices = PriceTable()

    def at(self, t: float, event: Event) -> None:
        self.timed.append((t, len(self.timed), event.model_copy(update={"ts": T0 + t})))

    def ids(self, agent: str = "") -> dict[str, Any]:
        return {"run_id": self.run_id, "agent": agent}

    def call(
        self,
        agent: str,
        t: float,
        t_end: float,
        tokens: tuple[int, int, int],
        tool: tuple[str, dict[str, Any], str] | None = None,
        *,
        text: str = "",
        tool_s: float = 0.1,
        model: str = MODEL,
        retry_at: float | None = None,
    ) -> None:
        """One model call (request, optional retry, response) and the tool call it asks for."""
        n = self.calls[agent] = self.calls.get(agent, 0) + 1
        digest = sha(f"{agent}{n}")
        self.at(t, ModelCallStarted(**self.ids(agent), call=n, req_hash=digest, model=model, messages=2 * n))
        if retry_at is not None:
            reason = "HTTP 429: rate limited"
            self.at(retry_at, ModelCallRetried(**self.ids(agent), call=n, attempt=1, wait_s=2.0, reason=reason))
        usage = Usage(input_tokens=tokens[0], output_tokens=tokens[1], cached_tokens=tokens[2])
        calls = (ToolCall.parse(f"{agent}-{n}", tool[0], tool[1]),) if tool else ()
        response = ModelResponse(text=text, tool_calls=calls, usage=usage, model=model.split(":")[1])
        cost = self.prices.cost(model, usage)
        spent = self.spent.get(agent, (Usage(), 0.0))
        self.spent[agent] = (spent[0] + usage, spent[1] + cost)
        self.at(
            t_end,
            ModelCallFinished(
                **self.ids(agent), call=n, req_hash=digest, response=response, cost_usd=cost, duration_s=t_end - t
            ),
        )
        if tool:
            tool_s = 0.02 if tool[0] == "finish" else tool_s
            self.at(t_end + 0.05, ToolCalled(**self.ids(agent), call=calls[0]))
            self.at(
                t_end + 0.05 + tool_s,
                ToolReturned(**self.ids(agent), call_id=calls[0].id, name=tool[0], output=tool[2], duration_s=tool_s),
            )

    def start(self, agent: str, t: float, title: str, attempt: int = 1) -> None:
        branch = f"plait/{self.run_id}/{agent}"
        self.at(
            t,
            TaskStarted(
                **self.ids(agent),
                title=title,
                branch=branch,
                worktree=f"/repo/.git/plait/worktrees/{self.run_id}/{agent}",
                base_commit=sha("base"),
                attempt=attempt,
            ),
        )
        self.at(t + 0.05, PromptGiven(**self.ids(agent), system="You are a coding agent.", user=title, tools=["run"]))

    def finish(self, agent: str, t: float, summary: str, files: list[str], attempt: int = 1) -> None:
        n = self.calls[agent]
        usage, cost = self.spent[agent]
        stopped = AgentStopped(**self.ids(agent), reason="finished", summary=summary, steps=n, usage=usage)
        self.at(t, stopped.model_copy(update={"cost_usd": cost}))
        commit = sha(f"{agent}-commit-{attempt}")
        branch = f"plait/{self.run_id}/{agent}"
        self.at(t + 0.1, Committed(**self.ids(agent), sha=commit, branch=branch, message=summary, files=files))
        self.at(t + 0.2, TaskFinished(**self.ids(agent), status="done", summary=summary, commit=commit))

    def merge(self, t: float, task: str, rung: str, outcome: str, files: list[str], detail: str = "") -> None:
        step = MergeStep(
            **self.ids(), task=task, branch=f"plait/{self.run_id}/{task}", rung=rung, outcome=outcome, files=files
        )
        self.at(t, step.model_copy(update={"detail": detail, "commit": sha(f"merge-{task}-{rung}")}))

    def gate(self, t: float, commit: str, tasks: list[str], verify_ok: bool, took: float, output: str) -> None:
        self.at(t, GateChecked(**self.ids(), commit=commit, stage="parse", passed=True, tasks=tasks))
        self.at(t + 0.1, GateChecked(**self.ids(), commit=commit, stage="semantic", passed=True, tasks=tasks))
        self.at(
            t + 0.1 + took,
            GateChecked(
                **self.ids(),
                commit=commit,
                stage="verify",
                passed=verify_ok,
                tasks=tasks,
                output=output,
                duration_s=took,
            ),
        )


def _plan(s: _Script) -> None:
    p = "planner"
    s.at(0.3, PromptGiven(**s.ids(p), system="You plan.", user="Add currency support", tools=["read_file"]))
    s.call(p, 0.4, 3.0, (5200, 300, 0), ("list_files", {"path": "."}, "tally/\ntests/\nREADME.md"))
    s.call(p, 3.3, 6.0, (6100, 250, 4800), ("read_file", {"path": "tally/ledger.py"}, "class Ledger: ..."))
    s.call(p, 6.3, 10.0, (7000, 900, 5900), text='{"tasks": [...]}')
    s.at(10.05, PlanRejected(**s.ids(p), attempt=1, error="task cli depends on unknown task 'ledgr'"))
    s.call(p, 10.1, 12.0, (8100, 950, 6900), text='{"tasks": [...]}')
    tasks = [
        {"id": "money", "title": "Give Money a currency", "instructions": "", "writes": ["tally/money.py"]},
        {"id": "ledger", "title": "Keep one ledger per currency", "instructions": "", "writes": ["tally/ledger.py"]},
        {"id": "cli", "title": "Add a --currency flag", "instructions": "", "writes": ["tally/cli.py"]},
    ]
    plan = Plan.model_validate({"mode": "parallel", "reason": "", "tasks": tasks})
    s.at(12.1, PlanMade(**s.ids(p), plan=plan))
    s.at(12.15, Decision(**s.ids(p), topic="overlap", decision="gave tally/__init__.py to money", reason="both export"))
    s.at(12.3, AgentStopped(**s.ids(p), reason="finished", summary="3 tasks", steps=4))


def _agents(s: _Script) -> None:
    s.start("money", 12.5, "Give Money a currency")
    s.start("ledger", 12.6, "Keep one ledger per currency")
    s.start("cli", 12.7, "Add a --currency flag")
    s.call("money", 12.6, 15.0, (9000, 200, 7800), ("read_file", {"path": "tally/money.py"}, "class Money: ..."))
    s.call("ledger", 12.7, 14.0, (9100, 180, 7800), ("read_file", {"path": "tally/ledger.py"}, "class Ledger: ..."))
    s.call("cli", 12.8, 16.0, (9050, 150, 7800), ("search", {"pattern": "def main"}, "tally/cli.py:12: def main"))
    edit_money = {"path": "tally/money.py", "old": "class Money:", "new": "class Money:  # currency"}
    s.call("money", 15.3, 19.0, (10500, 600, 8900), ("edit_file", edit_money, "edited tally/money.py"))
    s.at(19.5, NotePosted(**s.ids("money"), topic="interface", text="Money(amount, currency='EUR')"))
    edit_ledger = {"path": "tally/ledger.py", "old": "class Ledger:", "new": "class Ledger:  # per currency"}
    s.call("ledger", 14.3, 18.0, (10400, 700, 8900), ("edit_file", edit_ledger, "edited"), retry_at=14.5)
    env_out = f"OPENAI_API_KEY={FAKE_KEY}\n{ENV_SECRET[0]}={ENV_SECRET[1]}\n31 passed in 0.4s"
    s.call(
        "ledger",
        18.4,
        21.0,
        (11800, 120, 10100),
        ("run", {"command": "env | grep KEY; pytest -q"}, env_out),
        tool_s=3.0,
    )
    cli_src = "def main(argv=None):\n    ...\n"
    s.call("cli", 16.5, 20.5, (10300, 900, 8900), ("write_file", {"path": "tally/cli.py", "content": cli_src}, "wrote"))
    s.call("money", 19.3, 22.0, (11900, 100, 10200), ("run", {"command": "pytest -q tests/test_money.py"}, "12 passed"))
    s.call("cli", 20.8, 23.5, (11300, 90, 9800), ("finish", {"summary": "cli takes --currency"}, "finished"))
    s.finish("cli", 23.6, "cli takes --currency", ["tally/cli.py"])
    s.at(24.2, Decision(**s.ids("ledger"), topic="budget", decision="ledger spent 80% of its budget"))
    s.call("ledger", 24.3, 26.0, (12900, 80, 11500), ("finish", {"summary": "one ledger per currency"}, "finished"))
    s.finish("ledger", 26.1, "one ledger per currency", ["tally/ledger.py", "tally/__init__.py"])
    s.call("money", 25.1, 27.0, (13000, 90, 11600), ("finish", {"summary": "Money has a currency"}, "finished"))
    s.finish("money", 27.2, "Money has a currency", ["tally/money.py", "tally/__init__.py", "tests/test_money.py"])


def _integrate(s: _Script, final: str) -> None:
    s.merge(24.0, "cli", "git", "clean", ["tally/cli.py"])
    s.merge(26.5, "ledger", "git", "clean", ["tally/ledger.py", "tally/__init__.py"])
    s.merge(27.6, "money", "git", "conflict", ["tally/__init__.py"], "both sides changed __all__")
    s.merge(27.65, "money", "structured", "conflict", ["tally/__init__.py"], "both changed the same entity __all__")
    r = "resolver-money"
    s.at(27.7, PromptGiven(**s.ids(r), system="You resolve conflicts.", user="tally/__init__.py", tools=[]))
    s.call(r, 27.75, 29.4, (3000, 400, 0), text="__all__ = [...both...]", model=RESOLVER_MODEL)
    s.at(29.45, AgentStopped(**s.ids(r), reason="finished", summary="kept both exports", steps=1))
    s.merge(29.6, "money", "llm", "resolved", ["tally/__init__.py"], "kept both exports, sorted")
    failure = "FAILED tests/test_cli.py::test_currency_flag - AssertionError: EUR != USD\n1 failed, 79 passed"
    s.gate(29.8, sha("batch-1"), ["cli", "ledger", "money"], False, 5.0, failure)
    s.gate(35.0, sha("batch-1b"), ["ledger", "money"], True, 3.0, "79 passed")
    eject = "verify failed with cli: tests/test_cli.py::test_currency_flag"
    integrated = Integrated(**s.ids(), branch=f"plait/{s.run_id}", commit=sha("batch-1b"), tasks=["ledger", "money"])
    s.at(38.3, integrated.model_copy(update={"ejected": ["cli"], "reason": eject}))
    s.start("cli", 38.5, "Add a --currency flag", attempt=2)
    s.call("cli", 38.6, 41.0, (9800, 150, 7800), ("read_file", {"path": "tests/test_cli.py"}, "def test_currency_flag"))
    edit_cli = {"path": "tally/cli.py", "old": "'EUR'", "new": "args.currency"}
    s.call("cli", 41.3, 44.0, (11000, 300, 9000), ("edit_file", edit_cli, "edited tally/cli.py"))
    s.call("cli", 44.2, 46.0, (11500, 60, 9900), ("run", {"command": "pytest -q"}, "80 passed in 0.9s"), tool_s=1.4)
    s.call("cli", 47.5, 49.0, (12000, 70, 10400), ("finish", {"summary": "--currency is honoured"}, "finished"))
    s.finish("cli", 49.1, "--currency is honoured", ["tally/cli.py"], attempt=2)
    s.merge(49.5, "cli", "git", "clean", ["tally/cli.py"])
    s.gate(49.6, final, ["cli"], True, 3.2, "80 passed")
    done = Integrated(**s.ids(), branch=f"plait/{s.run_id}", commit=final, tasks=["cli", "ledger", "money"])
    s.at(53.0, done)


def parallel_run(run_id: str = RUN_ID, *, base: str | None = None, final: str | None = None) -> list[Event]:
    """The events of the whole run, in the order they were appended."""
    s = _Script(run_id)
    base, final = base or sha("base"), final or sha("final")
    settings = {"model": MODEL, "max_steps": 60}
    s.at(0.0, RunStarted(**s.ids(), task="Add currency support", repo="/repo", base_commit=base, base_ref="main",
                         model=MODEL, settings=settings))  # fmt: skip
    _plan(s)
    _agents(s)
    _integrate(s, final)
    s.at(53.3, RunFinished(**s.ids(), status="done", branch=f"plait/{run_id}", commit=final))
    return [event for _, _, event in sorted(s.timed, key=lambda item: (item[0], item[1]))]


def append_run(store: EventStore, events: list[Event]) -> list[Event]:
    """Append `events` to `store`; returns them as stored, with their sequence numbers."""
    return [store.append(event) for event in events]
