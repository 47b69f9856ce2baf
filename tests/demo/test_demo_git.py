"""The demo makes its repository with plait's own git: nothing the user's git configuration runs takes part."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from plait.demo import prepare_demo


def test_the_demo_repository_is_made_without_the_user_s_hooks_or_signing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hooks, marker = tmp_path / "hooks", tmp_path / "hook-ran"
    hooks.mkdir()
    for name in ("post-commit", "post-checkout", "reference-transaction"):
        hook = hooks / name
        hook.write_text(f"#!/bin/sh\necho {name} >> {marker}\n")
        hook.chmod(0o755)
    config = tmp_path / "gitconfig"
    config.write_text(f"[core]\n\thooksPath = {hooks}\n[commit]\n\tgpgsign = true\n[gpg]\n\tprogram = false\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))

    repo, task, _ = prepare_demo(tmp_path / "tally", fast=True)

    assert not marker.exists(), marker.read_text() if marker.exists() else ""
    log = subprocess.run(["git", "log", "--format=%s"], cwd=repo.root, capture_output=True, text=True, check=True)
    assert log.stdout == "tally: initial version\n" and task
