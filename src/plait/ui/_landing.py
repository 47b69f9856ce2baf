"""What a run's result says when it lands as teams land work: a pull request's title and body, a squash commit's
message, and where a forge shows a branch against its base.

Everything here is computed from the run's events (its `RunView`) and text; nothing runs git.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

from plait.events.types import Event, GateChecked, MergeStep, PlanMade
from plait.plan_model import Plan
from plait.ui.runview import RunView

__all__ = ["Identity", "Landing", "compare_url", "landing_of", "parse_ident", "squash_message"]

_TITLE_LIMIT = 72
_TAIL_LINES = 6
_STAGES = ("parse", "semantic", "verify")


@dataclass(frozen=True)
class Landing:
    """The words a run lands with."""

    title: str
    body: str
    message: str
    """A squash commit's message: the title, the plan, each task's summary."""


@dataclass(frozen=True)
class Identity:
    """Who a commit is by, as `git var GIT_AUTHOR_IDENT` prints it."""

    name: str
    email: str


def parse_ident(text: str) -> Identity | None:
    """`Name <email> 1700000000 +0000` as an `Identity`, or None when it is not one."""
    found = re.fullmatch(r"\s*(.*?)\s*<([^<>]*)>.*", text.strip())
    return Identity(found.group(1), found.group(2)) if found else None


def _plan(events: list[Event]) -> Plan | None:
    plans = [e.plan for e in events if isinstance(e, PlanMade)]
    return plans[-1] if plans else None


def _title(view: RunView, plan: Plan | None) -> str:
    tasks = [t for t in plan.tasks if t.kind == "work"] if plan else []
    if len(tasks) == 1 and tasks[0].title.strip():
        line = tasks[0].title.strip().splitlines()[0]
    else:
        line = next((x.strip() for x in view.task.splitlines() if x.strip()), f"plait run {view.run_id}")
    if len(line) <= _TITLE_LIMIT:
        return line
    head = line.split(": ", 1)[0]  # "Get it ready for 0.4: four improvements..." reads well as its first clause
    if len(head) <= _TITLE_LIMIT:
        return head
    return line[: _TITLE_LIMIT - 1].rsplit(" ", 1)[0].rstrip(" ,;:") + "…"


def _indent(text: str, by: str = "  ") -> str:
    return "\n".join(by + line if line.strip() else "" for line in text.strip().splitlines())


def _task_lines(view: RunView, *, markdown: bool) -> list[str]:
    lines: list[str] = []
    for task_id in view.plan or [a for a in view.agents if a not in ("planner", "triage")]:
        agent = view.agents.get(task_id)
        if agent is None:
            continue
        title = f"**{task_id}**" if markdown else task_id
        state = agent.state + (f", {agent.merge}" if agent.merge else "")
        lines.append(f"- {title}: {agent.title or 'no title'} ({state})")
        if agent.summary.strip():
            lines.append(_indent(agent.summary))
    return lines


def _merge_lines(merges: list[MergeStep]) -> list[str]:
    """Per task, how each file came in: by which rung of the merge ladder, and how."""
    by_task: dict[str, dict[str, str]] = {}
    for step in merges:
        files = by_task.setdefault(step.task, {})
        detail = f" ({step.detail})" if step.detail and step.outcome != "clean" else ""
        for path in step.files:
            files[path] = f"{step.outcome} by {step.rung}{detail}"
        if not step.files and step.outcome == "clean":
            files.setdefault("", f"merged cleanly by {step.rung}")
        elif not step.files:
            files[""] = f"{step.outcome} by {step.rung}{detail}"
    lines: list[str] = []
    for task, files in by_task.items():
        named = {p: how for p, how in files.items() if p}
        if not named:
            lines.append(f"- {task}: {files.get('', 'merged')}")
            continue
        lines.append(f"- {task}:")
        lines.extend(f"  - `{path}`: {how}" for path, how in named.items())
    return lines


def _fence(text: str) -> str:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    mark = "`" * max(3, longest + 1)
    return f"{mark}\n{text}\n{mark}"


def _tail(output: str) -> str:
    lines = [line.rstrip() for line in output.splitlines() if line.strip()]
    return "\n".join(lines[-_TAIL_LINES:])


def _gate_lines(gates: list[GateChecked], result: str) -> list[str]:
    """Each combined tree the gate checked, its stages; the tail of the output of the result's and of a failure."""
    rounds: dict[str, list[GateChecked]] = {}
    for check in gates:
        rounds.setdefault(check.commit, []).append(check)
    lines: list[str] = []
    for commit, checks in rounds.items():
        tasks = sorted({t for c in checks for t in c.tasks})
        what = ", ".join(tasks) if tasks else "the base"
        ordered = sorted(checks, key=lambda c: _STAGES.index(c.stage))
        stages = " · ".join(f"{c.stage} {'passed' if c.passed else 'FAILED'}" for c in ordered)
        lines.append(f"- `{commit[:10]}` ({what}): {stages}")
        for check in checks:
            if check.output.strip() and (not check.passed or (commit == result and check.stage == "verify")):
                lines.append("")
                lines.append(_indent(_fence(_tail(check.output))))
                lines.append("")
    return lines


def landing_of(view: RunView, events: list[Event]) -> Landing:
    """The title, body and squash message of a run's result (`view` folded from `events`)."""
    plan = _plan(events)
    title = _title(view, plan)
    reason = plan.reason.strip() if plan else ""
    body: list[str] = []
    if view.task.strip():
        body += ["## Task", "", view.task.strip(), ""]
    if reason or view.plan:
        body += ["## Plan", ""]
        body += [reason, ""] if reason else []
        body += [*_task_lines(view, markdown=True), ""]
    if view.merges:
        body += ["## Merges", "", *_merge_lines(view.merges), ""]
    if view.gates:
        body += ["## Gate", "", *_gate_lines(view.gates, view.commit), ""]
    body += [f"Made by plait run `{view.run_id}` (`plait show {view.run_id}` tells all of it).", ""]
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(body))
    return Landing(title=title, body=text, message=squash_message(view, events))


def squash_message(view: RunView, events: list[Event]) -> str:
    """One commit's message for a run's whole result: the title, the plan's reason, each task and its summary."""
    plan = _plan(events)
    parts = [_title(view, plan), ""]
    reason = plan.reason.strip() if plan else ""
    if reason:
        parts += [reason, ""]
    tasks = _task_lines(view, markdown=False)
    if tasks:
        parts += [*tasks, ""]
    parts.append(f"plait-run: {view.run_id}")
    return "\n".join(parts) + "\n"


def _forge_path(url: str) -> tuple[str, str] | None:
    """(host, owner/repo) of a remote URL in any of git's spellings, or None."""
    scp = re.fullmatch(r"(?:[^@/]+@)?([^:/]+):(?!//)(.+)", url)
    if scp and "://" not in url:
        host, path = scp.group(1), scp.group(2)
    else:
        parts = urlsplit(url)
        if parts.scheme not in ("https", "http", "ssh", "git") or not parts.hostname:
            return None
        host, path = parts.hostname, parts.path
    path = path.strip("/").removesuffix(".git")
    return (host, path) if re.fullmatch(r"[\w.-]+/[\w.-]+", path) else None


def compare_url(remote_url: str, base: str, branch: str) -> str | None:
    """Where a GitHub-style forge shows `branch` against `base` (`https://host/owner/repo/compare/base...branch`),
    or None for a remote that is not on one. The user and password of the URL are never part of it."""
    found = _forge_path(remote_url)
    if found is None:
        return None
    host, path = found
    if "github" not in host and host not in ("codeberg.org", "gitea.com"):
        return None
    return f"https://{host}/{path}/compare/{quote(base, safe='/')}...{quote(branch, safe='/')}"
