"""An integrator small enough to trust in tests: git's merge, refusing any conflict."""

from __future__ import annotations

import subprocess
from pathlib import Path

from plait.plan_model import PlanTask
from plait.workspace import Repo
from plait.workspace.git import PLAIT_IDENTITY


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


class MergeTreeIntegrator:
    """Merges each finished branch onto the integration head with `git merge-tree`; refuses conflicts."""

    def __init__(self, repo: Repo, run_id: str, base: str) -> None:
        self.repo, self._head = repo, base
        self._branch = f"plait/{run_id}/integration"
        self.order: list[str] = []
        repo.git("branch", self._branch, base)

    @property
    def head(self) -> str:
        return self._head

    @property
    def branch(self) -> str:
        return self._branch

    async def integrate(self, task: PlanTask, branch: str, commit: str, summary: str) -> tuple[bool, str]:
        out = self.repo.git("merge-tree", "--write-tree", self._head, commit, check=False)
        tree = out.splitlines()[0]
        if "CONFLICT" in out:
            return False, out
        merged = self.repo.git(
            "commit-tree", tree, "-p", self._head, "-p", commit, "-m", f"merge {task.id}", env=PLAIT_IDENTITY
        ).strip()
        self.repo.git("update-ref", f"refs/heads/{self._branch}", merged)
        self._head = merged
        self.order.append(task.id)
        return True, ""
