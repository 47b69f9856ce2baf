"""What each worker of a parallel run is sent: its area of the repository and its rows of the plan, cacheably.

The end-to-end test runs the plan with the real Anthropic provider through its SDK over HTTP to the local
wire server, which reports prompt caching as Anthropic bills it; only the model's replies are scripted.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from integrators import MergeTreeIntegrator, git

from plait.agent.prompts import shared_prefix
from plait.events import ModelCallFinished, SQLiteEventStore
from plait.events.runlog import RunLog
from plait.messages import SYSTEM_BREAK
from plait.models import AnthropicModel, PriceTable
from plait.plan import repo_map
from plait.plan_model import Contract, Plan, PlanTask
from plait.run._brief import plan_overview, worker_systems
from plait.run.base import RunBase
from plait.run.parallel import PlanContext, run_plan
from plait.settings import Settings
from plait.workspace import LocalShell, Repo
from wire_cache import PromptCache, prompt_tokens
from wire_server import WireServer

_FILES = {
    "shop/__init__.py": '"""The shop."""\n',
    "shop/money.py": "from decimal import Decimal\n\ndef cents(amount: Decimal) -> int:\n    return int(amount)\n",
    "shop/cart.py": "from shop.money import cents\n\ndef total(prices: list) -> int:\n    return len(prices)\n",
    "shop/tax.py": "from shop.money import cents\n\ndef vat(amount) -> int:\n    return cents(amount) // 5\n",
    "admin/users.py": "def add_user(name: str) -> None:\n    pass\n\ndef remove_user(name: str) -> None:\n    pass\n",
    "admin/roles.py": "from admin.users import add_user\n\ndef grant(name: str, role: str) -> None:\n    pass\n",
    **{f"vendor/lib{i}.py": f"def helper_{i}(value: int) -> int:\n    return value + {i}\n" for i in range(150)},
}
"""Too many files for one map to list them all in an area map's room."""


def _task(task_id: str, *writes: str, **more: Any) -> PlanTask:
    title, instructions = f"change {task_id}", f"Change {task_id}."
    return PlanTask(id=task_id, title=title, instructions=instructions, writes=list(writes), **more)


def _plan() -> Plan:
    tasks = [
        _task("cart", "shop/cart.py", "tests/test_cart.py", consumes=["cents"]),
        _task("money", "shop/money.py", provides=["cents"]),
        _task("users", "admin/users.py", "tests/test_users.py"),
        _task("roles", "admin/roles.py", depends_on=["users"]),
    ]
    cents = Contract(name="cents", signature="def cents(amount: Decimal) -> int", owner="money", path="shop/money.py")
    return Plan(mode="parallel", reason="separate modules", tasks=tasks, contracts=[cents])


@pytest.fixture
def shop(repo: Repo) -> Repo:
    for path, text in _FILES.items():
        (repo.root / path).parent.mkdir(parents=True, exist_ok=True)
        (repo.root / path).write_text(text)
    git(repo.root, "add", "-A")
    git(repo.root, "commit", "-q", "-m", "the shop")
    return repo


def test_a_worker_is_sent_its_area_and_its_plan_rows_only(shop: Repo) -> None:
    plan = _plan()
    systems = worker_systems(plan, shop.root)
    cart, users = systems["cart"], systems["users"]
    everything = shared_prefix(repo_map(shop.root), plan_overview(plan))

    # its own files and the module they import, with their definitions; nothing of admin/ or vendor/
    assert "shop/cart.py" in cart and "def total(prices: list) -> int" in cart
    assert "shop/money.py" in cart and "def cents(amount: Decimal) -> int" in cart
    assert "New files of your task: tests/test_cart.py" in cart
    assert "add_user" not in cart and "helper_" not in cart and "admin/users.py" not in cart
    assert "def helper_1(" in everything  # what every worker was sent before
    # its rows of the plan: its task, the owner of the module it imports, the contract it consumes
    plan_part = cart.split("The plan:\n", 1)[1]
    assert "- cart (your task)" in plan_part and "- money: change money (writes shop/money.py" in plan_part
    assert "- contract cents: def cents(amount: Decimal) -> int (in shop/money.py, by money)" in plan_part
    assert "users" not in plan_part and "roles" not in plan_part and "2 others work elsewhere" in plan_part
    # users: the task that starts from its work, and its module's importer
    assert "- roles (starts from your work)" in users and "admin/roles.py" in users and "shop/cart.py" not in users
    assert len(cart) < len(everything) * 2 // 3 and len(users) < len(everything) * 2 // 3


def test_workers_prompts_share_the_instructions_word_for_word_then_differ(shop: Repo) -> None:
    systems = worker_systems(_plan(), shop.root)
    common = os.path.commonprefix(list(systems.values()))
    instructions = shared_prefix("", "").split(SYSTEM_BREAK)[0]
    assert common.startswith(instructions + SYSTEM_BREAK + "The repository around your task:\n")
    for system in systems.values():  # the shared part first, ended by the break; each worker's own part after it
        assert system.split(SYSTEM_BREAK)[0] == instructions and "Your area:" in system.split(SYSTEM_BREAK)[1]


def test_in_a_small_repository_every_worker_gets_the_whole_map_word_for_word(shop: Repo) -> None:
    small = {path: text for path, text in _FILES.items() if not path.startswith("vendor/")}
    for path in _FILES:
        if path.startswith("vendor/"):
            git(shop.root, "rm", "-q", path)
    git(shop.root, "commit", "-q", "-m", "no vendored code")
    systems = worker_systems(_plan(), shop.root)
    shared = {s.split(SYSTEM_BREAK)[0] for s in systems.values()}
    assert len(shared) == 1  # cached once for every worker: the instructions and the whole map
    [whole] = shared
    assert all(path in whole for path in small) and "def add_user(name: str) -> None" in whole
    assert "users" not in systems["cart"].split(SYSTEM_BREAK)[1]  # its rows of the plan are still its own


_ID = re.compile(r"Your task is `([a-z-]+)`")


def _reply(fmt: str, body: dict[str, Any]) -> dict[str, Any]:
    """Each worker writes a note in its first file, then finishes."""
    first = body["messages"][0]["content"][0]["text"]
    task = _ID.search(first)
    assert task is not None, first[:200]
    turns = sum(m["role"] == "assistant" for m in body["messages"])
    if turns == 0:
        path = {"cart": "shop/cart.py", "money": "shop/money.py", "users": "admin/users.py", "roles": "admin/roles.py"}
        write = {"path": path[task[1]], "content": f"# changed by {task[1]}\n"}
        return {"tool_calls": [{"name": "write_file", "arguments": write}]}
    return {"tool_calls": [{"name": "finish", "arguments": {"summary": f"{task[1]} done"}}]}


def test_workers_calls_read_their_prefix_from_the_cache_and_are_billed_for_it(shop: Repo, tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "events.db")
    base = RunBase(shop.head(), "main")
    cache = PromptCache(min_tokens=512)
    with WireServer(_reply, cache=cache) as server:
        model = AnthropicModel("anthropic:claude-haiku-4-5", "claude-haiku-4-5", api_key="k", base_url=server.url)
        ctx = PlanContext(
            repo=shop,
            settings=Settings(concurrency=1),
            model=model,
            log=RunLog(store, "r1"),
            base=base,
            runners=lambda path, agent, env: LocalShell(),
        )
        outcome = asyncio.run(run_plan(ctx, _plan(), MergeTreeIntegrator(shop, "r1", base.commit)))
        requests = server.requests
    assert outcome.status == "done", outcome.results
    assert set(cache.breakpoints) <= {3, 4}  # tools, system, and one or two in the conversation
    firsts = {_ID.search(r.body["messages"][0]["content"][0]["text"])[1]: r.body for r in requests[::-1]}  # type: ignore[index]
    # the system prompt's shared part, word for word, then its own, each a breakpoint; the tools are covered
    assert len({json.dumps(body["system"][0]) for body in firsts.values()}) == 1
    assert all(b["system"][1]["cache_control"] == {"type": "ephemeral"} for b in firsts.values())
    assert not any("cache_control" in tool for body in firsts.values() for tool in body["tools"])
    assert "shop/cart.py" not in firsts["users"]["system"][1]["text"]
    assert "admin/users.py" not in firsts["cart"]["system"][1]["text"]

    calls = [e for e in store.events("r1") if isinstance(e, ModelCallFinished)]
    body = next(iter(firsts.values()))
    shared = sum(prompt_tokens(piece) for piece in (*body["tools"], body["system"][0]))
    by_agent: dict[str, list[ModelCallFinished]] = {}
    for call in calls:
        by_agent.setdefault(call.agent, []).append(call)
    prices = PriceTable()
    for agent, (first, second) in by_agent.items():
        # the second call reads the whole first request back; the first reads the tools and instructions that
        # the first worker wrote
        assert second.response.usage.cached_tokens == first.response.usage.input_tokens, agent
        if agent != calls[0].agent:
            assert first.response.usage.cached_tokens == shared, agent
        for call in (first, second):
            assert call.cost_usd == pytest.approx(prices.cost(model.name, call.response.usage))
        # the read is billed at a tenth of the input price
        uncached = second.response.usage.model_copy(update={"cached_tokens": 0})
        assert second.cost_usd < prices.cost(model.name, uncached) / 2


def _defs(name: str, n: int, head: str = "") -> str:
    return head + "".join(
        f"def {name}_{i}(value: int, *, scale: float = 1.0) -> int:\n    return value\n\n" for i in range(n)
    )


def test_a_whole_map_shorter_than_half_the_areas_together_is_every_workers(repo: Repo) -> None:
    """Four modules that all import one core: each area shows nearly everything, so one shared map costs less."""
    files = {
        "pkg/__init__.py": "".join(f"from pkg.{m} import {m}_0\n" for m in "abcd"),
        "pkg/core.py": _defs("core", 16),
    }
    for m in "abcd":
        files[f"pkg/{m}.py"] = _defs(m, 14, "from pkg.core import core_0\n\n")
        files[f"tests/test_{m}.py"] = f"from pkg.{m} import {m}_0\n\n\ndef test_{m}(): ...\n"
    files.update({f"docs/page{i}.md": "# page\n" for i in range(30)})
    for path, text in files.items():
        (repo.root / path).parent.mkdir(parents=True, exist_ok=True)
        (repo.root / path).write_text(text)
    git(repo.root, "add", "-A")
    git(repo.root, "commit", "-q", "-m", "a package around one core")
    tasks = [_task(m, f"pkg/{m}.py", f"tests/test_{m}.py", "pkg/__init__.py") for m in "abcd"]
    plan = Plan(mode="parallel", reason="four modules", tasks=tasks, shared=["pkg/__init__.py"])
    systems = worker_systems(plan, repo.root)
    shared = {s.split(SYSTEM_BREAK)[0] for s in systems.values()}
    assert len(shared) == 1
    [whole] = shared
    assert "The repository:\n" in whole and all(path in whole for path in files)
    assert all("Your area:" not in s for s in systems.values())
