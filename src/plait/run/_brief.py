"""What the plan tells each agent of a parallel run: the plan's overview, and the interfaces of its own task."""

from __future__ import annotations

from plait.plan.model import Plan, PlanTask

__all__ = ["interfaces", "plan_overview"]


def interfaces(plan: Plan, task: PlanTask) -> list[str]:
    """The contracts a task implements or builds on, with their signatures, for its brief."""
    lines = []
    for name in task.provides:
        contract = plan.contract(name)
        shape = f" `{contract.signature.strip()}` in {contract.path or 'a file you choose'}" if contract else ""
        lines.append(f"You implement the interface {name}:{shape}; other tasks code against it exactly.")
    for name in task.consumes:
        contract = plan.contract(name)
        shape = f" `{contract.signature.strip()}` in {contract.path}" if contract else ""
        owner = f" (task {contract.owner} implements it)" if contract and contract.owner else ""
        lines.append(f"You use the interface {name}:{shape}{owner}. Code against that signature exactly.")
    return lines


def plan_overview(plan: Plan) -> str:
    """The plan as every agent of the run sees it in the shared system prompt: tasks, write-sets, contracts."""
    rows = [f"- {t.id}: {t.title} (writes: {', '.join(t.writes) or 'nothing declared'})" for t in plan.tasks]
    contracts = [f"- contract {c.name}: {c.signature} (in {c.path}, by {c.owner})" for c in plan.contracts]
    return "\n".join(rows + contracts)
