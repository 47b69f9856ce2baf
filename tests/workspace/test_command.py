"""LocalShell with real bash: exit codes, timeouts that kill whole trees, capped output, scrubbed environment."""

from __future__ import annotations

import asyncio
import os
import time
import tracemalloc
from pathlib import Path

import pytest

from plait.workspace import CommandResult, LocalShell, Shell, cap_output, scrub_env


def run(
    command: str, cwd: Path, *, timeout: float = 20, limit: int = 10_000, runner: LocalShell | None = None
) -> CommandResult:
    chosen: Shell = runner or LocalShell(grace=0.5)
    return asyncio.run(chosen.run(command, cwd=cwd, timeout=timeout, output_limit=limit))


def gone(pid: int) -> bool:
    """The process no longer runs (it may linger as a zombie if nobody reaps orphans here)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat[stat.rfind(")") + 2] == "Z"


def wait_gone(pid: int, seconds: float = 3.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if gone(pid):
            return True
        time.sleep(0.02)
    return gone(pid)


def test_exit_codes_and_combined_output(tmp_path: Path) -> None:
    ok = run("echo out; echo err >&2", tmp_path)
    assert ok.exit_code == 0
    assert ok.output == "out\nerr\n"
    assert not ok.timed_out
    assert not ok.truncated
    assert ok.duration_s >= 0
    assert run("exit 3", tmp_path).exit_code == 3
    assert run("pwd", tmp_path).output.strip() == str(tmp_path)


def test_stdin_is_empty(tmp_path: Path) -> None:
    result = run("cat; echo done", tmp_path, timeout=5)
    assert result.exit_code == 0
    assert result.output == "done\n"


def test_a_command_killed_by_a_signal_has_no_exit_code(tmp_path: Path) -> None:
    result = run("kill -KILL $$", tmp_path)
    assert result.exit_code is None
    assert not result.timed_out


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc to find escaped descendants")
def test_timeout_kills_the_whole_tree_including_a_grandchild_in_its_own_session(tmp_path: Path) -> None:
    script = "setsid sleep 300 & echo $! > escaped.pid; sleep 300 & echo $! > child.pid; echo started; wait"
    started = time.monotonic()
    result = run(script, tmp_path, timeout=1)
    assert result.timed_out
    assert result.exit_code is None
    assert result.output == "started\n"
    assert time.monotonic() - started < 10
    for name in ("escaped.pid", "child.pid"):
        assert wait_gone(int((tmp_path / name).read_text())), name


def test_a_tree_that_ignores_sigterm_gets_sigkill(tmp_path: Path) -> None:
    result = run("trap '' TERM; sleep 300 & echo $! > child.pid; wait", tmp_path, timeout=0.5)
    assert result.timed_out
    assert result.duration_s < 5
    assert wait_gone(int((tmp_path / "child.pid").read_text()))


def test_background_processes_are_killed_when_the_command_ends(tmp_path: Path) -> None:
    result = run("sleep 300 & echo $! > bg.pid; echo done", tmp_path, timeout=20)
    assert result.exit_code == 0
    assert result.output == "done\n"
    assert result.duration_s < 5
    assert wait_gone(int((tmp_path / "bg.pid").read_text()))


def test_an_orphan_holding_the_output_open_does_not_hang_the_runner(tmp_path: Path) -> None:
    # The subshell exits at once, so its setsid child is re-parented and cannot be found: a known limit.
    runner = LocalShell(grace=0.3, drain=0.2)
    result = run("(setsid sleep 300 & echo $! > orphan.pid); echo hi", tmp_path, runner=runner)
    orphan = int((tmp_path / "orphan.pid").read_text())
    try:
        assert result.exit_code == 0
        assert result.output == "hi\n"
        assert result.duration_s < 5
    finally:
        os.kill(orphan, 9)


def test_many_megabytes_of_output_are_capped_without_holding_them(tmp_path: Path) -> None:
    tracemalloc.start()
    try:
        result = run("echo START; head -c 40000000 /dev/zero | tr '\\0' 'a'; echo; echo END", tmp_path, limit=2000)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8_000_000
    assert result.exit_code == 0
    assert result.truncated
    assert len(result.output) <= 2000
    assert result.output.startswith("START\naaa")
    assert result.output.endswith("aaa\nEND\n")
    assert "characters cut ...]" in result.output


def test_streamed_capping_equals_capping_the_whole_text(tmp_path: Path) -> None:
    full = "".join(f"{i} é€\n" for i in range(1, 30001))
    result = run('for i in $(seq 1 30000); do echo "$i é€"; done', tmp_path, limit=500)
    assert result.output == cap_output(full, 500)
    small = run("seq 1 10", tmp_path, limit=500)
    assert small.output == "".join(f"{i}\n" for i in range(1, 11))
    assert not small.truncated


def test_cap_output_keeps_head_and_tail_within_the_limit() -> None:
    assert cap_output("short", 10) == "short"
    text = "".join(str(i % 10) for i in range(100_000))
    capped = cap_output(text, 300)
    assert len(capped) <= 300
    head, marker, tail = capped.partition("\n[... ")
    cut = int(tail.split(" ", 1)[0])
    kept_tail = tail.split("...]\n", 1)[1]
    assert text.startswith(head)
    assert text.endswith(kept_tail)
    assert len(head) + cut + len(kept_tail) == len(text)
    assert len(cap_output(text, 10)) <= 50


def test_environment_is_scrubbed_of_credentials(tmp_path: Path) -> None:
    env = {
        "PATH": os.environ["PATH"],
        "OPENAI_API_KEY": "sk-1",
        "GH_TOKEN": "t",
        "github_token": "t",
        "MY_SECRET_VALUE": "s",
        "DB_PASSWORD": "p",
        "SSH_AUTH_SOCK": "/tmp/sock",
        "AWS_ACCESS_KEY_ID": "a",
        "aws_region": "a",
        "GOOGLE_APPLICATION_CREDENTIALS": "/g.json",
        "AZURE_CLIENT_ID": "z",
        "KEEP_ME": "kept",
        "PAGER": "less",
    }
    result = run("env", tmp_path, runner=LocalShell(env=env))
    seen = dict(line.split("=", 1) for line in result.output.splitlines() if "=" in line)
    for secret in ("OPENAI_API_KEY", "GH_TOKEN", "github_token", "MY_SECRET_VALUE", "DB_PASSWORD", "SSH_AUTH_SOCK"):
        assert secret not in seen
    for secret in ("AWS_ACCESS_KEY_ID", "aws_region", "GOOGLE_APPLICATION_CREDENTIALS", "AZURE_CLIENT_ID"):
        assert secret not in seen
    assert seen["KEEP_ME"] == "kept"
    assert seen["GIT_TERMINAL_PROMPT"] == "0"
    assert seen["PAGER"] == "cat"
    assert seen["GIT_PAGER"] == "cat"


def test_the_default_environment_is_this_process_scrubbed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("PLAIT_VISIBLE", "yes")
    result = run('echo "key=${OPENAI_API_KEY:-none} visible=$PLAIT_VISIBLE"', tmp_path)
    assert result.output == "key=none visible=yes\n"
    assert "OPENAI_API_KEY" not in scrub_env({"OPENAI_API_KEY": "x"})


def test_local_runner_is_a_command_runner() -> None:
    runner: Shell = LocalShell()
    assert callable(runner.run)


def test_a_stop_request_that_lands_while_a_helper_winds_down_is_not_lost() -> None:
    from plait.workspace.command import _reap

    async def scenario() -> str:
        winding_down, release = asyncio.Event(), asyncio.Event()

        async def helper() -> None:
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                winding_down.set()
                await release.wait()  # a helper that takes a moment to stop
                raise

        running = asyncio.ensure_future(helper())
        await asyncio.sleep(0)

        async def caller() -> str:
            await _reap(running)
            return "went on as if never stopped"

        call = asyncio.ensure_future(caller())
        await winding_down.wait()
        call.cancel()  # Ctrl-C arrives while the caller waits for its helper
        release.set()
        try:
            return await call
        except asyncio.CancelledError:
            return "stopped"

    assert asyncio.run(scenario()) == "stopped"
