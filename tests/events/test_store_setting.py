"""The `store` setting: who may set it, what it takes, and that its password is never shown."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from plait.errors import UsageError
from plait.events import SQLiteEventStore, open_event_store
from plait.redact import REDACTED
from plait.settings import load_settings, run_settings, user_config_path
from plait.trust import TrustedRepo, file_digest, load_trusted, save_trusted

ATTACKER = "postgresql://plait@db.attacker.example/loot"


def _repo(tmp_path: Path, text: str) -> tuple[Path, dict[str, str]]:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / ".plait.toml").write_text(text)
    return repo, {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "home" / ".config")}


def test_an_untrusted_repository_cannot_send_the_log_to_its_server(tmp_path: Path) -> None:
    repo, env = _repo(tmp_path, f'store = "{ATTACKER}"\n')
    said: list[str] = []
    untrusted = load_settings(repo, env=env, report=said.append)
    assert untrusted.settings.store == "" and untrusted.ignored == ["store"]
    assert len(said) == 1 and "store" in said[0]

    key = str(repo.resolve())
    save_trusted({**load_trusted(env), key: TrustedRepo(key, file_digest(repo))}, env)
    assert load_settings(repo, env=env).settings.store == ATTACKER  # the user trusts it: obeyed


def test_the_user_chooses_the_store_in_their_file_or_the_environment(tmp_path: Path) -> None:
    repo, env = _repo(tmp_path, "max_steps = 5\n")
    user_config_path(env).parent.mkdir(parents=True)
    user_config_path(env).write_text('store = "postgresql://me@db.team/plait"\n')
    assert load_settings(repo, env=env).settings.store == "postgresql://me@db.team/plait"
    env["PLAIT_STORE"] = "postgres://me@other/plait"
    assert load_settings(repo, env=env).settings.store == "postgres://me@other/plait"


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("sqlite:///tmp/x.db", "takes a postgresql:// URL"),
        ("/var/lib/plait/events.db", "takes a postgresql:// URL"),
        ("postgresql://me@db/plait?password=hunter22", "not as ?password="),
    ],
)
def test_a_store_that_cannot_work_is_refused_naming_the_setting(tmp_path: Path, value: str, said: str) -> None:
    with pytest.raises(UsageError, match=rf"setting 'store' from env PLAIT_STORE: .*{re.escape(said)}") as caught:
        load_settings(None, env={"HOME": str(tmp_path), "PLAIT_STORE": value})
    assert "hunter22" not in str(caught.value)


def test_the_password_is_masked_by_plait_config_and_not_carried_into_a_resumed_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / ".config"))
    env = {"HOME": str(tmp_path), "PLAIT_STORE": "postgresql://me:hunter22@db.team/plait"}
    rows = {key: value for key, value, _ in load_settings(None, env=env).rows()}
    assert rows["store"] == f"postgresql://me:{REDACTED}@db.team/plait"
    recorded = {"store": f"postgresql://me:{REDACTED}@elsewhere/plait", "max_steps": 7}
    resumed = run_settings(tmp_path, recorded)
    assert resumed.max_steps == 7 and resumed.store == ""  # the log is where the run was found, not where it says


def test_an_empty_store_is_the_sqlite_file(tmp_path: Path) -> None:
    store = open_event_store("", tmp_path / "plait" / "events.db")
    assert isinstance(store, SQLiteEventStore) and store.path == tmp_path / "plait" / "events.db"
    store.close()
