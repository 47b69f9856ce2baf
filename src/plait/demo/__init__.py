"""`plait demo`: a small bundled project, a task on it, and a scripted agent that does the task."""

from __future__ import annotations

import shutil
import tempfile
from importlib import resources
from pathlib import Path

from plait.errors import UsageError
from plait.models.scripted import ScriptedModel
from plait.workspace import Repo, gitcall

__all__ = ["prepare_demo"]

_IDENTITY = {
    "GIT_AUTHOR_NAME": "plait demo",
    "GIT_AUTHOR_EMAIL": "demo@plait.invalid",
    "GIT_COMMITTER_NAME": "plait demo",
    "GIT_COMMITTER_EMAIL": "demo@plait.invalid",
}


def prepare_demo(directory: Path | None, *, fast: bool, parallel: bool = False) -> tuple[Repo, str, ScriptedModel]:
    """Copy the bundled project to `directory` (a new temp dir by default), commit it, and load the script."""
    bundle = resources.files("plait.demo")
    target = Path(directory) if directory else Path(tempfile.mkdtemp(prefix="plait-demo-")) / "tally"
    if target.exists() and any(target.iterdir()):
        raise UsageError(f"{target} is not empty: give --dir a new or empty directory")
    with resources.as_file(bundle / "repo") as source:
        shutil.copytree(
            source, target, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache")
        )
    for args in (
        ("init", "-q", "-b", "main"),
        ("add", "-A"),
        ("commit", "-q", "--no-verify", "-m", "tally: initial version"),
    ):
        done = gitcall.run(args, target, _IDENTITY)  # plait's own git: no hooks, no signing, whatever is configured
        if done.returncode != 0:
            raise gitcall.GitError(" ".join(args[:2]), gitcall.first_line(done.stderr, f"exit {done.returncode}"))
    task = (bundle / ("parallel_task.txt" if parallel else "task.txt")).read_text().strip()
    with resources.as_file(bundle / ("parallel.yaml" if parallel else "script.yaml")) as script:
        model = ScriptedModel.from_file(script)
    if fast:
        model.turns = [turn.model_copy(update={"delay": 0.0}) for turn in model.turns]
        for conversation in model.conversations:
            conversation.turns = [turn.model_copy(update={"delay": 0.0}) for turn in conversation.turns]
    return Repo.discover(target), task, model
