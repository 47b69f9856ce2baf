"""What analysis decides of a plan: whether splitting it pays (an estimate), how overlaps are resolved.

Whether to split. Each agent sends its prompt prefix (tools, instructions, the map of its area, its brief)
on every call, and reads its area: a file that several tasks touch is read by each. One agent reads each
file once but works through every part in turn. The estimate weighs both, in tokens as the provider
bills them (a prefix re-sent is read from the prompt cache at its price) and in time (model calls and
written tokens, along the longest chain of dependent tasks against all of them one after another):

    one agent   prefix + every file the plan touches, calls for all of it
    parallel    per task: prefix + its map + its brief + its files; calls for its part
    tokens      w × (what enters the context once) + r × (what is re-sent, call after call) + output
    time        calls × seconds a call + output ÷ tokens a second

A split runs when it costs at most `MAX_TOKEN_RATIO` times the tokens of one agent and is at least
`MIN_SPEEDUP` times faster. The constants are rough averages of coding agents' runs; the estimate
ranks splits, it does not predict a bill.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from plait.events.types import Decision
from plait.globs import expand, new_paths
from plait.models.pricing import PriceTable
from plait.plan._areamap import RepoIndex
from plait.plan.repomap import DEFAULT_MAP_BUDGET
from plait.plan_model import Plan, PlanTask

__all__ = [
    "Action",
    "OverlapDecision",
    "SplitEstimate",
    "add_dependency",
    "ancestors",
    "choose_mode",
    "estimate_split",
    "names",
    "settle_mode",
    "shared_map",
]

MAX_TOKEN_RATIO = 1.25
MIN_SPEEDUP = 1.5
BASE_PROMPT = 2_200
"""Tokens of an agent's tools and instructions (about 6.6 KB and 1.8 KB)."""
SHARED_PREFIX = 2_000
"""Of those, what every agent of a run sends first, word for word (the tools, the instructions): the cache shares it."""
PARALLEL_PROMPT = 400
"""A task agent's own instructions: the parallel run, its brief's framing, its rows of the plan."""
CALLS_FIXED = 3.0
"""Model calls every agent makes whatever its part: finding its way, checking, finishing."""
CALLS_PER_FILE = 0.5
"""Calls per file touched: a read and an edit, two tool calls to a call."""
OUT_PER_CALL = 250
"""Tokens a model writes per call besides code: its reasoning and words."""
OUT_PER_FILE = 300
"""Tokens of code written per file changed or created."""
NEIGHBOUR_READ = 1_000
"""Bytes an agent reads of a neighbouring module (a signature, a call site)..."""
NEIGHBOURS_READ = 8
"""...of its nearest neighbours: the modules its files import first."""
CALL_SECONDS = 5.0
OUT_PER_SECOND = 50.0

Action = Literal["order", "merge", "assign", "contract"]


@dataclass(frozen=True)
class OverlapDecision:
    """One resolution: what was done to which tasks over which files, and why."""

    action: Action
    tasks: tuple[str, ...]
    files: tuple[str, ...]
    what: str
    why: str

    def event(self, run_id: str) -> Decision:
        """The decision as an event for the log."""
        data = {"action": self.action, "tasks": list(self.tasks), "files": list(self.files)}
        return Decision(run_id=run_id, topic="overlap", decision=self.what, reason=self.why, data=data)


def names(ids: list[str]) -> str:
    return ", ".join(ids)


def ancestors(tasks: list[PlanTask]) -> dict[str, set[str]]:
    """For each task, every task it depends on, directly or not."""
    deps = {t.id: set(t.depends_on) for t in tasks}
    found: dict[str, set[str]] = {}

    def walk(task_id: str) -> set[str]:
        if task_id not in found:
            found[task_id] = set()
            for dep in deps.get(task_id, ()):
                found[task_id] |= {dep, *walk(dep)}
        return found[task_id]

    for task in tasks:
        walk(task.id)
    return found


def add_dependency(task: PlanTask, on: str) -> None:
    if on not in task.depends_on:
        task.depends_on.append(on)


@dataclass(frozen=True)
class _Work:
    """One agent's load: its prompt prefix, the file tokens it reads, the code it writes, its calls."""

    prefix: float
    reading: float
    writing: float
    calls: float

    def tokens(self, read: float, write: float, shared: float = 0.0) -> float:
        """Billed tokens, a cache read costing `read` and a write `write` (parts of an input token's price).

        Every token enters the context once (a cache write, or a read of `shared` that another agent wrote)
        and is re-sent on each later call: the prefix on every call, the work on half of them on average.
        """
        out = self.writing + self.calls * OUT_PER_CALL
        once = self.prefix + self.reading + out
        sent = self.calls * self.prefix + self.calls * (self.reading + out) / 2
        return write * (once - shared) + read * shared + read * max(sent - once, 0.0) + out

    @property
    def seconds(self) -> float:
        return self.calls * CALL_SECONDS + (self.writing + self.calls * OUT_PER_CALL) / OUT_PER_SECOND


@dataclass(frozen=True)
class SplitEstimate:
    """Tokens (billed) and seconds of the plan run as one agent and in parallel."""

    single_tokens: float
    parallel_tokens: float
    single_seconds: float
    parallel_seconds: float

    @property
    def token_ratio(self) -> float:
        return self.parallel_tokens / self.single_tokens if self.single_tokens else 1.0

    @property
    def speedup(self) -> float:
        return self.single_seconds / self.parallel_seconds if self.parallel_seconds else 1.0

    @property
    def pays(self) -> bool:
        return self.token_ratio <= MAX_TOKEN_RATIO and self.speedup >= MIN_SPEEDUP

    def summary(self) -> str:
        return f"~{self.token_ratio:.1f}× the tokens of one agent, ~{self.speedup:.1f}× faster"


def _files(index: RepoIndex, patterns: Iterable[str]) -> tuple[set[str], set[str]]:
    """The existing files `patterns` cover, and the paths they create."""
    listed = list(patterns)
    return expand(listed, index.paths), new_paths(listed, index.paths)


def _load(index: RepoIndex, prefix: float, writes: Iterable[str], reads: Iterable[str], near: set[str]) -> _Work:
    written, created = _files(index, writes)
    read, _ = _files(index, reads)
    own = written | read
    glimpses = sum(min(index.size([p]), NEIGHBOUR_READ) for p in near - own)
    reading = (index.size(own) + glimpses) / 4
    files = len(own | created)
    return _Work(prefix, reading, OUT_PER_FILE * (len(written) + len(created)), CALLS_FIXED + CALLS_PER_FILE * files)


def _longest(plan: Plan, seconds: dict[str, float]) -> float:
    """Seconds along the longest chain of dependent tasks."""
    done: dict[str, float] = {}

    def finish(task_id: str) -> float:
        if task_id not in done:
            done[task_id] = 0.0  # a cycle (refused by validation) ends here
            deps = plan.task(task_id).depends_on
            done[task_id] = seconds[task_id] + max((finish(d) for d in deps if d in seconds), default=0.0)
        return done[task_id]

    return max((finish(t.id) for t in plan.tasks), default=0.0)


def estimate_split(
    plan: Plan, index: RepoIndex, task: str = "", *, ratios: tuple[float, float] = (1.0, 1.0)
) -> SplitEstimate:
    """What `plan` costs run in parallel against one agent doing `task`, over the repository `index` scans.

    `ratios` are what a cache read and a cache write cost, as parts of an input token's (`PriceTable.cache_ratios`).
    """
    read, write = ratios
    works: dict[str, _Work] = {}
    contracts = {c.name: c.path for c in plan.contracts if c.path}
    paths = {t.id: [contracts[n] for n in (*t.provides, *t.consumes) if n in contracts] for t in plan.tasks}
    areas = {t.id: index.area(t.writes, t.reads, paths[t.id]) for t in plan.tasks}
    maps = {t: index.render(a) for t, a in areas.items()}
    whole = shared_map(index, maps.values())  # every worker's, cached once, as `worker_systems` sends it
    for t in plan.tasks:
        area = areas[t.id]
        prefix = BASE_PROMPT + PARALLEL_PROMPT + (len(whole or maps[t.id]) + len(t.instructions)) / 4
        works[t.id] = _load(index, prefix, t.writes, [*t.reads, *paths[t.id]], set(area.near[:NEIGHBOURS_READ]))
    near = {p for t in plan.tasks for p in index.area(t.writes, t.reads).near[:NEIGHBOURS_READ]}
    single = _load(
        index,
        BASE_PROMPT + len(task) / 4,
        [p for t in plan.tasks for p in t.writes],
        [p for t in plan.tasks for p in (*t.reads, *contracts.values())],
        near,
    )
    first, shared = plan.tasks[0].id, SHARED_PREFIX + len(whole or "") / 4
    parallel = sum(w.tokens(read, write, 0.0 if t == first else shared) for t, w in works.items())
    seconds = {t: w.seconds for t, w in works.items()}
    return SplitEstimate(single.tokens(read, write), parallel, single.seconds, _longest(plan, seconds))


def shared_map(index: RepoIndex, areas: Iterable[str]) -> str | None:
    """The whole repository's map, when every worker of a split gets it instead of its area's map (`areas`).

    A repository whose whole map fits in an area's room, or one whose whole map is no longer than half of the
    areas' maps together: word for word the same, the whole map is written to the prompt cache once and read by
    the other workers at about a tenth of the price, where each area's map is written once per worker.
    """
    whole = index.whole()
    if whole is not None:
        return whole
    whole = index.whole(DEFAULT_MAP_BUDGET)
    return whole if whole is not None and len(whole) <= sum(map(len, areas)) // 2 else None


def choose_mode(plan: Plan, estimate: SplitEstimate) -> Plan:
    """`plan` with the estimate in its reason, as one agent when the split does not pay for itself."""
    if estimate.pays:
        return plan.model_copy(update={"reason": f"{plan.reason.strip()} (parallel: {estimate.summary()})"})
    why = (
        f"one agent: in parallel this plan would cost {estimate.summary()}; a split runs when it costs at most "
        f"{MAX_TOKEN_RATIO}× the tokens of one agent and is at least {MIN_SPEEDUP}× faster. The planner proposed: "
        f"{plan.reason.strip()}"
    )
    whole = PlanTask(
        id="whole-task",
        title="The whole task, by one agent",
        instructions=_where(plan),
        writes=sorted({p for t in plan.tasks for p in t.writes}),
        reads=sorted({p for t in plan.tasks for p in t.reads}),
    )
    return Plan(mode="single", reason=why, tasks=[whole])


def _where(plan: Plan) -> str:
    """Where the planner found each part's work, for the one agent that does them all.

    The parts' own instructions are not passed on: each was written for an agent that sees only its part (it
    shares a file with the others, adds only its own line), which one agent is not, and one agent reads them,
    said four times over, on every call of its conversation.
    """
    rows = []
    for t in plan.tasks:
        files = ", ".join([*t.writes, *(f"{p} (read)" for p in t.reads if p not in t.writes)])
        rows.append(f"- {t.title}: {files or 'no files named'}")
    return "The parts of the task and the files the planner found for each:\n" + "\n".join(rows)


def settle_mode(plan: Plan, root: Path, task: str, model: str, prices: PriceTable) -> Plan:
    """A planner's plan as it will run: split only if the split pays for itself, the estimate in its reason.

    A scripted model's plan is a script its author wrote, like a plan file: it runs as written.
    """
    if plan.mode != "parallel" or len(plan.tasks) < 2 or model.startswith("scripted:"):
        return plan
    estimate = estimate_split(plan, RepoIndex(root), task, ratios=prices.cache_ratios(model))
    return choose_mode(plan, estimate)
