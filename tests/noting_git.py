"""A `git` first on PATH that notes each command line it runs, then runs the real git: how the tests count the git
processes plait starts and tell which ones."""

from __future__ import annotations

import os
import shutil
from pathlib import Path


def noting_git(tmp_path: Path) -> tuple[str, Path]:
    """The PATH with such a `git` first, and the file its command lines go to, one line each (made empty)."""
    real = shutil.which("git")
    assert real is not None, "git is not on PATH"
    wrapper, calls = tmp_path / "noting-git" / "git", tmp_path / "git-calls"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> {calls}\nexec {real} "$@"\n')
    wrapper.chmod(0o755)
    calls.touch()
    return f"{wrapper.parent}{os.pathsep}{os.environ['PATH']}", calls
