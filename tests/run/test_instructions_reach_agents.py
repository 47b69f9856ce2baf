"""The repository's AGENTS.md files reach the planner and every worker of a run, as the run's base commit has them.

A real repository, planner, worktrees, agent loops and merge queue; only the model is scripted. What each agent
was told is read from the log (the system prompt it was given) and from the requests the model received.
"""

from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path

import pytest
from integrators import git

from plait.coord.experts import expert_id
from plait.events import SQLiteEventStore
from plait.events.runlog import RunLog
from plait.events.types import PromptGiven
from plait.messages import SYSTEM_BREAK, ModelRequest, ModelResponse, ToolCall, UserMessage
from plait.models.scripted import FunctionModel, ScriptedModel
from plait.reconcile.ladder import default_resolvers, merge_commits
from plait.reconcile.llm_resolver import LLMResolver
from plait.run.base import RunBase
from plait.run.one_agent import run_one_agent
from plait.run.orchestrate import Orchestration, orchestrate
from plait.run.parallel import ParallelOutcome
from plait.run.session import Session, SessionConfig
from plait.settings import Settings
from plait.workspace import LocalShell, Repo

RUN = "r1"
ROOT_RULE = "ROOT RULE: every function has a docstring."
DB_RULE = "DB RULE: never write raw SQL."
WEB_RULE = "WEB RULE: views return dicts."
_TASK = re.compile(r"Your task is `([a-z]+)`")
_PLAN = {
    "mode": "parallel",
    "reason": "the database and the web layer are apart",
    "tasks": [
        {"id": "db", "title": "models", "instructions": "Add a model.", "writes": ["db/models.py"]},
        {"id": "web", "title": "views", "instructions": "Add a view.", "writes": ["web/views.py"]},
    ],
}


@pytest.fixture
def layered(repo: Repo) -> Repo:
    files = {
        "AGENTS.md": f"# Conventions\n{ROOT_RULE}\n",
        "db/AGENTS.md": f"{DB_RULE}\n",
        "db/models.py": "MODELS = []\n",
        "web/AGENTS.md": f"{WEB_RULE}\n",
        "web/views.py": "VIEWS = []\n",
    }
    for path, text in files.items():
        (repo.root / path).parent.mkdir(parents=True, exist_ok=True)
        (repo.root / path).write_text(text)
    git(repo.root, "add", "-A")
    git(repo.root, "commit", "-q", "-m", "layers")
    return repo


def _call(name: str, **arguments: object) -> ModelResponse:
    return ModelResponse(tool_calls=(ToolCall(id="c1", name=name, arguments=arguments),))


def _answer(request: ModelRequest) -> ModelResponse:
    first = next(m.text for m in request.messages if isinstance(m, UserMessage))
    if "Make a plan for this task" in first:
        return _call("submit_plan", **_PLAN)
    task = _TASK.search(first)
    name = task[1] if task else "main"
    if not any(m.kind == "assistant" for m in request.messages):
        path = {"db": "db/models.py", "web": "web/views.py", "main": "db/models.py"}[name]
        return _call("write_file", path=path, content=f"# by {name}\n")
    return _call("finish", summary=f"{name} done")


def _systems(store: SQLiteEventStore) -> dict[str, str]:
    return {e.agent: e.system for e in store.events(RUN, kinds=["prompt"]) if isinstance(e, PromptGiven)}


def test_the_planner_and_each_worker_get_the_root_file_and_their_own_directories(layered: Repo, tmp_path: Path) -> None:
    base = RunBase(layered.head(), "main")
    # after the run's base: a commit, and an uncommitted edit; neither is the run's
    (layered.root / "AGENTS.md").write_text("LATER RULE: committed after the base.\n")
    git(layered.root, "commit", "-q", "-am", "later")
    (layered.root / "db" / "AGENTS.md").write_text("DIRTY RULE: not committed.\n")
    store = SQLiteEventStore(tmp_path / "events.db")
    model = FunctionModel(_answer)
    o = Orchestration(
        repo=layered,
        task="Add a model and a view.",
        settings=Settings(concurrency=2, split="always", verify_command="true"),
        model=model,
        log=RunLog(store, RUN),
        base=base,
        runners=lambda path, agent, env: LocalShell(),
        use_llm_resolver=False,
    )
    outcome = asyncio.run(orchestrate(o))
    assert isinstance(outcome, ParallelOutcome) and outcome.status == "done", outcome

    systems = _systems(store)
    planner, db, web = systems["planner"], systems["db"], systems["web"]
    assert all(rule in planner for rule in (ROOT_RULE, DB_RULE, WEB_RULE))  # the root and the top-level directories
    assert "Project instructions (from AGENTS.md, db/AGENTS.md, web/AGENTS.md):" in planner
    for worker, own, other in ((db, DB_RULE, WEB_RULE), (web, WEB_RULE, DB_RULE)):
        shared, mine = worker.split(SYSTEM_BREAK)
        assert shared.count(ROOT_RULE) == 1 and ROOT_RULE not in mine
        assert own in mine and own not in shared and other not in worker
        assert "LATER RULE" not in worker and "DIRTY RULE" not in worker
    assert db.split(SYSTEM_BREAK)[0] == web.split(SYSTEM_BREAK)[0]  # cached once for both
    # the requests the model received said the same
    sent = {_TASK.search(next(m.text for m in r.messages if isinstance(m, UserMessage))): r.system for r in model.calls}
    asked = {m[1]: system for m, system in sent.items() if m is not None}
    assert asked == {"db": db, "web": web}
    common = os.path.commonprefix([db, web])
    assert common.startswith(db.split(SYSTEM_BREAK)[0] + SYSTEM_BREAK)
    store.close()


def test_one_agent_gets_the_root_file(layered: Repo, tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "events.db")
    outcome = asyncio.run(
        run_one_agent(
            layered,
            "Add a model.",
            settings=Settings(),
            model=FunctionModel(_answer),
            log=RunLog(store, RUN),
            base=RunBase(layered.head(), "main"),
            runner=LocalShell(),
        )
    )
    assert outcome.status == "done", outcome
    system = _systems(store)["main"]
    assert system.count(ROOT_RULE) == 1 and DB_RULE not in system and WEB_RULE not in system


def test_the_resolver_gets_the_root_file_and_the_conflicted_files_directories(layered: Repo) -> None:
    root = layered.root

    def commit(text: str, parent: str, message: str) -> str:
        git(root, "checkout", "-q", "--detach", parent)
        (root / "db" / "models.py").write_text(text)
        git(root, "commit", "-q", "-am", message)
        return git(root, "rev-parse", "HEAD").strip()

    base = layered.head()
    ours = commit("MODELS = ['user']\n", base, "add users")
    theirs = commit("MODELS = ['order']\n", base, "add orders")
    seen: list[ModelRequest] = []

    def answer(request: ModelRequest) -> ModelResponse:
        seen.append(request)
        return _call("resolve_conflicts", hunks=[{"id": "H1", "text": "MODELS = ['user', 'order']\n"}])

    resolvers = [*default_resolvers(), LLMResolver(FunctionModel(answer))]
    outcome = asyncio.run(merge_commits(layered, ours, theirs, resolvers=resolvers))

    assert outcome.commit is not None, outcome
    (request,) = seen
    assert ROOT_RULE in request.system and DB_RULE in request.system and WEB_RULE not in request.system
    assert "Project instructions (from AGENTS.md, db/AGENTS.md):" in request.system


def _session_model() -> ScriptedModel:
    def call(tool: str, **arguments: object) -> dict[str, object]:
        return {"tool_calls": [{"name": tool, "arguments": arguments}]}

    lead = [
        call("spawn_helper", name="db", area=["db/**"], brief="The models."),
        call("ask_expert", expert="db", question="What models are there?"),
        call("answer", answer="MODELS is empty."),
        call("ask_expert", expert="db", question="Any views?"),
        call("answer", answer="None in db."),
    ]
    helper = [call("read_file", path="db/models.py"), call("answer", answer="none"), call("answer", answer="none")]
    return ScriptedModel(
        conversations=[
            {"name": "lead", "match": "You are the lead of an interactive plait session", "turns": lead},
            {"name": "db", "match": "You are `db`", "turns": helper},
        ]
    )


def test_a_continued_session_keeps_the_prompts_it_was_given(layered: Repo, tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "events.db")
    first, second = _session_model(), _session_model()

    async def talk(model: ScriptedModel, settings: Settings, base: RunBase | None, text: str) -> str:
        runners = lambda log: lambda path, agent, env: LocalShell()  # noqa: E731
        session = Session(SessionConfig(layered, settings, model, RunLog(store, RUN), runners, base))
        await session.open()
        reply = await session.say(text)
        await session.close(None)
        return reply.text

    said = asyncio.run(talk(first, Settings(), RunBase(layered.head(), "main"), "What models are there?"))
    assert said == "MODELS is empty."
    # between the two processes the root's AGENTS.md changes, and so does the user's budget for instructions
    (layered.root / "AGENTS.md").write_text("LATER RULE: committed after the session started.\n")
    git(layered.root, "commit", "-q", "-am", "later")
    said = asyncio.run(talk(second, Settings(instructions_chars=20), None, "Any views?"))
    assert said == "None in db."

    systems = _systems(store)
    for agent, match in (("lead", "You are the lead"), (expert_id("db"), "You are `db`")):
        system = systems[agent]
        assert system.count(ROOT_RULE) == 1 and DB_RULE not in system and "LATER" not in system, agent
        assert {r.system for r in [*first.calls, *second.calls] if match in r.system} == {system}, agent
    assert any("You are `db`" in r.system for r in second.calls)  # the helper was asked again, live
