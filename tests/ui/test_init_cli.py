"""`plait init`: a commented `.plait.toml` with the detected test command and a model for the key that is set,
which loads as it is written and is never written over without --force."""

from __future__ import annotations

from pathlib import Path

from cli_support import Plait

from plait.settings import load_settings


def _loaded(project: Path, env: dict[str, str]) -> tuple[str, str | None]:
    settings = load_settings(project, env={**env}, report=None).settings
    return settings.model, settings.verify_command


def test_the_written_file_loads_with_the_detected_command_and_the_model_of_the_key(
    plait: Plait, project: Path, env: dict[str, str]
) -> None:
    (project / "tests").mkdir()
    (project / "tests" / "test_greet.py").write_text("from greet import greet\n")
    wrote = plait("init", cwd=project, extra_env={"ANTHROPIC_API_KEY": "sk-ant-test"})
    assert wrote.code == 0, wrote.err
    text = (project / ".plait.toml").read_text()
    model, verify = _loaded(project, env)
    assert model == "anthropic:claude-sonnet-4-5"
    assert verify is not None and verify.endswith("-m pytest -q -x") and verify in text
    assert f"verify command: `{verify}`" in wrote.out and str(project / ".plait.toml") in wrote.out
    assert 'model = "anthropic:claude-sonnet-4-5"   # ANTHROPIC_API_KEY is set' in text
    assert '# model = "openai:gpt-5.1"' in text
    assert "plait run" in wrote.out


def test_with_no_key_the_model_is_a_comment_and_nothing_detected_stays_one(
    plait: Plait, project: Path, env: dict[str, str]
) -> None:
    wrote = plait("init", "--json", cwd=project)
    assert wrote.code == 0, wrote.err
    assert wrote.json() == {"path": str(project / ".plait.toml"), "model": "", "verify_command": None}
    text = (project / ".plait.toml").read_text()
    assert not [line for line in text.splitlines() if line.startswith(("model", "verify_command"))]
    assert "`plait demo` needs no key" in text and "OPENAI_API_KEY" in text
    assert _loaded(project, env) == ("openai:gpt-5.1", None)  # the defaults: the file only comments


def test_an_existing_file_is_kept_unless_forced(plait: Plait, project: Path, env: dict[str, str]) -> None:
    (project / "Makefile").write_text("test:\n\tpython3 -c pass\n")
    (project / ".plait.toml").write_text("max_steps = 7\n")
    kept = plait("init", cwd=project, extra_env={"OPENAI_API_KEY": "sk-test"})
    assert kept.code == 2 and "already exists" in kept.err and "--force" in kept.err
    assert len(kept.err.strip().splitlines()) == 1
    assert (project / ".plait.toml").read_text() == "max_steps = 7\n"
    forced = plait("init", "--force", cwd=project, extra_env={"OPENAI_API_KEY": "sk-test"})
    assert forced.code == 0, forced.err
    assert _loaded(project, env) == ("openai:gpt-5.1", "make test")
    assert "verify_command = 'make test'" in (project / ".plait.toml").read_text()
    assert "sk-test" not in (project / ".plait.toml").read_text()
