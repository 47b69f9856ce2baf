"""The tools of an agent that works alongside others: its own tools, plus `post_note` and `claim`.

Writes (`write_file`, `edit_file`) outside the task's write-set are claimed first; a path another
running task holds is refused with an observation naming that task, never an exception.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from plait.agent._tool_args import tool_spec
from plait.agent.loop import ToolSet
from plait.agent.tools import ToolOutcome
from plait.coord.board import EVERYONE, Board
from plait.coord.leases import Leases, Refusal
from plait.models.base import ToolCall, ToolSpec

__all__ = ["CoordTools"]

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
    "claim. If another task owns or has claimed the file you are refused at once, told which task and why: "
    "then do not edit it; post a note to that task saying what you need, or work around it in your own files. "
    "write_file and edit_file claim automatically, so call this first only to reserve a file early."
)


class _Args(BaseModel):
    model_config = ConfigDict(extra="ignore")


class PostNoteArgs(_Args):
    topic: str = Field(
        min_length=1,
        description="What the note is about: a contract name (such as 'Money.parse'), 'warning', 'finding', "
        "or 'all' for every agent.",
    )
    text: str = Field(min_length=1, description="The note itself, short and exact: signatures, file:line, values.")
    paths: list[str] = Field([], description="Files the note concerns, relative to the repository root.")
    to: list[str] = Field([], description="Task ids to address it to; leave empty to reach whoever it concerns.")


class ClaimArgs(_Args):
    path: str = Field(min_length=1, description="File (or directory) path, relative to the repository root.")
    why: str = Field(min_length=1, description="What you will change there, in a few words, for the other agents.")


class CoordTools:
    """`inner`'s tools for task `task_id`, with the board and leases shared by the run."""

    def __init__(
        self, inner: ToolSet, task_id: str, board: Board, leases: Leases | None, *, root: Path | None = None
    ) -> None:
        """`root`, when given, turns absolute paths under it into repository paths before a lease check.

        Without `leases`, the agent gets the board only: no `claim` tool, and writes are not checked.
        """
        self.inner, self.task_id, self.board, self.leases = inner, task_id, board, leases
        self.root = root.absolute() if root is not None else None

    def specs(self) -> tuple[ToolSpec, ...]:
        """The inner tools, with post_note and claim before finish."""
        mine: tuple[ToolSpec, ...] = (tool_spec("post_note", PostNoteArgs, _POST_DOC),)
        if self.leases is not None:
            mine += (tool_spec("claim", ClaimArgs, _CLAIM_DOC),)
        inner = self.inner.specs()
        rest = tuple(s for s in inner if s.name != "finish")
        return rest + mine + tuple(s for s in inner if s.name == "finish")

    async def execute(self, call: ToolCall) -> ToolOutcome:
        """Run one call: the coordination tools here, writes after a lease check, the rest by the inner tools."""
        if call.name == "post_note":
            return self._checked(call, PostNoteArgs)
        if call.name == "claim" and self.leases is not None:
            return self._checked(call, ClaimArgs)
        if (
            self.leases is not None
            and call.name in _WRITES
            and call.arguments is not None
            and isinstance(call.arguments.get("path"), str)
        ):
            held = self.leases.claim(self.task_id, self._relative(call.arguments["path"]), "edit")
            if isinstance(held, Refusal):
                return ToolOutcome(held.message, is_error=True)
        return await self.inner.execute(call)

    def _relative(self, path: str) -> str:
        if self.root is not None and Path(path).is_absolute():
            try:
                return Path(path).relative_to(self.root).as_posix()
            except ValueError:
                return path
        return path

    def _checked(self, call: ToolCall, args_type: type[_Args]) -> ToolOutcome:
        if call.arguments is None:
            return ToolOutcome(f"the arguments of {call.name} are not a JSON object; send one.", format_error=True)
        try:
            args = args_type.model_validate(call.arguments)
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'arguments'}: {e['msg']}" for e in exc.errors())
            return ToolOutcome(f"invalid call of {call.name}: {problems}. Call it again.", format_error=True)
        if isinstance(args, ClaimArgs) and self.leases is not None:
            result = self.leases.claim(self.task_id, self._relative(args.path), args.why)
            return ToolOutcome(result.message, is_error=isinstance(result, Refusal))
        assert isinstance(args, PostNoteArgs)
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
