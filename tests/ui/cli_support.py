"""Helpers for driving the real `plait` command in tests: in this process (`plait.cli.main`), or in a process of
its own for what needs one."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from plait.cli import main


@dataclass
class Result:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


Plait = Callable[..., Result]


class _Captured(io.StringIO):
    """What a command writes to stdout or stderr, kept as text (encoded as a UTF-8 pipe would be)."""

    encoding = "utf-8"


def run_in_process(args: tuple[str, ...], cwd: Path, env: dict[str, str], stdin: str, *, fast: bool = True) -> Result:
    """`plait ARGS` run by `plait.cli.main` in this process: in `cwd`, with exactly `env` as its environment,
    `stdin` as its input and its output captured; the directory, environment and streams are put back after.
    `fast=False` parses every command with typer."""
    with pytest.MonkeyPatch.context() as patch, warnings.catch_warnings():
        warnings.resetwarnings()  # a process of its own keeps Python's default filters, not the suite's errors
        for category in (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning):
            warnings.simplefilter("ignore", category)
        patch.chdir(cwd)
        for key in set(os.environ) - set(env):
            patch.delenv(key)
        for key, value in env.items():
            patch.setenv(key, value)
        out, err = _Captured(), _Captured()
        patch.setattr(sys, "stdin", io.StringIO(stdin))
        patch.setattr(sys, "stdout", out)
        patch.setattr(sys, "stderr", err)
        code = main(list(args), fast=fast)
    return Result(code, out.getvalue(), err.getvalue())


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()
