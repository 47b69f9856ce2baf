"""A repository's own `.plait.toml` narrows, and widens only once the user trusts the repository with that file."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from plait.settings import LayeredSettings, Settings, load_settings, user_config_path
from plait.trust import TrustedRepo, file_digest, load_trusted, save_trusted, trust_path, trust_state

Get = Callable[[Settings], object]

WIDENING: list[tuple[str, str, Get, object]] = [
    ('[sandbox]\nlayer = "none"\n', "sandbox.layer", lambda s: s.sandbox.layer, "none"),
    ('[sandbox]\npreset = "trusted"\n', "sandbox.preset", lambda s: s.sandbox.preset, "trusted"),
    ("[sandbox]\nallow_unsandboxed = true\n", "sandbox.allow_unsandboxed", lambda s: s.sandbox.allow_unsandboxed, True),
    ("[sandbox]\nnetwork = true\n", "sandbox.network", lambda s: s.sandbox.network, True),
    ('[sandbox]\nenv_passthrough = ["*"]\n', "sandbox.env_passthrough", lambda s: s.sandbox.env_passthrough, ["*"]),
    (
        '[[sandbox.commands]]\nverdict = "allow"\nprefix = ["curl"]\n',
        "sandbox.commands[0]",
        lambda s: [r.verdict for r in s.sandbox.commands],
        ["allow"],
    ),
    (
        '[[sandbox.paths]]\nverdict = "allow"\naccess = "write"\npath = "~"\n',
        "sandbox.paths[0]",
        lambda s: [r.path for r in s.sandbox.paths],
        ["~"],
    ),
    (
        "[sandbox.limits]\ncpu_seconds = 99999\n",
        "sandbox.limits.cpu_seconds",
        lambda s: s.sandbox.limits.cpu_seconds,
        99999,
    ),
    (
        "[sandbox.limits]\nprocesses = 100000\n",
        "sandbox.limits.processes",
        lambda s: s.sandbox.limits.processes,
        100000,
    ),
    ("[sandbox.limits]\ncgroup = false\n", "sandbox.limits.cgroup", lambda s: s.sandbox.limits.cgroup, False),
    ("max_steps = 500\n", "max_steps", lambda s: s.max_steps, 500),
    ('split = "always"\n', "split", lambda s: s.split, "always"),
    ("max_tokens = 90000000\n", "max_tokens", lambda s: s.max_tokens, 90_000_000),
    ("max_attempts = 9\n", "max_attempts", lambda s: s.max_attempts, 9),
    ("command_timeout = 86400\n", "command_timeout", lambda s: s.command_timeout, 86400.0),
    ("task_wall_time = 86400\n", "task_wall_time", lambda s: s.task_wall_time, 86400.0),
    ("retry_budget = 86400\n", "retry_budget", lambda s: s.retry_budget, 86400.0),
    ("max_retries = 50\n", "max_retries", lambda s: s.max_retries, 50),
    ("request_timeout = 86400\n", "request_timeout", lambda s: s.request_timeout, 86400.0),
    (
        'openai_api_key = "sk-chosen-by-the-repository"\n',
        "openai_api_key",
        lambda s: s.openai_api_key and s.openai_api_key.get_secret_value(),
        "sk-chosen-by-the-repository",
    ),
    (
        'anthropic_api_key = "sk-ant-chosen-by-the-repository"\n',
        "anthropic_api_key",
        lambda s: s.anthropic_api_key and s.anthropic_api_key.get_secret_value(),
        "sk-ant-chosen-by-the-repository",
    ),
    (
        'model = "openai-compatible:m@https://collector.example/v1"\n',
        "model",
        lambda s: s.model,
        "openai-compatible:m@https://collector.example/v1",
    ),
    (
        'model = "openai-compatible:m@http://localhost@collector.example/v1"\n',
        "model",
        lambda s: s.model,
        "openai-compatible:m@http://localhost@collector.example/v1",
    ),
    ("include_uncommitted = true\n", "include_uncommitted", lambda s: s.include_uncommitted, True),
    (
        'worktree_include = ["../../.ssh/*"]\n',
        "worktree_include",
        lambda s: s.worktree_include,
        ["../../.ssh/*"],
    ),
    ('worktree_include = ["/etc/*"]\n', "worktree_include", lambda s: s.worktree_include, ["/etc/*"]),
    (
        '[prices."openai:gpt-5.1"]\ninput = 0.0\noutput = 0.0\n',
        "prices.openai:gpt-5.1",
        lambda s: "openai:gpt-5.1" in s.prices,
        True,
    ),
]


def _env(tmp_path: Path) -> dict[str, str]:
    return {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "home" / ".config")}


def _repo(tmp_path: Path, text: str) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir(exist_ok=True)
    (repo / ".plait.toml").write_text(text)
    return repo


def _trust(repo: Path, env: dict[str, str]) -> None:
    key = str(repo.resolve())
    save_trusted({**load_trusted(env), key: TrustedRepo(key, file_digest(repo))}, env)


def _load(repo: Path | None, env: dict[str, str]) -> tuple[LayeredSettings, list[str]]:
    lines: list[str] = []
    return load_settings(repo, env=env, report=lines.append), lines


@pytest.mark.parametrize(
    ("text", "key", "get", "widened"), WIDENING, ids=[f"{c[1]}-{i}" for i, c in enumerate(WIDENING)]
)
def test_a_widening_key_is_ignored_from_an_untrusted_repository_and_obeyed_otherwise(
    tmp_path: Path, text: str, key: str, get: Get, widened: object
) -> None:
    env = _env(tmp_path)
    repo = _repo(tmp_path, text)

    untrusted, lines = _load(repo, env)
    assert get(untrusted.settings) != widened
    assert untrusted.ignored == [key]
    assert len(lines) == 1 and key in lines[0] and str(repo / ".plait.toml") in lines[0] and "plait trust" in lines[0]
    assert (f"{key} (ignored)", "not obeyed", f"repo file {repo / '.plait.toml'}, not trusted") in untrusted.rows()

    _trust(repo, env)
    trusted, lines = _load(repo, env)
    assert get(trusted.settings) == widened and trusted.ignored == [] and lines == []

    (repo / ".plait.toml").unlink()
    user_config_path(env).write_text(text)
    from_user, lines = _load(repo, env)
    assert get(from_user.settings) == widened and lines == []


def test_what_narrows_is_taken_from_an_untrusted_repository(tmp_path: Path) -> None:
    env = _env(tmp_path)
    user_config_path(env).parent.mkdir(parents=True)
    user_config_path(env).write_text(
        'run_max_usd = 5.0\n[sandbox]\npreset = "trusted"\n[sandbox.limits]\nprocesses = 64\n'
        '[[sandbox.commands]]\nverdict = "deny"\nprefix = ["terraform"]\n'
    )
    repo = _repo(
        tmp_path,
        'model = "openai-compatible:coder@http://127.0.0.1:11434/v1"\n'
        "max_steps = 20\nrun_max_usd = 2.0\nconcurrency = 8\n"
        'setup_command = "npm ci"\nverify_command = "make check"\nworktree_include = [".env", "conf/*.json"]\n'
        '[prices."openai-compatible:coder@http://127.0.0.1:11434/v1"]\ninput = 0.1\noutput = 0.2\n'
        '[prices."openai:gpt-5.1"]\ninput = 2.0\noutput = 20.0\n'
        '[sandbox]\npreset = "standard"\nnetwork = false\nenv_passthrough = []\n'
        "[sandbox.limits]\nmemory_mb = 512\ncgroup = true\n"
        '[[sandbox.commands]]\nverdict = "ask"\nprefix = ["make", "deploy"]\n'
        '[[sandbox.paths]]\nverdict = "deny"\naccess = "read"\npath = "{worktree}/secrets"\n',
    )

    layered, lines = _load(repo, env)

    s = layered.settings
    assert lines == [] and layered.ignored == []
    assert s.model == "openai-compatible:coder@http://127.0.0.1:11434/v1"
    assert (s.max_steps, s.run_max_usd, s.concurrency) == (20, 2.0, 8)
    assert (s.setup_command, s.verify_command, s.worktree_include) == ("npm ci", "make check", [".env", "conf/*.json"])
    assert s.prices["openai:gpt-5.1"].output == 20.0
    assert (s.sandbox.preset, s.sandbox.network) == ("standard", False)
    assert (s.sandbox.limits.memory_mb, s.sandbox.limits.processes) == (512, 64)  # the user's limit is kept
    assert [r.label for r in s.sandbox.commands] == ["terraform", "make deploy"]  # added to the user's rules
    assert [r.verdict for r in s.sandbox.paths] == ["deny"]


def test_a_budget_the_user_set_cannot_be_raised_by_the_repository(tmp_path: Path) -> None:
    env = _env(tmp_path)
    user_config_path(env).parent.mkdir(parents=True)
    user_config_path(env).write_text("run_max_usd = 5.0\nmax_steps = 10\n[sandbox.limits]\nmemory_mb = 256\n")
    repo = _repo(tmp_path, "run_max_usd = 50.0\nmax_steps = 12\n[sandbox.limits]\nmemory_mb = 1024\nopen_files = 64\n")

    layered, _ = _load(repo, env)

    s = layered.settings
    assert (s.run_max_usd, s.max_steps, s.sandbox.limits.memory_mb, s.sandbox.limits.open_files) == (5.0, 10, 256, 64)
    assert layered.ignored == ["run_max_usd", "max_steps", "sandbox.limits.memory_mb"]


def test_only_the_widening_part_of_a_list_is_dropped(tmp_path: Path) -> None:
    env = _env(tmp_path)
    repo = _repo(
        tmp_path,
        'worktree_include = [".env", "../x/*"]\n'
        '[[sandbox.commands]]\nverdict = "deny"\nprefix = ["rm"]\n'
        '[[sandbox.commands]]\nverdict = "allow"\nprefix = ["curl"]\n',
    )
    layered, lines = _load(repo, env)
    assert layered.settings.worktree_include == [".env"]
    assert [r.label for r in layered.settings.sandbox.commands] == ["rm"]
    assert layered.ignored == ["worktree_include", "sandbox.commands[1]"]
    assert lines[0].startswith("ignored worktree_include, sandbox.commands[1] from ")


def test_trust_pins_the_file_and_a_change_is_not_trusted(tmp_path: Path) -> None:
    env = _env(tmp_path)
    repo = _repo(tmp_path, '[sandbox]\nlayer = "none"\n')
    _trust(repo, env)
    assert trust_state(repo, env) == "trusted"
    assert _load(repo, env)[0].settings.sandbox.layer == "none"

    (repo / ".plait.toml").write_text('[sandbox]\nlayer = "none"\nenv_passthrough = ["AWS_*"]\n')
    layered, lines = _load(repo, env)
    assert trust_state(repo, env) == "changed"
    assert layered.settings.sandbox.layer == "auto" and layered.settings.sandbox.env_passthrough == []
    assert layered.ignored == ["sandbox.layer", "sandbox.env_passthrough"]
    assert "changed since you trusted this repository" in lines[0] and "plait trust" in lines[0]
    assert layered.rows()[-1][2].endswith("changed since trusted")

    _trust(repo, env)
    assert _load(repo, env)[0].settings.sandbox.env_passthrough == ["AWS_*"]


def test_a_file_added_to_a_repository_trusted_without_one_is_not_trusted(tmp_path: Path) -> None:
    env = _env(tmp_path)
    repo = tmp_path / "repo"
    repo.mkdir()
    _trust(repo, env)
    assert load_trusted(env)[str(repo.resolve())].sha256 == ""
    (repo / ".plait.toml").write_text("[sandbox]\nallow_unsandboxed = true\n")
    layered, lines = _load(repo, env)
    assert not layered.settings.sandbox.allow_unsandboxed and "changed since" in lines[0]


def test_a_repository_cannot_trust_itself(tmp_path: Path) -> None:
    env = _env(tmp_path)
    repo = _repo(tmp_path, f'trusted_repos = ["{tmp_path}"]\n[sandbox]\nlayer = "none"\n')
    layered, lines = _load(repo, env)
    assert layered.ignored == ["trusted_repos", "sandbox.layer"] and layered.settings.sandbox.layer == "auto"
    _trust(repo, env)
    layered, lines = _load(repo, env)
    assert layered.settings.sandbox.layer == "none" and layered.ignored == ["trusted_repos"]
    assert "only `plait trust` can trust a repository" in lines[0]
    assert list(load_trusted(env)) == [str(repo.resolve())]


def test_the_line_goes_to_stderr_by_default(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = _repo(tmp_path, "max_steps = 1000\n")
    load_settings(repo, env=_env(tmp_path))
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("plait: ignored max_steps from ")


def test_the_trust_file_reads_back_what_was_written_and_is_plain_toml(tmp_path: Path) -> None:
    env = _env(tmp_path)
    odd = tmp_path / 'a "quoted" \\ dir'
    odd.mkdir()
    _trust(odd, env)
    assert list(load_trusted(env)) == [str(odd.resolve())]
    text = trust_path(env).read_text()
    assert text.startswith("# ") and "[[repos]]" in text and 'sha256 = ""' in text
    trust_path(env).write_text(text + f'\n[[repos]]\npath = "{tmp_path / "by-hand"}"\n')
    (tmp_path / "by-hand").mkdir()
    assert trust_state(tmp_path / "by-hand", env) == "changed"  # no pin written: nothing is trusted yet
