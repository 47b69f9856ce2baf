"""What an agent is told: the system prompt (a stable, cacheable prefix) and its task."""

from __future__ import annotations

import re

from plait.messages import SYSTEM_BREAK

__all__ = ["REFUSED", "cut_reply", "cut_text", "external_system", "system_prompt", "task_prompt"]

_SANDBOX = """\
- Commands run in a sandbox: they write only in the worktree and in /tmp, which is yours alone and starts
  empty (nothing of the host's /tmp is there); HOME is an empty directory; everything else is read-only.
- Do not commit: plait commits your work when you finish.
"""

_SYSTEM = f"""\
You are a careful software engineer working alone in a git worktree of a repository.
You change the code with the tools you are given; you cannot talk to a human during the task.

How to work:
- Explore before you change anything: list files, search, and read the code you will touch.
- Make focused edits with edit_file (exact text, found exactly once) or write_file for new files.
- Run the project's tests or checks with the run tool, and fix what you broke.
- Every path is relative to the repository root; you cannot leave it or touch .git.
{_SANDBOX}\
- When the task is done, call finish with a short summary of what you changed and how you verified it.
- Every reply must call at least one tool.
"""

_EXTERNAL = f"""\
You are a careful software engineer working alone in a git worktree of a repository, one worker of plait,
which runs coding agents on the parts of a task and merges their work. You cannot talk to a human during the task.

How to work:
- Explore before you change anything: read the code you will touch.
- Make focused edits with your own tools, then run the project's tests or checks and fix what you broke.
- Stay inside the worktree (your working directory) and leave .git alone.
{_SANDBOX}\
- When the task is done, end with a short summary of what you changed and how you verified it.
"""


_HEAD = "Your task"
_HEADED = re.compile(r"Your task(?: is `[^`\n]*`)?:")
"""How a brief (`task_brief`) opens."""


def system_prompt(extra: str = "") -> str:
    """The shared system prompt; `extra` (repository notes, a plan) is appended after the stable part."""
    return _SYSTEM + (f"\n{extra.strip()}\n" if extra.strip() else "")


def external_system(system: str) -> str:
    """`system` as an agent with tools of its own (an external CLI) is given it: plait's tools are not named."""
    return _EXTERNAL + system[len(_SYSTEM) :] if system.startswith(_SYSTEM) else system


def task_prompt(task: str) -> str:
    """An agent's first message: its task, under one heading (a brief already opens with its own)."""
    return f"{task.strip()}\n" if _HEADED.match(task.lstrip()) else f"{_HEAD}:\n\n{task.strip()}\n"


def too_many_calls(made: int, run: int) -> str:
    """Tells the model that only the first `run` of the `made` tool calls of its reply were run."""
    return (
        f"Your reply made {made:,} tool calls: only the first {run} were run, and the others are not part of the "
        f"conversation. A reply may make at most {run}; make any that are still needed in your next reply."
    )


def cut_reply(limit: int) -> str:
    """Tells the model its reply was cut at its output limit (its last tool call, if any, was not run)."""
    return (
        f"Your reply was cut off at the output limit of {limit:,} tokens: the tool call it ended in was not run. "
        "Send a shorter reply: make smaller edits with edit_file, and write a large file in parts "
        "(write_file a first part, then add the rest with edit_file)."
    )


def cut_text(limit: int) -> str:
    """Tells the model its reply was cut at its output limit before it called any tool (nothing was run)."""
    return (
        f"Your reply was cut off at the output limit of {limit:,} tokens before it called a tool, so nothing was run. "
        "Reply again with less text before the tool call you meant to make; write a large file in parts "
        "(write_file a first part, then add the rest with edit_file)."
    )


REFUSED = (
    "Your last reply ended as a refusal. If the task cannot or should not be done, call finish and say why; "
    "otherwise go on with your next tool call. Refusing again ends your attempt at the task."
)


_PARALLEL = """\
You are one of several agents working on parts of one plan at the same time, each in its own
worktree. Stay inside your write-set: other agents own the other files. Each agent's work is merged
onto the run's integration branch, and checked there, as soon as that agent finishes. Where you
consume an interface another task provides, code against its declared signature exactly. If you
must touch a file outside your write-set, keep the change minimal and say why in your summary.
"""


def shared_prefix(
    repo_map: str, plan_overview: str, *, whole_map: bool = False, instructions: str = "", own_instructions: str = ""
) -> str:
    """The system prompt of an agent of a parallel run: the part every agent shares first, its own part last.

    The instructions come first, word for word the same for every agent, with the repository's own
    `instructions` (its root's AGENTS.md, see `plait.agent.instructions`), then `own_instructions` (those of the
    directories of its files), `repo_map` (the map of its own area of the repository) and `plan_overview` (the
    rows of the plan that concern it). A `whole_map` (of a small repository) is every agent's: it joins the
    shared part. `SYSTEM_BREAK` ends that part.
    """
    shared = f"{instructions.strip()}\n\n" if instructions.strip() else ""
    own = f"{own_instructions.strip()}\n\n" if own_instructions.strip() else ""
    if whole_map:
        shared += f"The repository:\n{repo_map.strip()}\n\n"
    else:
        own += f"The repository around your task:\n{repo_map.strip()}\n\n"
    return system_prompt(f"{_PARALLEL}\n{shared}{SYSTEM_BREAK}{own}The plan:\n{plan_overview.strip()}")


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
    built_on_by: list[str] | None = None,
    owed: list[str] | None = None,
    shared: list[str] | None = None,
    retry: str = "",
) -> str:
    """What one task's agent is asked (its first message wraps this); a retry carries why the last attempt failed.

    `interfaces` are lines on the contracts the task provides or consumes, `starts_from` the tasks whose
    integrated work its worktree already holds, `verify` the command the merge gate runs on the result,
    `experts` the roster of the run's experts (one line each), whom the agent can ask instead of reading.
    `built_on_by` are the tasks planned to build on this one, `owed` lines on the tests integrated work left
    failing for it, `shared` the files it adds to alongside other tasks, and `retry` (from
    `retry_note`) what the worktree holds of the last attempt, replacing `last_failure` and `detail`.
    """
    said = instructions.strip().startswith(title.removesuffix("...").strip())  # a title taken from the task's text
    head = f"{_HEAD} is `{task_id}`" if task_id else _HEAD
    lines = [
        f"{head}:" if said else f"{head}: {title}",
        "",
        instructions.strip(),
        "",
    ]
    owned = [w for w in writes if w not in (shared or [])]
    if owned:
        lines.append("Your write-set (files you own): " + ", ".join(owned))
    if shared:
        lines.append(
            f"Files you share with other tasks: {', '.join(shared)}. Edit them without a claim, at the same time as "
            "the others: add your own lines (an import, an entry in a list or a dict, each on a line of its own) and "
            "change none of the lines already there; the merge keeps every task's additions side by side."
        )
    for line in interfaces or []:
        lines.append(line)
    if starts_from:
        lines.append("Your worktree already holds the finished, integrated work of: " + ", ".join(starts_from))
    if experts.strip():
        lines.append("Experts who have read these areas answer questions with ask_expert; ask them before you read")
        lines.append("an area yourself:")
        lines.append(experts.strip())
    if verify and not task_id:  # one agent: nothing is merged before or after its work
        lines.append(
            f"When you finish, your work is checked: the files must parse, and `{verify}` must not fail any test "
            "that passed at the start, nor any test in a test file you add or change. Run it (or the part that "
            "covers your change) before you finish."
        )
    elif verify:
        lines += _gate_lines(verify, built_on_by or [], owed or [])
    if retry:
        lines += ["", retry]
    elif last_failure:
        lines += ["", f"A previous attempt at this task failed: {last_failure}"]
        if detail:
            lines += ["What it left behind:", detail[-4000:]]
    return "\n".join(lines)


def _tasks(ids: list[str]) -> str:
    return f"Task {ids[0]} is" if len(ids) == 1 else f"Tasks {', '.join(ids)} are"


def _gate_lines(verify: str, built_on_by: list[str], owed: list[str]) -> list[str]:
    lines = [
        "When you finish, your branch is merged onto the run's integration branch (the base plus the work integrated "
        f"before yours) and checked there: the files must parse, and `{verify}` must not fail any test that passed "
        "before your merge, nor any test in a test file you add or change. Run it (or the part that covers your "
        "change) before you finish."
    ]
    if built_on_by:
        lines.append(
            f"{_tasks(built_on_by)} planned to build on your work and land after it: a test in a file you do not "
            "change that fails only because their part is not done yet (a registry they fill in, say) is left for "
            "them to make pass. Your own tests must pass."
        )
    if owed:
        lines.append(
            "Work integrated before yours left these tests failing for the tasks planned to build on it, yours among "
            "them; they must pass once the last of those tasks lands, so if your part completes that work, make them "
            "pass:"
        )
        lines += [f"- {line}" for line in owed]
    return lines


def retry_note(
    number: int,
    why: str,
    detail: str,
    *,
    head: str,
    files: list[str],
    conflicts: list[str],
    put_back: list[tuple[str, str]],
    lost: str = "",
) -> str:
    """What a retry is told of attempt `number`: why it did not get in, what the new worktree holds of it, the output.

    `head` is the integration head the worktree starts on, `files` the paths of the attempt's work now in it as
    uncommitted changes, `conflicts` those left with conflict markers, `put_back` (path, holder) those restored to the
    head's version because another task holds them; `lost` says why none of the work could be brought over.
    """
    shown = f"commit {head[:10]}"
    lines = [f"A previous attempt at this task failed: {why}", f"This is attempt {number + 1}."]
    if lost:
        lines.append(
            f"Its work could not be brought onto the integration branch ({lost}): your worktree is the integration "
            f"branch as it stands ({shown}); do the task again."
        )
    elif files:
        lines.append(
            f"Your worktree: the integration branch as it stands ({shown}), with attempt {number}'s work on top as "
            f"uncommitted changes, in {', '.join(files)}. That work is done: read it, keep what is right and fix what "
            "failed; do not start again."
        )
    else:
        lines.append(
            f"Your worktree: the integration branch as it stands ({shown}); attempt {number} left no work beyond it."
        )
    if conflicts:
        lines.append(
            f"Its work and work integrated since changed the same lines of {', '.join(conflicts)}: those files hold "
            f"conflict markers (<<<<<<< the integration branch's side, >>>>>>> attempt {number}'s). Resolve every one, "
            "keeping the intent of both sides."
        )
    for path, holder in put_back:
        lines.append(
            f"{path} is as the integration branch has it: task `{holder}` holds it now; claim it to change it."
        )
    body = detail.strip().splitlines()
    head_lines = [line for line in body[:3] if len(line.strip()) > 20 and line.strip().rstrip(".:") in why]
    body = [line for line in body if line not in head_lines]  # the reason above, said again by the gate's output
    if "\n".join(body).strip():
        lines += ["What failed:", "\n".join(body)[-4000:]]
    return "\n".join(lines)
