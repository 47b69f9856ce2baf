"""Experts in a parallel run: one reading of the code for many askers, kept across a resume, paid for by the expert.

Real repositories, worktrees and agent loops; only the model is scripted.
"""

from __future__ import annotations

import asyncio
import io
from pathlib import Path
from typing import Any

import pytest
from integrators import MergeTreeIntegrator, git
from rich.console import Console

from plait.agent.budget import Budget, Limits
from plait.coord.experts import expert_id
from plait.events import (
    ExpertStarted,
    ModelCallFinished,
    QuestionAnswered,
    SQLiteEventStore,
    TaskFinished,
    ToolCalled,
    ToolReturned,
)
from plait.events.runlog import RunLog
from plait.events.types import Event
from plait.messages import AssistantMessage, ModelRequest, ModelResponse
from plait.models import ScriptedModel
from plait.models.scripted import FunctionModel
from plait.plan_model import ExpertSpec, Plan, PlanTask
from plait.run.base import RunBase
from plait.run.orchestrate import Orchestration, orchestrate
from plait.run.parallel import ParallelOutcome, PlanContext, run_plan
from plait.run.state import load_state
from plait.settings import Settings
from plait.ui.cost import cost_breakdown
from plait.ui.overview import render_cost
from plait.ui.report import render_html
from plait.ui.summary import summarize
from plait.workspace import LocalShell, Repo

RUN = "r1"
EXPERT = expert_id("core")
CORE = "FACTOR = 3\n\n\ndef scale(x):\n    return x * FACTOR\n"
ANSWERS = ["scale(x) in core.py:4 returns x * FACTOR", "FACTOR is 3 (core.py:1)", "nothing else calls scale"]


@pytest.fixture
def core_repo(repo: Repo) -> Repo:
    (repo.root / "core.py").write_text(CORE)
    git(repo.root, "add", "core.py")
    git(repo.root, "commit", "-q", "-m", "core")
    return repo


def _answer(text: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "answer", "arguments": {"answer": text}}]}


def _expert_script() -> dict[str, Any]:
    """Reads core.py for the first question, answers the others from what it read."""
    turns = [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "core.py"}}]},
        {"expect": "def scale", **_answer(ANSWERS[0])},
        _answer(ANSWERS[1]),
        _answer(ANSWERS[2]),
    ]
    return {"name": "core", "match": "You are `core`", "turns": turns}


def _worker(name: str, value: int, *, reads_core: bool = False) -> dict[str, Any]:
    """Asks the expert one question, then edits its own module and finishes."""
    ask = {"name": "ask_expert", "arguments": {"expert": "core", "question": f"{name}: how does scale work?"}}
    edit = {"name": "edit_file", "arguments": {"path": f"{name}.py", "old": "return 0", "new": f"return {value}"}}
    turns: list[dict[str, Any]] = [{"tool_calls": [ask]}]
    if reads_core:
        turns.insert(0, {"tool_calls": [{"name": "read_file", "arguments": {"path": "core.py"}}]})
    turns += [
        {"expect": "expert `core` answers", "tool_calls": [edit]},
        {"tool_calls": [{"name": "finish", "arguments": {"summary": f"{name} returns {value}"}}]},
    ]
    return {"name": name, "match": f"Your task is `{name}`", "turns": turns}


def _script(*, gamma_reads: bool = False) -> list[dict[str, Any]]:
    return [_worker("alpha", 1), _worker("beta", 2), _worker("gamma", 3, reads_core=gamma_reads), _expert_script()]


def _plan(experts: list[ExpertSpec] | None = None) -> Plan:
    tasks = [
        PlanTask(id=i, title=f"change {i}", instructions=f"Make {i} scale its value.", writes=[f"{i}.py"])
        for i in ("alpha", "beta", "gamma")
    ]
    return Plan(mode="parallel", reason="independent modules", tasks=tasks, experts=experts or [])


SPEC = ExpertSpec(name="core", area=["core.py"], brief="The scaling core.")


def _context(repo: Repo, store: SQLiteEventStore, model: Any, **state: Any) -> PlanContext:
    budget = Budget("run", Limits(), RunLog(store, RUN))
    return PlanContext(
        repo=repo,
        settings=Settings(concurrency=3, experts=[SPEC]),
        model=model,
        log=RunLog(store, RUN),
        base=RunBase(repo.head(), "main"),
        runners=lambda path, agent, env: LocalShell(),
        budget=budget,
        **state,
    )


def _of(store: SQLiteEventStore, kind: type[Event], agent: str | None = None) -> list[Any]:
    return [e for e in store.events(RUN) if isinstance(e, kind) and (agent is None or e.agent == agent)]


def _expert_reads(store: SQLiteEventStore) -> list[ToolCalled]:
    return [e for e in _of(store, ToolCalled, EXPERT) if e.call.name == "read_file"]


def _asked_results(store: SQLiteEventStore) -> dict[str, str]:
    """What each worker's ask_expert call returned."""
    return {e.agent: e.output for e in _of(store, ToolReturned) if e.name == "ask_expert"}


def test_three_workers_share_one_reading_by_the_expert(core_repo: Repo, tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "events.db")
    model = ScriptedModel(conversations=_script(gamma_reads=True))
    integrator = MergeTreeIntegrator(core_repo, RUN, core_repo.head())
    outcome = asyncio.run(run_plan(_context(core_repo, store, model), _plan(), integrator))

    model.assert_complete()
    assert outcome.status == "done" and set(outcome.results) == {"alpha", "beta", "gamma"}
    assert len(_expert_reads(store)) == 1  # one reading of the code for three questions
    answered = _of(store, QuestionAnswered)
    assert sorted(a.asker for a in answered) == ["alpha", "beta", "gamma"]
    assert [a.reads for a in sorted(answered, key=lambda a: a.number)] == [1, 0, 0]
    got = _asked_results(store)
    assert set(got) == {"alpha", "beta", "gamma"}
    assert {next(t for t in ANSWERS if t in out) for out in got.values()} == set(ANSWERS)
    # the workers were told of the expert, and the expert is no task of the run
    prompt = next(e for e in store.events(RUN, agent="alpha", kinds=["prompt"]))
    assert "`core` owns core.py: The scaling core." in prompt.user  # type: ignore[union-attr]
    assert {e.agent for e in _of(store, TaskFinished)} == {"alpha", "beta", "gamma"}
    assert [e.commit for e in _of(store, ExpertStarted)] == [core_repo.head()]
    # its spending is its own, and the trade against the reading it saved is measured
    costs = cost_breakdown(store.events(RUN))
    assert costs.by_agent[EXPERT].calls == 4 and costs.by_phase["experts"].calls == 4
    (expert,) = costs.experts
    assert (expert.answered, expert.from_memory, expert.reads) == (3, 2, 1)
    assert expert.spent_tokens == costs.by_agent[EXPERT].usage.total_tokens > 0
    # alpha and beta were saved the reading of core.py; gamma read it itself, so it was saved nothing
    read = next(e for e in _of(store, ToolReturned, EXPERT) if e.name == "read_file")
    assert expert.saved_tokens == 2 * (len(read.output) // 4) > 0
    assert costs.as_json()["experts"]["saved_tokens_estimate"] == expert.saved_tokens
    shown = Console(width=200, file=io.StringIO(), record=True)
    render_cost(shown, costs)
    text = shown.export_text()
    assert "by expert" in text and "saved reading is an estimate" in text and "answering 3 question(s)" in text
    html = render_html(store.events(RUN))
    assert f'data-saved-tokens="{expert.saved_tokens}"' in html and f"<td>{expert.spent_tokens}</td>" in html
    assert summarize(RUN, store.events(RUN)).experts == {EXPERT: 3}
    # its checkout of the base is gone with the run
    assert git(core_repo.root, "worktree", "list").count("\n") == 0
    assert not (core_repo.plait_dir() / "worktrees" / RUN / "_experts").exists()
    store.close()


def _is_expert(request: ModelRequest) -> bool:
    return "You are `core`" in request.system


def _turn(request: ModelRequest) -> int:
    return sum(isinstance(m, AssistantMessage) for m in request.messages)


def test_a_resumed_run_does_not_pay_again_for_answered_questions(core_repo: Repo, tmp_path: Path) -> None:
    db = tmp_path / "events.db"
    store = SQLiteEventStore(db)
    scripted = ScriptedModel(conversations=_script())
    reached = asyncio.Event()

    async def hold_the_third_answer(request: ModelRequest) -> ModelResponse:
        if _is_expert(request) and _turn(request) == 3:
            reached.set()
            await asyncio.Event().wait()  # the process dies while the expert answers the third question
        return await scripted.complete(request)

    async def first() -> None:
        model = FunctionModel(hold_the_third_answer, name=scripted.name)
        integrator = MergeTreeIntegrator(core_repo, RUN, core_repo.head())
        running = asyncio.ensure_future(run_plan(_context(core_repo, store, model), _plan(), integrator))
        await reached.wait()
        running.cancel()
        with pytest.raises(asyncio.CancelledError):
            await running

    asyncio.run(first())
    assert sorted(a.number for a in _of(store, QuestionAnswered)) == [1, 2]
    store.close()

    store = SQLiteEventStore(db)
    state = load_state(RunLog(store, RUN))
    assert state.finished is not None and state.finished.status == "interrupted"
    assert not any(t.startswith("expert:") for t in state.attempts)  # an expert is not an unfinished task
    model = ScriptedModel(conversations=_script())
    integrator = MergeTreeIntegrator(core_repo, "r1-resumed", core_repo.head())
    outcome: ParallelOutcome = asyncio.run(
        run_plan(_context(core_repo, store, model, state=state), _plan(), integrator)
    )

    assert outcome.status == "done" and all(r.status == "done" for r in outcome.results.values())
    # the expert's conversation was read back from the log: the only call paid again is the unanswered one
    assert [_turn(r) for r in model.calls if _is_expert(r)] == [3]
    assert sorted(a.number for a in _of(store, QuestionAnswered)) == [1, 2, 3]
    assert len(_expert_reads(store)) == 1
    finished = [e.call for e in _of(store, ModelCallFinished, EXPERT)]
    assert sorted(finished) == [1, 2, 3, 4]  # no model call of the expert answered twice
    assert set(_asked_results(store)) == {"alpha", "beta", "gamma"}
    assert len(_of(store, ExpertStarted)) == 1
    assert git(core_repo.root, "worktree", "list").count("\n") == 0
    store.close()


def _planner(experts: list[dict[str, Any]]) -> dict[str, Any]:
    plan = _plan().model_dump(mode="json") | {"experts": experts}
    return {
        "name": "planner",
        "match": "You are the planner",
        "turns": [{"tool_calls": [{"name": "submit_plan", "arguments": plan}]}],
    }


_TRIAGE = {
    "name": "triage",
    "match": "choose the mode for this task",
    "turns": [{"tool_calls": [{"name": "choose_mode", "arguments": {"mode": "parallel", "reason": "three modules"}}]}],
}


def _orchestration(repo: Repo, store: SQLiteEventStore, model: Any) -> Orchestration:
    return Orchestration(
        repo=repo,
        task="Make every module scale its value.",
        settings=Settings(concurrency=3, verify_command="true"),
        model=model,
        log=RunLog(store, RUN),
        base=RunBase(repo.head(), "main"),
        runners=lambda path, agent, env: LocalShell(),
        use_llm_resolver=False,
    )


def test_the_planner_proposes_an_expert_the_workers_ask(core_repo: Repo, tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "events.db")
    bad = {"name": "web", "area": ["web/**"]}
    good = {"name": "core", "area": ["core.py"], "brief": "The scaling core."}
    # the first plan names an area that matches no file: it is rejected and the planner fixes it
    planner = _planner([bad, good])
    planner["turns"] += _planner([good])["turns"]
    model = ScriptedModel(conversations=[_TRIAGE, planner, *_script()])
    outcome = asyncio.run(orchestrate(_orchestration(core_repo, store, model)))

    model.assert_complete()
    assert isinstance(outcome, ParallelOutcome) and outcome.status == "done"
    rejected = [e for e in store.events(RUN, kinds=["plan_rejected"])]
    assert len(rejected) == 1 and "'web'" in rejected[0].error  # type: ignore[union-attr]
    (started,) = _of(store, ExpertStarted)
    assert (started.name, started.origin, started.area) == ("core", "planner", ["core.py"])
    assert len(_expert_reads(store)) == 1 and len(_of(store, QuestionAnswered)) == 3
    assert set(_asked_results(store)) == {"alpha", "beta", "gamma"}
    store.close()


def test_a_retried_attempt_asks_anew(core_repo: Repo, tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "events.db")
    ask = _worker("alpha", 1)["turns"][0]
    failing = {
        "name": "alpha-1",
        "match": "Your task is `alpha`",
        "turns": [ask] + [{"tool_calls": [{"name": "nope"}]}] * 3,
    }
    retry = _worker("alpha", 1) | {"name": "alpha-2", "match": "Your task is `alpha`.*A previous attempt"}
    expert = _expert_script()
    expert["turns"] = expert["turns"][:3]
    model = ScriptedModel(conversations=[retry, failing, expert])
    plan = Plan(mode="parallel", reason="one task", tasks=_plan().tasks[:1])
    integrator = MergeTreeIntegrator(core_repo, RUN, core_repo.head())
    outcome = asyncio.run(run_plan(_context(core_repo, store, model), plan, integrator))

    model.assert_complete()
    assert outcome.results["alpha"].status == "done" and outcome.results["alpha"].attempts == 2
    # the second attempt's call has the same id as the first's, yet it is a question of its own
    asked = [e for e in store.events(RUN, kinds=["question"])]
    assert len({q.key for q in asked}) == 2  # type: ignore[union-attr]
    returned = [e.output for e in _of(store, ToolReturned, "alpha") if e.name == "ask_expert"]
    assert len(returned) == 2 and ANSWERS[1] in returned[1]
    assert len(_expert_reads(store)) == 1
    store.close()


def test_experts_are_declared_in_the_repository_config(tmp_path: Path) -> None:
    from plait.errors import UsageError
    from plait.settings import load_settings

    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / ".plait.toml").write_text(
        '[[experts]]\nname = "core"\narea = ["core.py", "lib/**"]\nbrief = "The scaling core."\n'
    )
    layered = load_settings(repo, env={"HOME": str(tmp_path)})
    assert layered.settings.experts == [ExpertSpec(name="core", area=["core.py", "lib/**"], brief="The scaling core.")]
    assert '"name": "core"' in dict((k, v) for k, v, _ in layered.rows())["experts"]
    (repo / ".plait.toml").write_text('[[experts]]\nname = "no spaces"\n')
    with pytest.raises(UsageError, match=r"setting 'experts\[0\]\.name' from repo file"):
        load_settings(repo, env={"HOME": str(tmp_path)})


def test_a_plan_names_each_expert_once_over_tracked_files() -> None:
    from plait.plan_model import parse_plan

    data = _plan().model_dump(mode="json") | {
        "experts": [{"name": "core", "area": ["core.py"]}, {"name": "core", "area": ["../etc/**"]}]
    }
    plan, problems = parse_plan(data, ["alpha.py", "core.py"])
    assert plan is None
    assert "expert 'core': the name is used by more than one expert" in problems
    assert any("'../etc/**' must be a path relative to the root" in p for p in problems)
    assert any("matches no tracked file" in p for p in problems)
    assert parse_plan(data | {"experts": [{"name": "core", "area": "core.py"}]}, ["core.py"])[1] == []
