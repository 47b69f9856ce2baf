"""kill -9 aimed at each kind of step of a run with three agents at a time, then `plait resume`: the uncrashed result.

The parallel demo's scripted run (a planner, four agents, a claim that waits for another task, a conflict the
ladder resolves, the gate running the project's tests) runs as a real `plait` process with PLAIT_CONCURRENCY=3
against a model server in this process. Each test kills it at one kind of step, resumes it until it is done,
and checks what a crash may never change:

(a) the integration branch holds the tree of the uncrashed run (see `_tree_problems` for the one equivalence);
(b) no model call was paid twice: every answer the log kept was given once, and the only answers given again
    are those that were in flight at a kill (at most one per running agent per kill), which a kill -9 loses;
(c) no process of the run outlives a kill or the run;
(d) nothing is left behind: no worktree, no ref beyond the branches an uncrashed run keeps, no git `.lock`
    file, no directory under `.git/plait/worktrees/<run>/`.

The kills are aimed without hooks in plait: through a `git` first on PATH that kills at a given subcommand, or
by watching the event log (see kill_harness.py). PLAIT_SOAK=N runs N variants of each kill point (the n-th such
step instead of the first).
"""

from __future__ import annotations

import os
import re
import subprocess
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import kill_harness as kh
import pytest
from keyed_model import KeyedModel
from kill_harness import GitAim

from wire_server import WireServer

MARK = re.compile(r"\[answer (\d+)\]")
CONCURRENCY = 3
SOAK = int(os.environ.get("PLAIT_SOAK", "0"))
RUN_FLAGS = ("--yes", "--json", "--no-llm-merge", "--split", "always")
TASKS = {"csv-export", "percent-split", "storage-errors", "remove-expense"}
SHARED = ("CHANGELOG.md",)
"""Files that two tasks change by adding lines at the same place, merged by keeping both sides' lines.

Which of storage-errors and remove-expense is integrated first decides the order of their CHANGELOG.md lines,
and at three agents at a time that order is the order they finish in, which a crash may change: a tree whose
only differences are the order of those lines is the same result. (tally/money.py is not one: csv-export's
claim makes it build on percent-split's integrated work, so the order there is fixed.)
"""


@dataclass(frozen=True)
class KillPoint:
    """Where the run is killed (by `git`, or at the `nth` event matching `event`), and where its resume is."""

    git: GitAim | None = None
    event: str = ""
    nth: int = 1
    resume_git: GitAim | None = None
    env: tuple[tuple[str, str], ...] = ()
    """Settings of every process of the run, in the environment."""


_CHECKED_OUT = (("PLAIT_LAYERED_WORKTREES", "false"),)
"""Full checkouts, as where plait may not mount an overlay (the tests run where it may, as root)."""


def _claim(n: int) -> KillPoint:
    action = ("claim", "wait", "update")[n % 3]
    return KillPoint(event=f"kind = 'lease' AND json_extract(payload, '$.action') = '{action}'")


def _gate(n: int) -> KillPoint:
    # the tests of the gate run right after its semantic stage passes on a merge of some task's work
    where = "kind = 'gate' AND json_extract(payload, '$.stage') = 'semantic'"
    return KillPoint(event=f"{where} AND json_extract(payload, '$.tasks') != '[]'", nth=1 + n % 4)


def _run_end(n: int) -> KillPoint:
    steps = (("worktree remove", True), ("worktree remove", False), ("worktree prune", False))
    words, before = steps[n % 3]
    return KillPoint(git=GitAim(words, after="run_finished", before=before))


KILL_POINTS: dict[str, Callable[[int], KillPoint]] = {
    # between the checkout of a task's new worktree (its last git) and its task_started
    "worktree": lambda n: KillPoint(
        git=GitAim("reset --hard --no-recurse-submodules", nth=1 + n % 4), env=_CHECKED_OUT
    ),
    # a layered worktree mounted, its branch made (its last git), its HEAD not yet on it, task_started not logged
    "worktree_layered": lambda n: KillPoint(git=GitAim("branch --no-track -- plait/", nth=1 + n % 4)),
    # a git killed in the middle of creating a new worktree's branch, its ref lock left behind
    "worktree_lock": lambda n: KillPoint(git=GitAim("branch --no-track -- plait/", nth=1 + n % 4, lock=True)),
    "claim": _claim,
    # a task's branch moved to its commit, the commit event not logged yet
    "commit": lambda n: KillPoint(git=GitAim("update-ref -m commit:", nth=1 + n % 4)),
    # the merge queue merged a task's branch onto the integration head, nothing recorded yet
    "merge": lambda n: KillPoint(git=GitAim("merge-tree --write-tree -z", nth=1 + n % 4)),
    "gate": _gate,
    # run_finished is logged, the run's clean-up not done
    "run_end": _run_end,
    # a crash after the first commit, then the resume killed while it rebuilds worktrees
    "resume": lambda n: KillPoint(
        event="kind = 'commit'", nth=1 + n % 2, resume_git=GitAim("worktree add", nth=1 + n % 2), env=_CHECKED_OUT
    ),
    # the same, the resume killed as it makes a layered worktree again over what the killed run left mounted
    "resume_layered": lambda n: KillPoint(
        event="kind = 'commit'", nth=1 + n % 2, resume_git=GitAim("branch --force --no-track -- plait/", nth=1 + n % 2)
    ),
}


@dataclass
class Outcome:
    repo: Path
    model: KeyedModel
    kills: int = 0
    problems: list[str] = field(default_factory=list)
    killed_at: list[str] = field(default_factory=list)
    """Where each kill landed: the git command, or the last event logged."""


@dataclass(frozen=True)
class Reference:
    tree: dict[str, str]
    shared: dict[str, str]
    refs: list[str]


def _refs(repo: Path) -> list[str]:
    return [r.replace(kh.run_id(repo), "RUN") for r in kh.leftovers(repo)["refs"]]


def _files(repo: Path) -> dict[str, str]:
    branch = next(r for r in kh.leftovers(repo)["refs"] if r.endswith("/integration"))
    listing = kh.git(repo, "ls-tree", "-r", branch)
    return {line.split("\t", 1)[1]: line.split()[2] for line in listing.splitlines()}


def _run(tmp: Path, point: KillPoint | None) -> Outcome:
    env = {**kh.environment(tmp, CONCURRENCY), **dict(point.env if point else ())}
    repo = kh.project(tmp / "repo", env)
    task = (kh.DEMO / "parallel_task.txt").read_text().strip()
    with resources.as_file(kh.DEMO / "parallel.yaml") as script:
        outcome = Outcome(repo, KeyedModel(script, delay_scale=0.1))
    with WireServer(outcome.model) as server:
        run = ["run", task, "--model", f"openai-compatible:demo@{server.openai_url}", *RUN_FLAGS]
        proc = kh.plait(run, repo, kh.aimed(env, repo, point.git if point else None))
        if point is None:  # the survivor check sees a live run: else its silence would prove nothing
            kh.wait_for_event(proc, repo, "kind = 'run_started'")
            assert proc.poll() is not None or proc.pid in kh.survivors(tmp)
        else:
            if point.event:
                outcome.killed_at.append(f"after event {kh.kill_on_event(proc, repo, point.event, point.nth)}")
            else:
                outcome.killed_at.append(_killed(proc, tmp))
            outcome.kills += 1
            _no_survivors(tmp, "the run's kill", outcome)
            if point.resume_git is not None:
                resume = kh.plait(["resume", "last", "--json"], repo, kh.aimed(env, repo, point.resume_git))
                outcome.killed_at.append("resume: " + _killed(resume, tmp))
                outcome.kills += 1
                _no_survivors(tmp, "the resume's kill", outcome)
            proc = kh.plait(["resume", "last", "--json"], repo, kh.aimed(env, repo, None))
        code, out, err = kh.wait(proc)
        if code != 0 and "nothing to resume" not in out + err:
            outcome.problems.append(f"the last plait process failed ({code}): {(err or out)[-1500:]}")
    _no_survivors(tmp, "the run", outcome)
    return outcome


def _killed(proc: subprocess.Popen[str], tmp: Path) -> str:
    """Wait for the git wrapper to kill `proc`; the command it killed at."""
    code, _, err = kh.wait(proc)
    fired = tmp / "kill-fired"
    assert fired.exists(), f"the aimed git command never ran (plait exited {code}): {err[-800:]}"
    assert code == -9, f"plait exited {code}, not killed"
    at = fired.read_text().strip()
    fired.unlink()
    return at


def _no_survivors(tmp: Path, after: str, outcome: Outcome) -> None:
    left = kh.settle_survivors(tmp)
    if left:
        outcome.problems.append(f"processes outlived {after}: {left}")


def _tree_problems(files: dict[str, str], ref: Reference, repo: Path) -> list[str]:
    """How the integration tree differs from the reference beyond the order of lines in a shared file."""
    if files == ref.tree:
        return []
    problems = [f"{p} only in the reference" for p in sorted(ref.tree.keys() - files.keys())]
    problems += [f"{p} only after the crash" for p in sorted(files.keys() - ref.tree.keys())]
    for path in sorted(p for p in files.keys() & ref.tree.keys() if files[p] != ref.tree[p]):
        text = kh.git(repo, "cat-file", "blob", files[path])
        if path not in SHARED or sorted(text.splitlines()) != sorted(ref.shared[path].splitlines()):
            problems.append(f"{path} differs")
    return problems


def _paid_twice(outcome: Outcome, events: list[dict[str, object]]) -> list[str]:
    """Calls answered and logged more than once, or answered again more often than the kills explain.

    An answer the log did not keep was in flight at a kill: the resumed run asks again, or goes another way.
    """
    kept = {
        int(m.group(1))
        for e in events
        if e["kind"] == "model_response" and (m := MARK.search(str(e["text"]))) is not None
    }
    problems = []
    unlogged = 0
    for key, answers in outcome.model.answers.items():
        logged = [a for a in answers if a in kept]
        if len(logged) > 1:
            problems.append(f"{key} was paid {len(logged)} times, each answer logged: {answers}")
        lost = len(answers) - len(logged)
        unlogged += lost
        if lost > outcome.kills:
            problems.append(f"{key} was answered {len(answers)} times with {outcome.kills} kills: {answers}")
    if unlogged > outcome.kills * CONCURRENCY:
        problems.append(f"{unlogged} answers lost in {outcome.kills} kills")
    return problems


def _check(outcome: Outcome, ref: Reference) -> None:
    problems = list(outcome.problems)
    repo = outcome.repo
    events = [
        {"kind": kind, "text": payload}
        for kind, payload in kh.query(repo, "SELECT kind, payload FROM events ORDER BY seq")
    ]
    rows = kh.query(repo, "SELECT agent, json_extract(payload, '$.status') FROM events WHERE kind = 'task_finished'")
    done = {str(agent) for agent, status in rows if status == "done"}
    if done != TASKS:
        problems.append(f"tasks done: {sorted(done)}")
    ends = [
        str(s)
        for (s,) in kh.query(repo, "SELECT json_extract(payload, '$.status') FROM events WHERE kind = 'run_finished'")
    ]
    if ends[-1:] != ["done"]:
        problems.append(f"the run ended {ends}")
    once = Counter(
        kh.query(
            repo,
            "SELECT kind, agent, json_extract(payload, '$.attempt') FROM events"
            " WHERE kind IN ('task_started', 'commit')",
        )
    )
    problems += [f"{key} logged {n} times" for key, n in once.items() if n > 1]
    if any(r.endswith("/integration") for r in kh.leftovers(repo)["refs"]):
        problems += _tree_problems(_files(repo), ref, repo)
    else:
        problems.append("no integration branch")
    problems += _paid_twice(outcome, events)
    left = kh.leftovers(repo)
    refs = _refs(repo)
    if refs != ref.refs:
        problems.append(f"refs {refs}, the uncrashed run keeps {ref.refs}")
    problems += [f"left behind: {kind} {items}" for kind, items in left.items() if kind != "refs" and items]
    print(f"killed: {outcome.killed_at}")
    assert problems == [], "\n".join([f"killed: {outcome.killed_at}", *problems, _tail(repo)])


def _tail(repo: Path) -> str:
    log = repo.parent / "git.log"
    return "last git commands:\n" + "\n".join(log.read_text().splitlines()[-12:]) if log.exists() else ""


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Reference:
    """The uncrashed run at the same concurrency, once (the module's tests share one worker under xdist)."""
    outcome = _run(tmp_path_factory.mktemp("uncrashed"), None)
    assert outcome.problems == []
    assert all(len(a) == 1 for a in outcome.model.answers.values())
    files = _files(outcome.repo)
    shared = {p: kh.git(outcome.repo, "cat-file", "blob", files[p]) for p in SHARED}
    left = kh.leftovers(outcome.repo)
    assert [items for kind, items in left.items() if kind != "refs" and items] == []
    return Reference(files, shared, _refs(outcome.repo))


@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    ("point", "variant"), [(p, n) for p in KILL_POINTS for n in range(SOAK or 1)], ids=lambda v: str(v)
)
def test_a_kill_at_each_kind_of_step_loses_and_leaves_nothing(
    tmp_path: Path, reference: Reference, point: str, variant: int
) -> None:
    outcome = _run(tmp_path, KILL_POINTS[point](variant))
    _check(outcome, reference)
