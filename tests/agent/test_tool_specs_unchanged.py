"""The tools each kind of agent is offered, byte for byte as before they were declared as `Tool`s.

A model is shown these specs on every call, and a resumed agent's calls must match its log: the digests are of
the specs as the wrappers that dispatched on the call's name gave them.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import cast

from plait.agent.tools import Toolbox
from plait.agent.toolset import Tool, Toolset
from plait.coord import Board, Leases, coord_tools
from plait.coord.answering import answer_tools
from plait.coord.asking import asking_tools
from plait.coord.experts import Expert, Experts
from plait.events import SQLiteEventStore
from plait.events.runlog import RunLog
from plait.models import PriceTable, ScriptedModel
from plait.plan.planner import PlanSubmissions
from plait.plan_model import ExpertSpec, Plan, PlanTask
from plait.run._lead import lead_ask_tools, read_only
from plait.run.investigate import Investigation, _AnswerArgs, _answered, investigate_tools
from plait.run.session import Session, _session_tools
from plait.workspace import LocalShell

DIGESTS = {
    "expert": "e7ada2cde94f3d2c14debe294ee671f1f017ac2b07b1a616d2905a9396ec87fd",
    "investigation_lead": "6649fa0e2b3928c1cbccee9e400825d59aaf60d7b7e26c17998f4e56a83eb192",
    "investigator": "f428531ba71405baf16630b4ea2842d812371b3d17b153afe51ebeeff9d6eae6",
    "planner": "0223f92426c83feeb9fc248f8a69bf319fd58e30440ccd4d3147e928a9050d99",
    "planner_no_experts": "b177899c51a996cac512289c14837be89ff359c17a46c0e0d6ac5a4d3b39c1a1",
    "session_lead": "c00f12ef7358c8fd117eb765b8ecfbe124372b8eeaef12e4326b3397426d648d",
    "toolbox_read_only": "5539758e8b080a32e98c3709f60478359d8a1856251acef87c573a857667c06d",
    "worker": "2186ddd211092d38870398f5dc60945f180a0b5b504a50b86c2d9cd1d6dc7348",
    "worker_board_only": "78e00362d38a54c7554ef6971ba2547cb92483d8a74f64c9ec97ac913dcdcb43",
}
"""sha256 of `json.dumps([spec.model_dump(mode="json") ...], sort_keys=True)` for each toolset below."""


def _digest(tools: Toolset) -> str:
    specs = [s.model_dump(mode="json") for s in tools.specs()]
    return hashlib.sha256(json.dumps(specs, sort_keys=True).encode()).hexdigest()


def _toolsets(root: Path, store: SQLiteEventStore) -> dict[str, Toolset]:
    box = Toolbox(root, LocalShell(), command_timeout=120, output_limit=12000)
    ro = Toolbox(root, LocalShell(), read_only=True)
    plan = Plan(mode="parallel", reason="r", tasks=[PlanTask(id="a", title="A", instructions="do", writes=["a.py"])])
    board, leases = Board(RunLog(store, "r"), plan), Leases(RunLog(store, "r"), plan)
    spec = ExpertSpec(name="db", area=["src/db.py"], brief="The database.")
    expert = Expert(spec, log=RunLog(store, "r"), model=ScriptedModel(conversations=[]), prices=PriceTable(), root=root)
    investigation = cast(Investigation, None)  # only its tools' specs are read
    lead = read_only(ro) | investigate_tools(investigation)
    return {
        "worker": coord_tools(box, "a", board, leases) | asking_tools("a", Experts([expert])),
        "worker_board_only": coord_tools(box, "a", board, None),
        "toolbox_read_only": ro,
        "expert": answer_tools(ro),
        "investigator": answer_tools(ro, structured=True),
        "planner": PlanSubmissions(ro, log=RunLog(store, "r")).tools,
        "planner_no_experts": PlanSubmissions(ro, log=RunLog(store, "r"), experts=False).tools,
        "investigation_lead": lead
        | lead_ask_tools("lead", Experts(), "investigation")
        | Toolset([Tool("answer", _AnswerArgs, _answered)]),
        "session_lead": lead | lead_ask_tools("lead", Experts(), "session") | _session_tools(cast(Session, None)),
    }


def test_every_agent_is_offered_the_same_specs_as_before(tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "events.db")

    digests = {name: _digest(tools) for name, tools in _toolsets(tmp_path, store).items()}

    assert digests == DIGESTS
    store.close()
