"""The tools of an agent that works alongside others: its own tools, plus `post_note` and `claim`.

Writes (`write_file`, `edit_file`) outside the task's write-set are claimed first, and a claim waits
for the running task that holds the path. Once granted, when work integrated since the worktree last
had it changed that path, it is merged into the worktree before anything is edited, so that the edit
is made on top of it; the agent is told to read the file again. A `run` whose command changed files
another running task holds has those files put back. Refusals are observations naming the holder,
never exceptions.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import Field

from plait.agent.arguments import PATH_LIMIT, TEXT_LIMIT, ToolArgs
from plait.agent.toolset import Run, Tool, ToolOutcome, Toolset
from plait.coord.board import EVERYONE, Board
from plait.coord.leases import Claim, Leases, Refusal
from plait.messages import ToolCall
from plait.workspace import GitError, Worktree

__all__ = ["coord_tools"]

_WRITES = frozenset({"write_file", "edit_file"})

_POST_DOC = (
    "Post a short note on the board shared with the other agents working on this repository at the same time. "
    "Post when you decide an interface others call or implement (a function signature, a field, a file format), "
    "when you find something another task needs to know (a bug, a moved file, a changed behaviour), or to warn "
    "or ask the task that holds a file you need. Do not post progress reports. Notes reach the agents they "
    "concern at the start of their next turn: those addressed in `to`, or else those whose files match `paths` "
    "or whose contracts match `topic`; the topic 'all' reaches everyone. Notes from others reach you the same "
    "way, as a message starting 'Notes from the rest of the run'."
)
_CLAIM_DOC = (
    "Claim a file outside your own write-set before you edit it, saying why. Files in your write-set need no "
    "claim. If another task still at work owns or has claimed the file, the claim waits until that task has "
    "finished (the others keep working meanwhile); you then get the file with that task's integrated work "
    "merged into your worktree, and must read it again before you edit it. If the wait would take too long or "
    "would deadlock (that task waits for you), you are refused and told which task holds it: then do not edit "
    "it; post a note to that task saying what you need, or work around it in your own files. write_file and "
    "edit_file claim automatically; call this to reserve a file before you plan your edit, or with wait=false "
    "to be refused at once rather than wait."
)


class PostNoteArgs(ToolArgs):
    topic: str = Field(
        min_length=1,
        description="What the note is about: a contract name (such as 'Money.parse'), 'warning', 'finding', "
        "or 'all' for every agent.",
    )
    text: str = Field(
        min_length=1,
        max_length=TEXT_LIMIT,
        description="The note itself, short and exact: signatures, file:line, values.",
    )
    paths: list[str] = Field([], description="Files the note concerns, relative to the repository root.")
    to: list[str] = Field([], description="Task ids to address it to; leave empty to reach whoever it concerns.")


class ClaimArgs(ToolArgs):
    path: str = Field(
        min_length=1, max_length=PATH_LIMIT, description="File (or directory) path, relative to the repository root."
    )
    why: str = Field(
        min_length=1,
        max_length=TEXT_LIMIT,
        description="What you will change there, in a few words, for the other agents.",
    )
    wait: bool = Field(
        True, description="Wait for the task holding the file to finish (true), or be refused at once (false)."
    )


def coord_tools(
    inner: Toolset,
    task_id: str,
    board: Board,
    leases: Leases | None,
    *,
    root: Path | None = None,
    worktree: Worktree | None = None,
    head: Callable[[], str] | None = None,
) -> Toolset:
    """`inner`'s tools for task `task_id`, with post_note and claim on the board and leases shared by the run.

    `root` (the worktree's path by default) turns absolute paths under it into repository paths. Without
    `leases`, the agent gets the board only: no `claim` tool, and writes are not checked. With `worktree` and
    `head` (the run's integration head), a granted claim brings in the integrated work on its path, and files a
    `run` changed that another task holds are put back.
    """
    coordination = _Coordination(task_id, board, leases, root=root, worktree=worktree, head=head)
    mine: list[Tool[Any]] = [Tool("post_note", PostNoteArgs, coordination.post, _POST_DOC)]
    if leases is None:
        return inner | Toolset(mine)
    mine.append(Tool("claim", ClaimArgs, coordination.claim, _CLAIM_DOC))
    return inner.wrap(coordination.guard) | Toolset(mine)


class _Coordination:
    """What the coordination tools of task `task_id` act on: the board, the leases, the worktree."""

    def __init__(
        self,
        task_id: str,
        board: Board,
        leases: Leases | None,
        *,
        root: Path | None,
        worktree: Worktree | None,
        head: Callable[[], str] | None,
    ) -> None:
        self.task_id, self.board, self.leases = task_id, board, leases
        root = root if root is not None else (worktree.path if worktree is not None else None)
        self.root = root.absolute() if root is not None else None
        self.worktree, self.head = worktree, head

    async def claim(self, args: ClaimArgs, call: ToolCall) -> ToolOutcome:
        """The claim tool: claim a path, waiting for its holder or not."""
        outcome = await self._claim(self._relative(args.path), args.why, wait=args.wait, editing=False)
        assert outcome is not None
        return outcome

    async def guard(self, call: ToolCall, run: Run) -> ToolOutcome:
        """Around the inner tools: writes after a claim, commands under watch, the rest as they are."""
        if call.name in _WRITES and call.arguments is not None and isinstance(call.arguments.get("path"), str):
            stop = await self._claim(self._relative(call.arguments["path"]), "edit", wait=True, editing=True)
            return stop if stop is not None else await run(call)
        if call.name == "run" and self.worktree is not None:
            before = await asyncio.to_thread(self.worktree.tree)
            return await self._put_back(before, await run(call))
        return await run(call)

    async def _claim(self, path: str, why: str, *, wait: bool, editing: bool) -> ToolOutcome | None:
        """Claim `path`; None lets an edit go ahead, else the observation (a refusal, or what changed)."""
        assert self.leases is not None
        if wait:
            result = await self.leases.acquire(self.task_id, path, why)
        else:
            result = self.leases.claim(self.task_id, path, why)
        if isinstance(result, Refusal):
            return ToolOutcome(result.message, is_error=True)
        if result.own or result.shared:
            return None if editing else ToolOutcome(result.message)
        return await self._update(result, editing)

    async def _update(self, claim: Claim, editing: bool) -> ToolOutcome | None:
        """Bring the integrated work on the claimed path into the worktree, when it does not have it yet."""
        assert self.leases is not None
        if self.worktree is None or self.head is None:
            return None if editing else ToolOutcome(claim.message)
        worktree, head, path = self.worktree, self.head(), claim.path
        if not await asyncio.to_thread(worktree.lacks, head, path):
            return None if editing else ToolOutcome(claim.message)
        message = f"plait: bring in the integrated work on {path} (integration head {head[:10]})"
        try:
            conflicts = await asyncio.to_thread(worktree.merge_in, head, message)
        except GitError as exc:
            conflicts = [f"(git: {exc.detail})"]
        self.leases.record_update(self.task_id, path, head, conflicts)
        if conflicts:
            self.leases.release(self.task_id, path, "its worktree could not take the integrated work on it")
            by = f"task `{claim.after[-1]}`" if claim.after else "tasks that finished since yours started"
            return ToolOutcome(
                f"refused: {path} was changed by {by}, whose integrated work your worktree does not have yet, and "
                f"merging it conflicts with your own changes in {', '.join(conflicts)}. Your files are as they were "
                f"and the claim is released. Do not edit {path}: post a note to the task that changed it saying "
                "what you need, or work around it in your own files.",
                is_error=True,
            )
        if claim.after:
            holder = claim.after[-1]
            got = f"claimed {path} after task {holder} finished; your worktree now holds {holder}'s integrated work"
        else:
            got = f"claimed {path}; work integrated since your task started changed it, and your worktree now holds it"
        told = f"{got} (integration head {head[:10]} merged in); read {path} again before you edit it."
        if editing:
            told = f"Your edit was not made: {told} Then make your edit on top of that work."
            return ToolOutcome(told, is_error=True)
        return ToolOutcome(told)

    async def _put_back(self, before: str, outcome: ToolOutcome) -> ToolOutcome:
        """Put back the files a command changed that another running task holds, and say so."""
        assert self.leases is not None and self.worktree is not None
        worktree = self.worktree
        after = await asyncio.to_thread(worktree.tree)
        if after == before:
            return outcome
        changed = await asyncio.to_thread(worktree.changed_between, before, after)
        refused: list[Refusal] = []
        for path in changed:
            if self.leases.needs_claim(self.task_id, path):
                result = self.leases.claim(self.task_id, path, "changed by a command")
                if isinstance(result, Refusal):
                    refused.append(result)
        if not refused:
            return outcome
        await asyncio.to_thread(worktree.put_back, before, [r.path for r in refused])
        held = "\n".join(f"- {r.path}: held by task `{r.holder}` ({r.holder_title}): {r.why}" for r in refused)
        note = (
            "plait put back these files, which the command changed but another running task holds "
            f"(the command's other changes stay):\n{held}\n"
            "Do not change them; post a note to that task saying what you need, or work around it."
        )
        return ToolOutcome(
            f"{outcome.output.rstrip()}\n\n{note}", is_error=outcome.is_error, format_error=outcome.format_error
        )

    def _relative(self, path: str) -> str:
        if self.root is not None and Path(path).is_absolute():
            try:
                return Path(path).relative_to(self.root).as_posix()
            except ValueError:
                return path
        return path

    async def post(self, args: PostNoteArgs, call: ToolCall) -> ToolOutcome:
        """The post_note tool."""
        paths = [self._relative(p) for p in args.paths]
        note = self.board.post(self.task_id, args.topic, args.text, paths, args.to)
        audience = list(note.to) or self.board.audience(note)
        if audience:
            return ToolOutcome(f"posted; it reaches {', '.join(audience)} at their next turn.")
        if note.topic == EVERYONE:
            return ToolOutcome("posted; it reaches every other agent at their next turn.")
        return ToolOutcome(
            "posted, but no task's files, contracts or id match it, so nobody will be shown it: "
            "add `paths`, address it with `to`, or use the topic 'all'."
        )
