"""Helpers for the sandbox tests: the layers to try, the box an agent works in, and the planted secrets."""

from __future__ import annotations

import asyncio
import functools
import subprocess
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from plait.events.store import SQLiteEventStore
from plait.events.types import PolicyDecided
from plait.workspace import CommandResult, Repo
from plait.workspace.sandbox import Probe, SandboxedShell, probe

LAYERS = ("bwrap", "landlock", "none")
FAKE_KEY = "sk-fake-" + "k" * 10 + uuid.uuid4().hex
SSH_MARKER = "ssh-marker-" + uuid.uuid4().hex


@functools.cache
def found() -> Probe:
    return probe()


def layer_params(uncontained: str | None = None) -> list[Any]:
    """One param per layer; skipped where the probe finds it unusable, expected to fail where it cannot contain."""
    params = []
    for name in LAYERS:
        marks: list[Any] = []
        if name != "none" and name not in found().usable():
            marks.append(pytest.mark.skip(reason=f"{name} cannot run here: {found().problem(name)}"))
        if name == "none" and uncontained:
            marks.append(pytest.mark.xfail(strict=True, reason=f"limits only: {uncontained}"))
        params.append(pytest.param(name, marks=marks, id="limits-only" if name == "none" else name))
    return params


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


@dataclass
class Box:
    """One agent's world: the repo, its worktree, a directory outside both, and the runner under test."""

    repo: Repo
    worktree: Path
    outside: Path
    home: Path
    store: SQLiteEventStore
    runner: SandboxedShell

    def run(self, command: str, *, timeout: float = 30, limit: int = 8000) -> CommandResult:
        return asyncio.run(self.runner.run(command, cwd=self.worktree, timeout=timeout, output_limit=limit))

    def decisions(self) -> list[PolicyDecided]:
        return [e for e in self.store.events("run1") if isinstance(e, PolicyDecided)]


MakeBox = Callable[..., Box]
