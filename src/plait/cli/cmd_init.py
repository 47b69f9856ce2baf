"""`plait init`: write a commented `.plait.toml` for this repository, with its test command and a model for the
API key that is set; `plait config`: the settings in effect and where each came from."""

from __future__ import annotations

import json
import os
import shutil
import sys
import tomllib
from pathlib import Path
from typing import Annotated

import typer

from plait.cli._options import JsonOpt, RepoOpt
from plait.errors import EnvironmentProblem, UsageError
from plait.reconcile.verify import detect_verify_command
from plait.settings import Settings, settings_to_show
from plait.trust import REPO_FILE
from plait.ui._reading import err, out
from plait.ui._safe import escaped
from plait.workspace import Repo

__all__ = ["config", "detected_verify", "init", "init_text"]

MODELS = (("OPENAI_API_KEY", "openai:gpt-5.1"), ("ANTHROPIC_API_KEY", "anthropic:claude-sonnet-4-5"))
"""Each provider's key and the model to write for it, in the order the first key set is chosen."""


def _toml_string(text: str) -> str:
    """`text` as a TOML string: a literal one ('...', no escapes to read) when it can be."""
    if "'" not in text and "\n" not in text and text.isprintable():
        return f"'{text}'"
    return json.dumps(text)  # a JSON string is a TOML basic string


def _python(root: Path) -> str:
    """The Python the gate would test with: the repository's virtualenv, else the one on PATH."""
    for candidate in (root / ".venv" / "bin" / "python", root / "venv" / "bin" / "python"):
        if candidate.exists():
            return str(candidate)
    return "python3" if shutil.which("python3") else "python"


def detected_verify(repo: Repo) -> str | None:
    """The verify command the gate would detect in the checkout (its tracked and new, not ignored, files)."""
    listed = repo.git("ls-files", "-z", "--cached", "--others", "--exclude-standard", check=False)
    files = {name for name in listed.split("\0") if name}

    def read(path: str) -> str | None:
        try:
            return (repo.root / path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None

    return detect_verify_command(files, read, python=_python(repo.root))


def _model_lines(env: dict[str, str]) -> tuple[str, list[str]]:
    """(the model chosen, its lines): the first provider whose key is set, the others as comments."""
    found = [(key, model) for key, model in MODELS if env.get(key)]
    if not found:
        lines = [
            "# No API key is set in the environment: export one, then name its model here, such as",
            *(f'#   {key} for model = "{model}"' for key, model in MODELS),
            '# or a local server: model = "openai-compatible:NAME@http://localhost:11434/v1".',
            "# `plait demo` needs no key: its agents are scripted.",
            f'# model = "{MODELS[0][1]}"',
        ]
        return "", lines
    key, model = found[0]
    lines = [f'model = "{model}"   # {key} is set']
    lines += [f'# model = "{other}"   # {k}{" is set too" if env.get(k) else ""}' for k, other in MODELS if k != key]
    return model, lines


def _verify_lines(command: str | None) -> list[str]:
    if command is None:
        return [
            "# No test command was found (pytest, npm test, cargo test, go test, make test): until one is set,",
            "# the gate checks syntax and names across branches only.",
            '# verify_command = "make test"',
        ]
    return [
        "# Detected in this checkout; plait would detect it on each run, this line fixes it (edit as you like).",
        f"verify_command = {_toml_string(command)}",
    ]


def init_text(model_lines: list[str], verify: str | None) -> str:
    """The whole `.plait.toml`: the settings found, then the usual knobs as comments with their defaults."""
    fields = Settings.model_fields
    lines = [
        "# plait's settings for this repository. `plait config` shows every setting and where its value came from;",
        "# your own ~/.config/plait/config.toml, PLAIT_* variables and flags come before this file.",
        "# plait obeys this file in full only once you trust the repository (`plait trust`); until then it",
        "# takes from it only what narrows (a stricter sandbox, lower limits) and the commands below.",
        "",
        "# The model the agents use.",
        *model_lines,
        "",
        "# What the gate runs on the agents' combined work before it is integrated.",
        *_verify_lines(verify),
        "",
        "# Limits, shown at their defaults.",
        f"# max_steps = {fields['max_steps'].default}            # model calls per agent",
        f"# concurrency = {fields['concurrency'].default}            # agents at work at the same time",
        f"# max_attempts = {fields['max_attempts'].default}           # tries per task before it is dropped",
        "# run_max_usd = 5.0         # stop a run before a model call that would spend more",
        '# setup_command = ""       # run in each new worktree first, such as installing dependencies',
        "",
    ]
    return "\n".join(lines)


def init(
    force: Annotated[bool, typer.Option("--force", help=f"Overwrite an existing {REPO_FILE}.")] = False,
    as_json: JsonOpt = False,
    repo_path: RepoOpt = Path(),
) -> None:
    """Write a commented .plait.toml for this repository: its test command and a model for your API key."""
    repo = Repo.discover(repo_path)
    path = repo.root / REPO_FILE
    if path.exists() and not force:
        raise UsageError(f"{path} already exists: edit it, or pass --force to write a new one over it")
    verify = detected_verify(repo)
    model, model_lines = _model_lines(dict(os.environ))
    text = init_text(model_lines, verify)
    Settings.model_validate(tomllib.loads(text))  # what is written loads: a slip here is plait's own bug
    path.write_text(text, encoding="utf-8")
    if as_json:
        sys.stdout.write(json.dumps({"path": str(path), "model": model, "verify_command": verify}, indent=2) + "\n")
        return
    out.print(f"[green]wrote[/] {escaped(str(path))}", highlight=False)
    out.print(f"  model: {escaped(model) if model else 'none: no API key is set (see the file)'}", highlight=False)
    found = f"`{escaped(verify)}`" if verify else "none detected (see the file)"
    out.print(f"  verify command: {found}", highlight=False)
    out.print("next:", highlight=False)
    if not model:
        out.print("  export OPENAI_API_KEY or ANTHROPIC_API_KEY, and set model in it; `plait demo` needs neither")
    out.print(f"  `plait config` shows what plait will use; commit {REPO_FILE} to share it", highlight=False)
    out.print('  `plait run "TASK"` starts agents on a task', highlight=False)


def config(repo_path: RepoOpt = Path(), as_json: JsonOpt = False) -> None:
    """Print the effective settings and where each value came from (secrets masked).

    A setting that cannot be taken is shown as BROKEN with why, the others as they would be without it, and the
    command exits 2."""
    from rich.table import Table

    try:
        repo: Repo | None = Repo.discover(repo_path)
    except EnvironmentProblem:
        repo = None
    layered = settings_to_show(repo.root if repo is not None else None)
    rows = layered.rows()
    if repo is not None and not layered.settings.verify_command and "verify_command" not in layered.broken:
        found = detected_verify(repo)  # what the gate would run, unless a setting says otherwise
        rows = [(k, found, "detected") if k == "verify_command" and found else (k, v, f) for k, v, f in rows]
    if as_json:
        out.print_json(json.dumps({k: {"value": v, "source": src} for k, v, src in rows}))
    else:
        table = Table("setting", "value", "from")
        for key, value, source in rows:
            table.add_row(escaped(key), escaped(value), escaped(source))
        out.print(table)
    for why in layered.broken.values():
        err.print(f"[red]plait: error:[/] {escaped(why)}", highlight=False, soft_wrap=True)
    if layered.broken:
        raise typer.Exit(UsageError.exit_code)
