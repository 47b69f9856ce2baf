"""The gate's model-free stages (parse, then the cross-branch semantic check) on a bench merge; no verify command."""

from __future__ import annotations

from plait.reconcile._gitio import git_bytes
from plait.reconcile.gate import Gate
from plait.workspace import Repo

__all__ = ["gate_refusal", "merge_base"]


def merge_base(repo: Repo, ours: str, theirs: str) -> str:
    """The merge base of two commits, or `ours` when they have none."""
    status, out = git_bytes(repo, "merge-base", ours, theirs, ok=range(2))
    return out.decode().strip() if status == 0 and out.strip() else ours


async def gate_refusal(repo: Repo, base: str, commit: str) -> str:
    """Why the gate (parse and semantic stages, checked against `base`) refuses `commit`; empty when it passes."""
    gate = Gate(repo, base=base, detect=False, worktree=repo.common_dir / "bench-gate-unused")
    result = await gate.check(commit)
    if result.passed:
        return ""
    first = next((line for line in result.output.splitlines() if line.strip()), "")
    return f"{result.stage}: {first}"
