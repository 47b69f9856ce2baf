"""Agents are told when their worktree holds a git repository of its own, which plait never commits."""

from __future__ import annotations

import asyncio
from pathlib import Path

from plait.run.context import ShellFactory
from plait.workspace import CommandResult, GitError, Repo, Shell

__all__ = ["NestedRepoNotice", "noticing"]


def _note(found: list[str]) -> str:
    shown = ", ".join(f"{path}/" for path in found)
    which = "is a git repository" if len(found) == 1 else "are git repositories"
    return (
        f"[plait: {shown} {which} inside your worktree. plait commits no nested repository (nor changes inside "
        "a submodule), so nothing in it is part of your work. If its files belong to your work, delete its "
        f".git (rm -rf {found[0]}/.git) and keep the files.]"
    )


class NestedRepoNotice:
    """A `Shell` that, after each command, names the nested repositories the agent has not been told of."""

    def __init__(self, inner: Shell, repo: Repo, worktree: Path) -> None:
        self.inner, self.repo, self.worktree = inner, repo, worktree
        self._told: set[str] = set()

    async def run(self, command: str, *, cwd: Path, timeout: float, output_limit: int) -> CommandResult:  # noqa: ASYNC109
        result = await self.inner.run(command, cwd=cwd, timeout=timeout, output_limit=output_limit)
        try:
            found = await asyncio.to_thread(self.repo.nested_repositories, self.worktree)
        except (GitError, OSError):
            return result  # not a worktree (yet): nothing to tell
        new = [path for path in found if path not in self._told]
        if not new:
            return result
        self._told.update(new)
        return result.model_copy(update={"output": f"{result.output}\n{_note(new)}"})

    def close(self) -> None:
        """Close the runner inside, when it can be closed."""
        close = getattr(self.inner, "close", None)
        if callable(close):
            close()


def noticing(runners: ShellFactory, repo: Repo) -> ShellFactory:
    """`runners`, each runner wrapped in a `NestedRepoNotice` for its worktree."""

    def make(worktree: Path, agent: str, env: dict[str, str]) -> Shell:
        return NestedRepoNotice(runners(worktree, agent, env), repo, worktree)

    return make
