"""Contract tasks: an interface another task consumes is written first, as a stub, by its own task.

One contract task per file: the contracts that live in the same file share it. The owner and the
consumers of each contract depend on it, so they all start from the commit with the stub.
"""

from __future__ import annotations

import re

from plait.globs import normalize
from plait.plan._decision import OverlapDecision, add_dependency, ancestors, names
from plait.plan_model import Plan, PlanTask, slugify

__all__ = ["insert_contract_tasks"]

_HOW = (
    "Write only the interface: types, signatures and docstrings, so that code using it imports and "
    "type-checks. A new name gets a body that raises NotImplementedError (or the language's equivalent); a name "
    "the file already has keeps its working body, with only its signature changed as declared, so that nothing "
    "that passes today fails on your commit."
)
_CODE = re.compile(
    r"^\s*(?:@|(?:async\s+)?def\b|class\b|function\b|fn\b|func\b|interface\b|type\b|struct\b|enum\b"
    r"|trait\b|export\b|pub\b|[A-Za-z_][\w.]*\s*[(\[<])"
)
"""A signature that declares code (a function, a class, a type): what a stub can stand in for. A flag, a data
shape or a file format has nothing to import, so its consumers code against the declared text alone."""


def _parties(tasks: list[PlanTask], plan: Plan, name: str) -> tuple[PlanTask | None, list[PlanTask]]:
    """The work task that implements contract `name`, and the others that consume it."""
    work = [t for t in tasks if t.kind == "work"]
    owner = next((t for t in work if name in t.provides), None)
    contract = plan.contract(name)
    if owner is None and contract is not None:
        owner = next((t for t in work if t.id == contract.owner), None)
    return owner, [t for t in work if name in t.consumes and t is not owner]


def _free_id(tasks: list[PlanTask], name: str) -> str:
    base = "contract-" + slugify(name, 31)
    stub_id, n = base, 2
    while any(t.id == stub_id for t in tasks):
        stub_id, n = f"{base}-{n}", n + 1
    return stub_id


def _describe(stub: PlanTask, tasks: list[PlanTask], plan: Plan) -> None:
    """(Re)write the stub task's title and instructions from the contracts it provides."""
    declared = [c for c in plan.contracts if c.name in stub.provides]
    owners = [t.id for t in tasks if t.kind == "work" and set(t.provides) & set(stub.provides)]
    users = [t.id for t in tasks if t.kind == "work" and set(t.consumes) & set(stub.provides)]
    listed = "\n\n".join(f"{c.name}:\n{c.signature.strip()}" for c in declared)
    stub.title = f"Write the {names(stub.provides)} interface{'s' if len(declared) > 1 else ''} as a stub"
    stub.instructions = (
        f"In {stub.writes[0]}, write exactly as declared:\n\n{listed}\n\n{_HOW} "
        f"Task(s) {names(owners)} implement it; task(s) {names(users)} build on your stub at the same time."
    )


def _wait_for_owner(
    tasks: list[PlanTask], name: str, owner: PlanTask, consumers: list[PlanTask]
) -> list[OverlapDecision]:
    reach = ancestors(tasks)
    waiting = [c for c in consumers if c.id not in reach[owner.id] and owner.id not in reach[c.id]]
    for consumer in waiting:
        add_dependency(consumer, owner.id)
    if not waiting:
        return []
    ids = [c.id for c in waiting]
    who = "1 task consumes" if len(consumers) == 1 else f"{len(consumers)} tasks consume"
    why = f"{who} {name}, which has no path to write a stub in, so it waits for its owner"
    return [OverlapDecision("order", (owner.id, *ids), (), f"{names(ids)} wait for {owner.id}", why)]


def insert_contract_tasks(tasks: list[PlanTask], plan: Plan) -> list[OverlapDecision]:
    """Add (or extend) a contract task for every contract another task consumes; change `tasks` in place."""
    decisions: list[OverlapDecision] = []
    stubs = {normalize(t.writes[0]): t for t in tasks if t.kind == "contract" and len(t.writes) == 1}
    for name in dict.fromkeys(n for t in tasks for n in t.consumes):
        owner, consumers = _parties(tasks, plan, name)
        contract = plan.contract(name)
        if owner is None or not consumers:
            continue
        if len(consumers) == 1:
            reach = ancestors(tasks)
            if owner.id in reach[consumers[0].id] or consumers[0].id in reach[owner.id]:
                continue  # already in order: the consumer starts from the owner's integrated work
        if contract is not None and not _CODE.match(contract.signature):
            continue  # nothing to stub: both sides work from the declared text at the same time
        if contract is None or not contract.path.strip():
            decisions.extend(_wait_for_owner(tasks, name, owner, consumers))
            continue
        path, dependents = normalize(contract.path), [owner, *consumers]
        common = set.intersection(*(set(t.depends_on) for t in dependents))
        stub = stubs.get(path)
        if stub is not None and name in stub.provides and all(stub.id in t.depends_on for t in dependents):
            continue
        if stub is None:
            stub = PlanTask(id=_free_id(tasks, name), title="-", instructions="-", writes=[path], kind="contract")
            stub.depends_on = [d for d in owner.depends_on if d in common]
            tasks.insert(min(tasks.index(t) for t in dependents), stub)
            stubs[path] = stub
            what = f"added task {stub.id}, which writes the {name} stub in {path} first"
        else:
            stub.depends_on = [d for d in stub.depends_on if d in common]
            what = f"task {stub.id} also writes the {name} stub in {path}"
        if name not in stub.provides:
            stub.provides.append(name)
        for task in dependents:
            add_dependency(task, stub.id)
        _describe(stub, tasks, plan)
        ids = [t.id for t in dependents]
        why = f"{len(consumers)} tasks consume {name}: they build on a committed stub instead of an assumption"
        decisions.append(
            OverlapDecision("contract", (stub.id, *ids), (path,), f"{what}; {names(ids)} start from its commit", why)
        )
    return decisions
