"""A process killed by its agent's own tool call (SIGKILL: no clean-up, nothing flushed at exit) leaves in the log
everything it acknowledged: the answer that asked for the call, on disk before the call ran, and the call itself,
whose append from the store's writer thread the agent waited for before running it.

Behaviour that must not change now that an agent's cheap events are appended off the event loop.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

from plait.events import SQLiteEventStore
from plait.events.types import ModelCallFinished, ToolCalled

_AGENT = r"""
import asyncio, os, sys
from pathlib import Path
from plait.agent.loop import Agent
from plait.agent.tools import Toolbox
from plait.events import SQLiteEventStore
from plait.events.runlog import RunLog
from plait.models import PriceTable, ScriptedModel
from plait.workspace import LocalShell

root = Path(sys.argv[1])
kill = {"tool_calls": [{"name": "run", "arguments": {"command": f"kill -9 {os.getpid()}; sleep 30"}}]}
finish = {"tool_calls": [{"name": "finish", "arguments": {"summary": "done"}}]}
agent = Agent(
    log=RunLog(SQLiteEventStore(root / "e.db"), "r"),
    agent_id="a",
    model=ScriptedModel([kill, finish]),
    toolbox=Toolbox(root / "work", LocalShell(), command_timeout=60, output_limit=4000),
    prices=PriceTable(),
    system="You are a test agent.",
)
asyncio.run(agent.run("kill yourself"))
"""


def test_an_agent_killed_by_its_tool_call_leaves_the_answer_and_the_call_logged(tmp_path: Path) -> None:
    (tmp_path / "work").mkdir()
    done = subprocess.run([sys.executable, "-c", _AGENT, str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == -signal.SIGKILL, done.stderr
    store = SQLiteEventStore(tmp_path / "e.db")
    events = store.events("r", agent="a")
    store.close()
    answers = [e for e in events if isinstance(e, ModelCallFinished)]
    calls = [e for e in events if isinstance(e, ToolCalled)]
    assert [a.response.tool_calls[0].name for a in answers] == ["run"]
    assert [c.call.name for c in calls] == ["run"]
    assert answers[0].seq < calls[0].seq
    assert [e.kind for e in events][:4] == ["prompt", "model_request", "model_response", "tool_call"]
