"""What `plait apply` says before it brings a result in that changes the repository's `.plait.toml`."""

from __future__ import annotations

from plait.events.runlog import RunLog
from plait.trust import REPO_FILE
from plait.ui.summary import config_note, summarize
from plait.workspace import Repo

__all__ = ["config_notes"]


def config_notes(repo: Repo, log: RunLog, target: str) -> list[str]:
    """One line when `target` (the run's result) changes `.plait.toml` from the run's base, naming who did."""
    run_id = log.run_id
    s = summarize(run_id, log.events())
    if not s.base_commit:
        return []
    if not repo.git("diff", "--name-only", s.base_commit, target, "--", REPO_FILE, check=False).strip():
        return []
    tasks = "task" if len(s.config_changes) == 1 else "tasks"
    who = f"{tasks} {', '.join(s.config_changes)} of run {run_id}" if s.config_changes else f"run {run_id}"
    diff = f"git diff {s.base_commit[:12]} {target[:12]} -- {REPO_FILE}"
    return [f"{config_note(who)}; see it with `{diff}`"]
