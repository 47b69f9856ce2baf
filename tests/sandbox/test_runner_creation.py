"""Sandboxed shells made with one probe (one run's agents) look up what they share once: the policy, the regions the
machine hides and what it shows again; each still gets its own worktree's confinement."""

from __future__ import annotations

from pathlib import Path

import pytest

from plait.settings import Settings
from plait.workspace import Repo
from plait.workspace.policy import Policy
from plait.workspace.sandbox import Probe, SandboxedShell, factory, probe, sandboxed_shell


def _runners(repo: Repo, settings: Settings, found: Probe, count: int) -> list[SandboxedShell]:
    made = []
    for i in range(count):
        worktree = repo.add_worktree(repo.plait_dir() / "worktrees" / "run1" / f"t{i}", f"t{i}", "HEAD")
        made.append(
            sandboxed_shell(
                settings,
                worktree=worktree.path,
                common_dir=repo.common_dir,
                log=None,
                agent=f"t{i}",
                interactive=False,
                found=found,
            )
        )
    return made


def test_a_runs_runners_look_up_what_they_share_once(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: dict[str, int] = {}

    def counted(name: str, real: object) -> object:
        def call(*args: object, **kwargs: object) -> object:
            calls[name] = calls.get(name, 0) + 1
            return real(*args, **kwargs)  # type: ignore[operator]

        return call

    monkeypatch.setattr(factory, "regions", counted("regions", factory.regions))
    monkeypatch.setattr(Policy, "from_settings", counted("policy", Policy.from_settings))
    settings = Settings()
    runners = _runners(repo, settings, probe(), 3)
    try:
        assert calls == {"regions": 1, "policy": 1}
    finally:
        for runner in runners:
            runner.close()


def test_each_runner_is_confined_as_if_it_were_made_alone(repo: Repo, home: Path) -> None:
    (home / ".aws").mkdir()
    settings = Settings()
    shared = _runners(repo, settings, probe(), 2)
    worktree = shared[1].confinement.worktree
    alone = sandboxed_shell(
        settings,
        worktree=worktree,
        common_dir=repo.common_dir,
        log=None,
        agent="t1",
        interactive=False,
        found=probe(),
    )
    try:
        a, b = shared[1].confinement, alone.confinement
        assert (a.regions, a.visible, a.hidden, a.writable) == (b.regions, b.visible, b.hidden, b.writable)
        assert a.worktree != shared[0].confinement.worktree
        assert any(p.name == "t1" for p in a.visible) and not any(p.name == "t0" for p in a.visible)
    finally:
        for runner in [*shared, alone]:
            runner.close()
