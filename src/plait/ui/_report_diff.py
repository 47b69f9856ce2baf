"""The report's per-task diffs: each task's change against the run's base, one collapsible block per task, each
line coloured by its kind (file header, hunk, added, removed, context); a long diff is cut with a marker that
gives the command to see it whole."""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Protocol

from plait.events.types import Committed, Event, LeaseChanged, RunStarted, TaskFinished, TaskStarted
from plait.ui.runview import RunView, phase_of

__all__ = ["Git", "diff_section", "task_diffs", "task_spans"]

MAX_LINES = 400
"""Lines of one task's diff shown in the report; the rest is named by the marker."""
MAX_CHARS = 60_000
"""Characters of one task's diff shown: a few very long lines are cut as well."""
_LINE = 400
_GIT_DIFF = ("diff", "--no-color", "--no-ext-diff", "--no-textconv")
_FILE = ("diff --git ", "--- ", "+++ ", "index ", "new file", "deleted file", "similarity", "rename ", "old mode")


class Git(Protocol):
    """What runs git in the repository: a `Repo.git`."""

    def __call__(self, *args: str, check: bool = ...) -> str: ...


def task_spans(events: list[Event]) -> dict[str, tuple[str, str]]:
    """Each task's (base, head): from what it built on to its latest commit.

    What it built on is the run's base, or its latest attempt's base, or, once its worktree took the integrated
    work on a path it waited for, that integration head: the diff then shows the task's own work alone.
    """
    base = next((e.base_commit for e in events if isinstance(e, RunStarted)), "")
    bases: dict[str, str] = {}
    heads: dict[str, str] = {}
    for event in events:
        if phase_of(event.agent) != "work":
            continue
        if isinstance(event, TaskStarted) and event.base_commit:
            bases[event.agent] = event.base_commit
        elif isinstance(event, LeaseChanged) and event.action == "update":
            if event.head and not event.conflicts:
                bases[event.agent] = event.head
        elif isinstance(event, Committed) and event.sha:
            heads[event.agent] = event.sha
        elif isinstance(event, TaskFinished) and event.commit:
            heads[event.agent] = event.commit
    return {task: (bases.get(task, base), head) for task, head in heads.items() if bases.get(task, base)}


def task_diffs(git: Git, events: list[Event]) -> dict[str, str]:
    """Each task's patch from what it built on to its latest commit, read from the repository ('' when git fails)."""
    return {
        task: git(*_GIT_DIFF, "--patch", base, head, check=False) for task, (base, head) in task_spans(events).items()
    }


def _kind(line: str) -> str:
    if line.startswith(_FILE):
        return "d-file"
    if line.startswith("@@"):
        return "d-hunk"
    if line.startswith("+"):
        return "d-add"
    if line.startswith("-"):
        return "d-del"
    if line.startswith("\\") or line.startswith("Binary files"):
        return "d-meta"
    return "d-ctx"


def highlight(diff: str, command: str) -> str:
    """The diff as HTML lines, each in a span of its kind; past `MAX_LINES` (or `MAX_CHARS`) a marker names the rest."""
    lines = diff.splitlines()
    out: list[str] = []
    budget = MAX_CHARS
    for n, line in enumerate(lines):
        if n >= MAX_LINES or budget <= 0:
            rest = len(lines) - n
            out.append(
                f'<span class="d-cut">… {rest} more line{"s" if rest != 1 else ""} not shown '
                f"(the diff has {len(lines)}); see it all with: <code>{escape(command)}</code></span>"
            )
            break
        shown = line if len(line) <= _LINE else line[:_LINE] + " …"
        budget -= len(shown) + 1
        out.append(f'<span class="{_kind(line)}">{escape(shown)}</span>')
    return "\n".join(out)


def _stat(diff: str) -> str:
    added = sum(1 for x in diff.splitlines() if x.startswith("+") and not x.startswith("+++ "))
    removed = sum(1 for x in diff.splitlines() if x.startswith("-") and not x.startswith("--- "))
    files = sum(1 for x in diff.splitlines() if x.startswith("diff --git "))
    return f"{files} file{'s' if files != 1 else ''}, +{added} −{removed}"


def diff_section(view: RunView, events: list[Event], diffs: Mapping[str, str]) -> str:
    """One `<details>` per task: its diff from what it built on, or why there is none."""
    spans = task_spans(events)
    tasks = list(dict.fromkeys([*view.plan, *(a for a in view.agents if phase_of(a) == "work")]))
    if not tasks:
        return "<p>No tasks in this run.</p>"
    out = [
        f"<p>Each task's change against the run's base <code>{escape(view.base_commit[:10])}</code>, or against "
        "the integrated work its worktree took while it ran.</p>"
    ]
    for task in tasks:
        base, head = spans.get(task, ("", ""))
        diff = diffs.get(task, "")
        if not head:
            what, body = "no commit", "<p>This task made no commit.</p>"
        elif not diff.strip():
            what, body = "no diff at hand", "<p>The repository was not at hand, or the change is empty.</p>"
        else:
            command = f"git diff {base[:12]} {head[:12]}"
            what, body = _stat(diff), f'<pre class="diff">{highlight(diff, command)}</pre>'
        span = f"<code>{escape(base[:10])}</code>..<code>{escape(head[:10])}</code>" if head else ""
        out.append(
            f'<details class="diff" id="diff-{escape(task)}"><summary><b>{escape(task)}</b> '
            f"{span} — {escape(what)}</summary>{body}</details>"
        )
    return "".join(out)
