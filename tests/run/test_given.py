"""What an agent of a parallel run was given, and what it was not: read from the requests its model received."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from integrators import MergeTreeIntegrator

from plait.agent.budget import Budget, Limits
from plait.events import SQLiteEventStore
from plait.events.runlog import RunLog
from plait.messages import AssistantMessage, ModelRequest, ToolResultMessage, UserMessage
from plait.models import ScriptedModel
from plait.plan_model import Contract, Plan, PlanTask
from plait.run.base import RunBase
from plait.run.parallel import PlanContext, run_plan
from plait.settings import Settings
from plait.workspace import LocalShell, Repo

SIGNATURE = "def alpha() -> int"
FOR_BETA = "alpha() returns 1 from now on; add 1 to it"
FOR_GAMMA = "gamma keeps its name; nothing else to know"
ALPHA_SAID = "Alpha, thinking aloud about its own file"
ALPHA_RAN = "alpha-private-output"


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def _conversations() -> list[dict[str, Any]]:
    alpha = [
        {"text": ALPHA_SAID, "tool_calls": [_call("run", command="printf '%s-%s\\n' alpha private-output")]},
        {"expect": ALPHA_RAN, "tool_calls": [_call("edit_file", path="alpha.py", old="return 0", new="return 1")]},
        {
            "tool_calls": [
                _call("post_note", topic="alpha-api", text=FOR_BETA, paths=["alpha.py"]),
                _call("post_note", topic="finding", text=FOR_GAMMA, to=["gamma"]),
            ]
        },
        {"tool_calls": [_call("finish", summary="alpha returns 1")]},
    ]

    def consumer(name: str, new: str) -> list[dict[str, Any]]:
        return [
            {"tool_calls": [_call("read_file", path=f"{name}.py")]},
            {"tool_calls": [_call("edit_file", path=f"{name}.py", old="return 0", new=new)]},
            {"tool_calls": [_call("finish", summary=f"{name} done")]},
        ]

    return [
        {"name": "alpha", "match": "Your task is `alpha`", "turns": alpha},
        {"name": "beta", "match": "Your task is `beta`", "turns": consumer("beta", "return alpha() + 1")},
        {"name": "gamma", "match": "Your task is `gamma`", "turns": consumer("gamma", "return 3")},
    ]


def _plan() -> Plan:
    return Plan(
        mode="parallel",
        reason="a provider and two tasks after it",
        tasks=[
            PlanTask(
                id="alpha",
                title="alpha returns 1",
                instructions="Make alpha return 1.",
                writes=["alpha.py"],
                provides=["alpha-api"],
            ),
            PlanTask(
                id="beta",
                title="beta builds on alpha",
                instructions="Make beta return alpha() plus one.",
                writes=["beta.py"],
                consumes=["alpha-api"],
                depends_on=["alpha"],
            ),
            PlanTask(
                id="gamma",
                title="gamma returns 3",
                instructions="Make gamma return 3.",
                writes=["gamma.py"],
                depends_on=["alpha"],
            ),
        ],
        contracts=[Contract(name="alpha-api", signature=SIGNATURE, owner="alpha", path="alpha.py")],
    )


def _texts(request: ModelRequest) -> list[str]:
    """Every message text of a request (the system prompt, shared by every agent of the run, left out)."""
    out: list[str] = []
    for m in request.messages:
        if isinstance(m, AssistantMessage):
            out += [m.text, *(c.raw_arguments for c in m.tool_calls)]
        else:
            out.append(m.text if isinstance(m, UserMessage) else m.content)
    return out


def _requests(model: ScriptedModel, task: str) -> list[ModelRequest]:
    return [
        r
        for r in model.calls
        if isinstance(r.messages[0], UserMessage) and f"Your task is `{task}`" in r.messages[0].text
    ]


def test_a_consumer_gets_its_brief_the_contract_and_its_notes_never_another_agents_work(
    repo: Repo, tmp_path: Path
) -> None:
    model = ScriptedModel(conversations=_conversations())
    store = SQLiteEventStore(tmp_path / "events.db")
    base = RunBase(repo.head(), "main")
    ctx = PlanContext(
        repo=repo,
        settings=Settings(max_format_errors=3),
        model=model,
        log=RunLog(store, "r1"),
        base=base,
        runners=lambda path, agent, env: LocalShell(),
        budget=Budget("run", Limits(), RunLog(store, "r1")),
    )
    outcome = asyncio.run(run_plan(ctx, _plan(), MergeTreeIntegrator(repo, "r1", base.commit)))
    model.assert_complete()
    assert outcome.status == "done"

    alpha, beta, gamma = (_requests(model, t) for t in ("alpha", "beta", "gamma"))
    assert len(alpha) == 4 and len(beta) == 3 and len(gamma) == 3
    # alpha's own requests hold its transcript: what the consumer must not see was there to leak
    assert any(ALPHA_RAN in t for t in _texts(alpha[-1])) and ALPHA_SAID in _texts(alpha[-1])

    brief = beta[0].messages[0]
    assert isinstance(brief, UserMessage)
    assert "Make beta return alpha() plus one." in brief.text and "beta.py" in brief.text
    assert f"You use the interface alpha-api: `{SIGNATURE}` in alpha.py (task alpha implements it)" in brief.text
    seen = "\n".join(t for r in beta for t in _texts(r))
    assert FOR_BETA in seen and "[alpha-api] from alpha about alpha.py" in seen
    # the interface decision was in the request whose reply wrote the call (beta's second: edit_file)
    assert FOR_BETA in "\n".join(_texts(beta[1])) and "alpha() + 1" not in "\n".join(_texts(beta[1]))
    for secret in (ALPHA_SAID, ALPHA_RAN, "private-output", FOR_GAMMA):
        assert secret not in seen
    assert all(r.messages[0] == brief for r in beta)
    results = [m for r in beta for m in r.messages if isinstance(m, ToolResultMessage)]
    assert {m.name for m in results} == {"read_file", "edit_file"}  # its own tool results, none of alpha's

    gamma_seen = "\n".join(t for r in gamma for t in _texts(r))
    assert FOR_GAMMA in gamma_seen and FOR_BETA not in gamma_seen and ALPHA_RAN not in gamma_seen
    assert "You use the interface" not in gamma_seen
    store.close()
