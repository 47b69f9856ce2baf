"""`plait … | head`: a reader that leaves early gets no traceback from plait, whichever path printed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.parametrize("args", [["--version"], ["--help"], ["runs"]])
def test_a_closed_stdout_ends_plait_quietly(args: list[str], tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "commit", "-q", "--allow-empty", "-m", "base"], check=True)
    read, write = os.pipe()
    os.close(read)  # the reader is gone before plait writes a byte
    try:
        done = subprocess.run(
            [sys.executable, "-m", "plait", *args], stdout=write, stderr=subprocess.PIPE, cwd=tmp_path, timeout=120
        )
    finally:
        os.close(write)

    assert "Traceback" not in done.stderr.decode(), done.stderr.decode()
    assert done.returncode in (1, 141), done.stderr.decode()
