"""What every kind of run works with, and how its agents' commands are run.

`RunContext` is what the kinds of run share: the repository, the settings, the model and the run's log. Each
extends it with what is its own: `Orchestration` (a change, `plait run`), `PlanContext` (the tasks of a plan, run
side by side), `Inquiry` (a question, `plait ask`) and `SessionConfig` (a conversation, `plait session`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from plait.events.runlog import RunLog
from plait.messages import Model
from plait.settings import Settings
from plait.workspace import Repo, Shell

__all__ = ["RunContext", "ShellFactory", "ShellFactoryForRun"]

ShellFactory = Callable[[Path, str, dict[str, str]], Shell]
"""(worktree, agent id, extra environment) -> the shell for that agent's commands."""

ShellFactoryForRun = Callable[[RunLog], ShellFactory]
"""Given a run's log, the factory of its agents' shells."""


@dataclass
class RunContext:
    """What every part of a run works with: the repository, the settings, the model and the run's log."""

    repo: Repo
    settings: Settings
    model: Model
    log: RunLog
