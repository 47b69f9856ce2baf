from __future__ import annotations

import asyncio
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from plait.agent.loop import Agent, AgentResult
from plait.agent.tools import Toolbox
from plait.coord import Board, Leases, coord_tools
from plait.events import NotePosted, SQLiteEventStore, ToolReturned
from plait.events.runlog import RunLog
from plait.messages import Model, ModelRequest, ModelResponse, ToolCall, UserMessage
from plait.models import FunctionModel, PriceTable, ScriptedModel
from plait.plan_model import Plan
from plait.workspace import LocalShell, Repo, Worktree

RUN = "r1"


def _agent(task: str, model: Model, root: Path, store: SQLiteEventStore, board: Board, leases: Leases) -> Agent:
    tools = coord_tools(Toolbox(root, LocalShell()), task, board, leases, root=root)
    return Agent(
        log=RunLog(store, RUN),
        agent_id=task,
        model=model,
        toolbox=tools,
        prices=PriceTable(),
        system="test agent",
        notes=board.notes_for(task),
    )


def _reply(name: str, **arguments: Any) -> ModelResponse:
    return ModelResponse(tool_calls=(ToolCall.parse(f"c-{name}", name, arguments),))


def _results(store: SQLiteEventStore, agent: str) -> list[ToolReturned]:
    return [e for e in store.events(RUN, agent=agent, kinds=["tool_result"]) if isinstance(e, ToolReturned)]


def test_the_tools_offer_post_note_and_claim_before_finish(store: SQLiteEventStore, plan: Plan, repo: Path) -> None:
    tools = coord_tools(
        Toolbox(repo, LocalShell()), "api", Board(RunLog(store, RUN), plan), Leases(RunLog(store, RUN), plan)
    )
    names = [s.name for s in tools.specs()]
    assert names[-3:] == ["post_note", "claim", "finish"] and "write_file" in names
    described = {s.name: s.description for s in tools.specs()}
    assert "interface" in described["post_note"] and "next turn" in described["post_note"]
    outcome = asyncio.run(tools.execute(ToolCall.parse("1", "post_note", {"topic": "x"})))
    assert outcome.format_error and "text" in outcome.output


def test_an_interface_decision_reaches_its_consumer_before_it_writes_the_call(
    store: SQLiteEventStore, plan: Plan, repo: Path, start: Callable[..., None]
) -> None:
    start("api", "ui")
    board, leases = Board(RunLog(store, RUN), plan), Leases(RunLog(store, RUN), plan)
    decision = "post(entry: Entry) -> int; raises LedgerClosed when the ledger is closed"

    def api(request: ModelRequest) -> ModelResponse:
        if sum(1 for m in request.messages if m.kind == "assistant") == 0:
            return _reply("post_note", topic="ledger-api", text=decision, paths=["src/ledger.py"])
        return _reply("finish", summary="decided the interface")

    async def ui(request: ModelRequest) -> ModelResponse:
        turn = sum(1 for m in request.messages if m.kind == "assistant")
        if turn == 0:
            deadline = time.monotonic() + 10
            while not store.events(RUN, kinds=["note"]):
                assert time.monotonic() < deadline, "the api agent never posted its decision"
                await asyncio.sleep(0.01)
            return _reply("read_file", path="src/models.py")
        if turn == 1:
            notes = [m.text for m in request.messages if isinstance(m, UserMessage) and "Notes from" in m.text]
            call = "ledger.post(entry)" if notes and decision in notes[0] else "ledger.add(entry)"
            return _reply("write_file", path="src/ui/view.py", content=f"{call}\n")
        return _reply("finish", summary="wrote the call")

    ui_model = FunctionModel(ui)

    async def both() -> tuple[AgentResult, AgentResult]:
        a = _agent("api", FunctionModel(api), repo, store, board, leases)
        b = _agent("ui", ui_model, repo, store, board, leases)
        # the consumer starts first: its first turn is asked before the decision exists
        consumed, decided = await asyncio.gather(b.run("consume"), a.run("decide"))
        return decided, consumed

    results = asyncio.run(both())

    assert all(r.ok for r in results)
    assert (repo / "src" / "ui" / "view.py").read_text() == "ledger.post(entry)\n"
    assert "posted; it reaches ui" in _results(store, "api")[0].output
    second = ui_model.calls[1].messages
    assert any(isinstance(m, UserMessage) and decision in m.text for m in second)
    # the decision arrived before the request that wrote the call, and only once
    assert not any(isinstance(m, UserMessage) and "Notes from" in m.text for m in ui_model.calls[0].messages)
    assert sum(isinstance(m, UserMessage) and decision in m.text for m in ui_model.calls[2].messages) == 1
    notes = [e for e in store.events(RUN, kinds=["note"]) if isinstance(e, NotePosted)]
    assert [(n.agent, n.topic, n.paths) for n in notes] == [("api", "ledger-api", ["src/ledger.py"])]


def test_a_claim_that_may_not_wait_is_refused_naming_the_holder_who_is_asked_by_note(
    store: SQLiteEventStore, plan: Plan, repo: Path, start: Callable[..., None]
) -> None:
    start("api", "ui")
    board, leases = Board(RunLog(store, RUN), plan), Leases(RunLog(store, RUN), plan)
    first = ScriptedModel(
        [
            {
                "tool_calls": [
                    {"name": "edit_file", "arguments": {"path": "README.md", "old": "# ledger", "new": "# Ledger API"}}
                ]
            },
            {"expect": "README.md", "tool_calls": [{"name": "finish", "arguments": {"summary": "titled"}}]},
        ]
    )
    second = ScriptedModel(
        [
            {
                "tool_calls": [
                    {"name": "claim", "arguments": {"path": str(repo / "README.md"), "why": "rewrite", "wait": False}}
                ]
            },
            {
                "expect": "held by task `api` (Add the ledger API)",
                "tool_calls": [
                    {"name": "post_note", "arguments": {"topic": "readme", "text": "add a UI section", "to": ["api"]}}
                ],
            },
            {"expect": "posted; it reaches api", "tool_calls": [{"name": "finish", "arguments": {"summary": "asked"}}]},
        ]
    )

    assert asyncio.run(_agent("api", first, repo, store, board, leases).run("title")).ok
    assert asyncio.run(_agent("ui", second, repo, store, board, leases).run("rewrite")).ok

    first.assert_complete()
    second.assert_complete()
    assert (repo / "README.md").read_text() == "# Ledger API\n"
    refused = _results(store, "ui")[0]
    assert refused.is_error and "refused: README.md is held by task `api`" in refused.output
    assert "add a UI section" in "\n".join(board.take("api"))
    leases.release_all("api")
    retry = asyncio.run(
        coord_tools(Toolbox(repo, LocalShell()), "ui", board, leases).execute(
            ToolCall.parse("9", "write_file", {"path": "README.md", "content": "mine\n"})
        )
    )
    assert not retry.is_error and (repo / "README.md").read_text() == "mine\n"


def test_files_a_command_changed_that_another_running_task_holds_are_put_back(
    store: SQLiteEventStore, plan: Plan, repo: Path, start: Callable[..., None]
) -> None:
    (repo / "src" / "api").mkdir()
    (repo / "src" / "api" / "ledger.py").write_text("def post(entry): ...\n")
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "api"], cwd=repo, check=True)
    start("api", "ui")
    git = Repo.discover(repo)
    worktree = Worktree(path=repo, branch="main", base=git.head(), repo=git)
    leases = Leases(RunLog(store, RUN), plan)
    tools = coord_tools(Toolbox(repo, LocalShell()), "ui", Board(RunLog(store, RUN), plan), leases, worktree=worktree)
    command = (
        "mkdir -p src/ui src/api/new && echo 'view' > src/ui/view.py && echo 'changed' > src/api/ledger.py"
        " && echo 'made' > src/api/new/mod.py && echo '# mine' >> README.md && echo 'exit code of mine'"
    )

    outcome = asyncio.run(tools.execute(ToolCall.parse("1", "run", {"command": command})))

    assert outcome.output.startswith("exit code 0") and not outcome.is_error
    assert "plait put back these files" in outcome.output
    assert "- src/api/ledger.py: held by task `api` (Add the ledger API)" in outcome.output
    assert "- src/api/new/mod.py: held by task `api`" in outcome.output
    assert (repo / "src" / "api" / "ledger.py").read_text() == "def post(entry): ...\n"
    assert not (repo / "src" / "api" / "new" / "mod.py").exists()
    # its own file and a file nobody holds (now claimed for it) keep the command's changes
    assert (repo / "src" / "ui" / "view.py").read_text() == "view\n"
    assert (repo / "README.md").read_text() == "# ledger\n# mine\n"
    assert leases.holders()["README.md"].task == "ui" and "README.md" not in outcome.output


def test_a_call_of_an_unknown_tool_is_told_every_tool_and_any_tool_notes_arguments_it_ignored(
    store: SQLiteEventStore, plan: Plan, repo: Path
) -> None:
    tools = coord_tools(
        Toolbox(repo, LocalShell()), "api", Board(RunLog(store, RUN), plan), Leases(RunLog(store, RUN), plan)
    )

    unknown = asyncio.run(tools.execute(ToolCall.parse("1", "post", {"text": "hi"})))
    assert unknown.format_error and unknown.output == (
        "unknown tool 'post': the tools are read_file, list_files, search, edit_file, write_file, run, "
        "post_note, claim, finish."
    )
    posted = asyncio.run(
        tools.execute(ToolCall.parse("2", "post_note", {"topic": "all", "text": "hi", "urgent": True}))
    )
    note, said = posted.output.split("\n")
    assert note == "(unknown argument 'urgent' ignored: post_note takes topic (required), text (required), paths, to)"
    assert said.startswith("posted; it reaches")
