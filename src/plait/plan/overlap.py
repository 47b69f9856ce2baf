"""Overlap analysis: make sure no two tasks that run at the same time write the same file.

Deterministic, before anything runs. First, every contract that two or more tasks consume gets a
contract task, `contract-<name>`, that writes its stub at the contract's path; the owner and the
consumers depend on it, so they start from a real interface. (Without a path there is nowhere to
put a stub, and the consumers wait for the owner instead.)

Then the tasks' write-sets are expanded against the repository's files (plus the new files they
name). Two tasks clash when their write-sets share a path and neither depends, even indirectly, on
the other: tasks that run one after the other may write the same file. Paths the plan declares
`shared` (a registry each task adds to) never clash: the tasks take turns on them through claims.
The first clashing pair in plan order is resolved, and so on until none is left:

1. **order**, when one task provides a contract the other consumes and no contract task writes its
   stub (provider first), or when one of them is a contract task (it goes first);
2. **merge**, when the shared paths are more than half of each task's write-set: they are one piece
   of work, so the later task is folded into the earlier one;
3. **order**, when the shared paths are more than half of one task's write-set: that task's work is
   mostly in the shared files and cannot do without them, so the task with fewer writes goes first
   (the earlier one in the plan on a tie);
4. **assign**, otherwise: each shared file goes to the task that names it literally rather than by a
   glob, or else to the earlier task in the plan; the other task's write-set excludes it and its
   instructions say it must not edit that file but may read and rely on it.
"""

from __future__ import annotations

from dataclasses import dataclass

from plait.globs import expand, is_glob, matches, new_paths, normalize
from plait.plan._decision import OverlapDecision, add_dependency, ancestors
from plait.plan._stubs import insert_contract_tasks
from plait.plan_model import Plan, PlanTask

__all__ = ["OverlapDecision", "resolve_overlaps"]


@dataclass(frozen=True)
class _Footprint:
    existing: frozenset[str]
    new: frozenset[str]
    """Literal paths of files to be created."""
    empty_globs: frozenset[str]
    """Globs that match no file yet."""

    @property
    def size(self) -> int:
        return len(self.existing) + len(self.new)


class _WriteSets:
    """Write-sets expanded against the repository's files, each computed once per distinct pattern list."""

    def __init__(self, files: list[str], shared: list[str]) -> None:
        self.files, self.exempt = files, shared
        self._cache: dict[tuple[str, ...], _Footprint] = {}

    def of(self, task: PlanTask) -> _Footprint:
        key = tuple(task.writes)
        if key not in self._cache:
            globs = {normalize(p) for p in key if is_glob(p) and not p.startswith("!")}
            self._cache[key] = _Footprint(
                frozenset(expand(key, self.files)),
                frozenset(new_paths(key, self.files)),
                frozenset(g for g in globs if not expand([g], self.files)),
            )
        return self._cache[key]

    def shared(self, a: PlanTask, b: PlanTask) -> set[str]:
        """Paths both write: existing files, new files one names and the other covers, identical empty globs."""
        fa, fb = self.of(a), self.of(b)
        found = set(fa.existing & fb.existing) | set(fa.empty_globs & fb.empty_globs)
        found |= {p for p in fa.new if matches(b.writes, p)} | {p for p in fb.new if matches(a.writes, p)}
        return {p for p in found if not self.exempt or not matches(self.exempt, p)}


def _first_clash(tasks: list[PlanTask], sets: _WriteSets) -> tuple[PlanTask, PlanTask, set[str]] | None:
    reach = ancestors(tasks)
    for i, a in enumerate(tasks):
        for b in tasks[i + 1 :]:
            if a.id in reach[b.id] or b.id in reach[a.id]:
                continue
            shared = sets.shared(a, b)
            if shared:
                return a, b, shared
    return None


def _order(first: PlanTask, then: PlanTask, shared: list[str], why: str) -> OverlapDecision:
    add_dependency(then, first.id)
    what = f"{then.id} runs after {first.id}"
    return OverlapDecision("order", (first.id, then.id), tuple(shared), what, why)


def _merge(tasks: list[PlanTask], keep: PlanTask, fold: PlanTask, plan: Plan, shared: list[str]) -> OverlapDecision:
    both = {keep.id, fold.id}

    def union(x: list[str], y: list[str]) -> list[str]:
        return list(dict.fromkeys([*x, *y]))

    keep.title = f"{keep.title}; {fold.title}"
    keep.instructions = (
        f"{keep.instructions}\n\nAlso ({fold.title}, merged in from task {fold.id}):\n{fold.instructions}"
    )
    keep.writes, keep.reads = union(keep.writes, fold.writes), union(keep.reads, fold.reads)
    keep.provides = union(keep.provides, fold.provides)
    keep.consumes = [c for c in union(keep.consumes, fold.consumes) if c not in keep.provides]
    keep.depends_on = [d for d in union(keep.depends_on, fold.depends_on) if d not in both]
    tasks.remove(fold)
    for task in tasks:
        task.depends_on = list(dict.fromkeys(keep.id if d == fold.id else d for d in task.depends_on))
    for contract in plan.contracts:
        contract.owner = keep.id if contract.owner == fold.id else contract.owner
    why = f"they share {len(shared)} file(s), most of both write-sets: they are one piece of work"
    return OverlapDecision("merge", (keep.id, fold.id), tuple(shared), f"merged {fold.id} into {keep.id}", why)


def _assign(a: PlanTask, b: PlanTask, shared: list[str]) -> list[OverlapDecision]:
    decisions = []
    for path in shared:
        literal_a, literal_b = path in map(normalize, a.writes), path in map(normalize, b.writes)
        owner, other = (b, a) if literal_b and not literal_a else (a, b)
        if path in map(normalize, other.writes):
            other.writes = [w for w in other.writes if normalize(w) != path]
        else:
            other.writes.append("!" + path)
        other.instructions += (
            f"\n\nNote: do not edit {path}; task {owner.id} owns it in this run. You may read it and rely on "
            "what it has now; if you need a change there, say so in your finish summary."
        )
        how = "names it explicitly" if literal_b != literal_a else "comes first in the plan"
        decisions.append(
            OverlapDecision(
                "assign",
                (owner.id, other.id),
                (path,),
                f"{path} goes to {owner.id}; {other.id} must not edit it",
                f"a small part of both write-sets; {owner.id} {how}",
            )
        )
    return decisions


def _resolve(
    tasks: list[PlanTask], plan: Plan, sets: _WriteSets, a: PlanTask, b: PlanTask, shared: list[str]
) -> list[OverlapDecision]:
    """Resolve the clash of `a` and `b` (a first in the plan) by the rules in the module docstring."""
    stubbed = {name for t in tasks if t.kind == "contract" for name in t.provides}
    for first, then in ((a, b), (b, a)):
        if set(first.provides) & (set(then.consumes) - stubbed) or first.kind == "contract" != then.kind:
            return [_order(first, then, shared, f"{first.id} provides what {then.id} builds on")]
    size_a, size_b = sets.of(a).size, sets.of(b).size
    most_a, most_b = len(shared) * 2 > size_a, len(shared) * 2 > size_b
    if most_a and most_b and a.kind == b.kind == "work":
        return [_merge(tasks, a, b, plan, shared)]
    if most_a or most_b:
        first, then = (b, a) if size_b < size_a else (a, b)
        why = f"most of {(a if most_a else b).id}'s write-set is shared; the task with fewer writes goes first"
        return [_order(first, then, shared, why)]
    return _assign(a, b, shared)


def resolve_overlaps(plan: Plan, repo_files: list[str]) -> tuple[Plan, list[OverlapDecision]]:
    """A copy of the valid `plan` in which no two tasks that may run at the same time write the same path.

    Args:
        plan: A plan that passed `validate_plan`.
        repo_files: The repository's files (`tracked_files`), against which write-set globs are expanded.

    Returns:
        The new plan, and the decisions that made it, in the order they were taken.
    """
    plan = plan.model_copy(deep=True)
    tasks, sets = plan.tasks, _WriteSets(sorted(repo_files), [normalize(p) for p in plan.shared])
    decisions = insert_contract_tasks(tasks, plan)
    while clash := _first_clash(tasks, sets):
        a, b, shared = clash
        decisions.extend(_resolve(tasks, plan, sets, a, b, sorted(shared)))
    if len(tasks) == 1 and plan.mode == "parallel":
        plan.mode = "single"
        plan.reason += " (Merged into one task to resolve overlapping write-sets.)"
    return plan, decisions
