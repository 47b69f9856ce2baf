"""Real git repositories for the plan tests."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from pathlib import Path


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def make_repo(root: Path, files: Mapping[str, str | bytes]) -> Path:
    """A git repository at `root` with `files` committed."""
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    return root
