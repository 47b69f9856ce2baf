"""The sandboxed runner end to end: decisions logged, asks, an honest test run, the no-sandbox refusal, git."""

from __future__ import annotations

import asyncio
import socket
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from sandbox_box import MakeBox, found, layer_params

from plait.errors import EnvironmentProblem
from plait.sandbox_settings import CommandRule, SandboxSettings
from plait.settings import Settings
from plait.workspace.policy import Decision
from plait.workspace.sandbox import Probe, SandboxedShell, sandboxed_shell


@pytest.mark.parametrize("layer", layer_params())
def test_an_honest_test_run_works_under_the_strict_preset(make_box: MakeBox, layer: str) -> None:
    box = make_box(layer)
    result = box.run(f"{sys.executable} -m pytest -q test_calc.py", timeout=120)
    assert result.exit_code == 0, result.output
    assert "1 passed" in result.output


@pytest.mark.parametrize("layer", layer_params())
def test_read_only_git_works_and_the_agent_is_told_plait_commits(make_box: MakeBox, layer: str) -> None:
    box = make_box(layer)
    (box.worktree / "calc.py").write_text("def add(a, b):\n    return b + a\n")
    result = box.run("git status --short && git diff --stat && git log --oneline")
    assert result.exit_code == 0, result.output
    assert "calc.py" in result.output
    refused = box.run("git commit -am 'sneaky'")
    assert refused.exit_code == 126
    assert "commits your changes itself" in refused.output
    assert "Instead:" in refused.output


def test_every_decision_is_logged_with_its_rule(make_box: MakeBox) -> None:
    box = make_box(found().usable()[0])
    box.run("echo fine")
    box.run("git push origin main")
    box.run("pip install requests")
    decisions = [(d.action, d.verdict, d.rule) for d in box.decisions()]
    assert decisions == [
        ("command", "allow", ""),
        ("command", "deny", "git-state"),
        ("command", "deny", "install:pip"),
    ]
    assert all(d.run_id == "run1" and d.agent == "t0" for d in box.decisions())


def test_ask_is_denied_in_an_unattended_run_with_a_way_forward(make_box: MakeBox) -> None:
    box = make_box(found().usable()[0], preset="standard")
    result = box.run("curl https://example.com")
    assert result.exit_code == 126
    assert "unattended" in result.output
    assert "Instead: work offline" in result.output
    (decision,) = box.decisions()
    assert decision.verdict == "deny"
    assert "unattended" in decision.reason


class Recorder:
    def __init__(self, answer: bool) -> None:
        self.answer = answer
        self.asked: list[str] = []

    def __call__(self, decision: Decision, agent: str) -> bool:
        self.asked.append(decision.subject)
        return self.answer


def test_ask_goes_to_the_user_in_interactive_use_once_per_command(make_box: MakeBox) -> None:
    asker = Recorder(answer=False)
    box = make_box(found().usable()[0], preset="standard", interactive=True, asker=asker)
    assert box.run("curl https://example.com").exit_code == 126
    assert box.run("curl https://example.com").exit_code == 126
    assert asker.asked == ["curl https://example.com"]
    assert "the user refused" in box.decisions()[0].reason


@pytest.mark.parametrize("layer", [p for p in layer_params() if p.values[0] != "none"])
def test_an_approved_command_gets_the_network_the_preset_asks_for(make_box: MakeBox, layer: str) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    rule = CommandRule(verdict="ask", glob="*fetch-it*", name="fetch")
    box = make_box(layer, preset="standard", commands=[rule], interactive=True, asker=Recorder(answer=True))
    client = f"{sys.executable} -c \"import socket; socket.create_connection(('127.0.0.1', {port}))\""
    assert box.run(f": fetch-it; {client}").exit_code == 0
    assert box.run(client).exit_code != 0  # not approved: no network
    listener.close()
    kinds = [(d.action, d.verdict) for d in box.decisions()]
    assert ("network", "allow") in kinds


def test_without_an_os_sandbox_unattended_commands_are_refused_plainly(make_box: MakeBox) -> None:
    box = make_box("none", allow_unsandboxed=False)
    result = box.run("echo hello")
    assert result.exit_code == 126
    assert "no OS sandbox works on this machine" in result.output
    assert box.decisions()[0].rule == "unsandboxed"


def test_without_an_os_sandbox_interactive_commands_are_asked(make_box: MakeBox) -> None:
    asker = Recorder(answer=True)
    box = make_box("none", allow_unsandboxed=False, interactive=True, asker=asker)
    assert box.run("echo hello").output == "hello\n"
    assert asker.asked == ["echo hello"]


def test_a_layer_that_cannot_run_here_is_a_plain_error(tmp_path: Path) -> None:
    probe = Probe(platform="linux", root=False, bwrap_problem="bwrap is not installed")
    settings = Settings(sandbox=SandboxSettings(layer="bwrap"))
    with pytest.raises(EnvironmentProblem, match="bwrap cannot run here.*bwrap is not installed"):
        sandboxed_shell(
            settings,
            worktree=tmp_path,
            common_dir=tmp_path,
            log=None,
            agent="a",
            interactive=False,
            found=probe,
        )


def test_passthrough_keeps_a_named_credential(make_box: MakeBox, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEPLOY_TOKEN", "token-value-123456")
    box = make_box(found().usable()[0], env_passthrough=["DEPLOY_TOKEN"])
    result = box.run('test -n "$DEPLOY_TOKEN" && echo present; echo "$DEPLOY_TOKEN"')
    assert result.output.splitlines()[0] == "present"
    assert "token-value-123456" not in result.output  # passed to the command, still redacted from the record


class BrokenLayer:
    """A layer whose set-up in the child fails, as Landlock would on a kernel that refuses the ruleset."""

    name = "landlock"
    pid_namespace = False
    tmpdir = "/tmp"

    def prepare(
        self, argv: Sequence[str], *, cwd: Path, network: bool
    ) -> tuple[list[str], Callable[[], None], tuple[int, ...]]:
        def fail() -> None:
            raise OSError(95, "landlock restrict_self: Operation not supported")

        return list(argv), fail, ()

    def close(self) -> None:
        return None


def test_a_command_whose_confinement_fails_does_not_run(make_box: MakeBox) -> None:
    box = make_box("none")
    runner = SandboxedShell(
        policy=box.runner.policy,
        layer=BrokenLayer(),
        confinement=box.runner.confinement,
        limits=box.runner.limits,
        log=None,
        agent="t9",
    )
    result = asyncio.run(runner.run("touch ran.txt", cwd=box.worktree, timeout=10, output_limit=1000))
    assert result.exit_code == 126
    assert "could not confine this command" in result.output
    assert not (box.worktree / "ran.txt").exists()
