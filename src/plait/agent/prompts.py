"""What an agent is told: the system prompt (a stable, cacheable prefix) and its task."""

from __future__ import annotations

__all__ = ["system_prompt", "task_prompt"]

_SYSTEM = """\
You are a careful software engineer working alone in a git worktree of a repository.
You change the code with the tools you are given; you cannot talk to a human during the task.

How to work:
- Explore before you change anything: list files, search, and read the code you will touch.
- Make focused edits with edit_file (exact text, found exactly once) or write_file for new files.
- Run the project's tests or checks with the run tool, and fix what you broke.
- Every path is relative to the repository root; you cannot leave it or touch .git.
- Do not commit: plait commits your work when you finish.
- When the task is done, call finish with a short summary of what you changed and how you verified it.
- Every reply must call at least one tool.
"""


def system_prompt(extra: str = "") -> str:
    """The shared system prompt; `extra` (repository notes, a plan) is appended after the stable part."""
    return _SYSTEM + (f"\n{extra.strip()}\n" if extra.strip() else "")


def task_prompt(task: str) -> str:
    return f"Your task:\n\n{task.strip()}\n"


_PARALLEL = """\
You are one of several agents working on parts of one plan at the same time, each in its own
worktree. Stay inside your write-set: other agents own the other files, and their work is merged
with yours when you finish. Where you consume an interface another task provides, code against
its declared signature exactly. If you must touch a file outside your write-set, keep the change
minimal and say why in your finish summary.
"""


def shared_prefix(repo_map: str, plan_overview: str) -> str:
    """The system prompt of an agent of a parallel run: stable first, its own part last.

    The instructions come first, word for word the same for every agent, then `repo_map` (the map of its
    own area of the repository) and `plan_overview` (the rows of the plan that concern it).
    """
    own = f"The repository around your task:\n{repo_map.strip()}\n\nThe plan:\n{plan_overview.strip()}"
    return system_prompt(f"{_PARALLEL}\n{own}")


def task_brief(
    task_id: str,
    title: str,
    instructions: str,
    writes: list[str],
    last_failure: str = "",
    detail: str = "",
    *,
    interfaces: list[str] | None = None,
    starts_from: list[str] | None = None,
    verify: str = "",
    experts: str = "",
) -> str:
    """What one task's agent is asked (its first message wraps this); a retry carries why the last attempt failed.

    `interfaces` are lines on the contracts the task provides or consumes, `starts_from` the tasks whose
    integrated work its worktree already holds, `verify` the command the merge gate runs on the result,
    `experts` the roster of the run's experts (one line each), whom the agent can ask instead of reading.
    """
    lines = [f"Your task is `{task_id}`: {title}", "", instructions.strip(), ""]
    if writes:
        lines.append("Your write-set (files you own): " + ", ".join(writes))
    for line in interfaces or []:
        lines.append(line)
    if starts_from:
        lines.append("Your worktree already holds the finished, integrated work of: " + ", ".join(starts_from))
    if experts.strip():
        lines.append("Experts who have read these areas answer questions with ask_expert; ask them before you read")
        lines.append("an area yourself:")
        lines.append(experts.strip())
    if verify:
        lines.append(f"When all branches are merged, the result must pass: {verify}")
        lines.append("Run it (or the part that covers your change) before you finish.")
    if last_failure:
        lines += ["", f"A previous attempt at this task failed: {last_failure}"]
        if detail:
            lines += ["What it left behind:", detail[-4000:]]
    return "\n".join(lines)
