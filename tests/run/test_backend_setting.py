"""Who may choose where attempts run, and the one-line refusals of a ray backend that cannot work."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from plait.errors import ConfigError
from plait.events.store import SQLiteEventStore
from plait.run.backends import open_backend
from plait.settings import Settings, load_settings
from plait.workspace import Repo


def _repo(where: Path) -> Repo:
    git = ["git", "-C", str(where), "-c", "user.name=T", "-c", "user.email=t@example.invalid"]
    subprocess.run(["git", "init", "-q", str(where)], check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "base"], check=True)
    return Repo.discover(where)


def test_an_untrusted_repository_cannot_send_the_agents_to_its_cluster(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / ".plait.toml").write_text('backend = "ray"\nray_address = "cluster.attacker.example:6379"\nmax_steps = 5\n')
    env = {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "home" / ".config")}
    said: list[str] = []
    loaded = load_settings(repo, env=env, report=said.append)
    assert loaded.settings.backend == "local" and loaded.settings.ray_address == ""
    assert sorted(loaded.ignored) == ["backend", "ray_address"] and loaded.settings.max_steps == 5
    assert len(said) == 1 and "backend" in said[0]


@pytest.mark.parametrize(
    ("settings", "said"),
    [
        (Settings(backend="ray"), "needs an event log every node can reach"),
        (Settings(backend="ray", store="postgresql://me@db/plait", agent="codex"), "runs plait's own agent"),
    ],
)
def test_a_ray_backend_that_cannot_work_is_refused_before_ray_is_touched(
    tmp_path: Path, settings: Settings, said: str
) -> None:
    store = SQLiteEventStore(tmp_path / "events.db")
    with pytest.raises(ConfigError, match=said):
        open_backend(settings, _repo(tmp_path), store, "0" * 40)
    store.close()


def test_the_local_backend_is_no_backend(tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "events.db")
    assert open_backend(Settings(), _repo(tmp_path), store, "0" * 40) is None
    store.close()
