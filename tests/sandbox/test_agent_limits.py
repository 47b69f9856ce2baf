"""Limits per agent, not per process: an agent's processes share one memory total, and its commands one total of
bytes added to its worktree and tmp, across commands; a limit hit stops the command, says so, and is logged.

Each runs under every layer. The memory total needs a memory cgroup, skipped where the probe finds none.
"""

from __future__ import annotations

import asyncio
import os
import random
import sys
from pathlib import Path
from typing import Any

import pytest
from sandbox_box import MakeBox, found, layer_params

from plait.sandbox_settings import Limits
from plait.workspace.sandbox import Probe


def memory_layers() -> list[Any]:
    reason = f"no memory cgroup here: {found().memory_cgroup_problem}"
    return [
        pytest.param(*p.values, marks=[*p.marks, pytest.mark.skipif(not found().memory_cgroup, reason=reason)], id=p.id)
        for p in layer_params()
    ]


def pids_layers() -> list[Any]:
    reason = f"no pids cgroup here: {found().cgroup_problem}"
    return [
        pytest.param(*p.values, marks=[*p.marks, pytest.mark.skipif(not found().cgroup, reason=reason)], id=p.id)
        for p in layer_params()
    ]


def alive_with(needle: bytes) -> list[int]:
    """Live (not zombie) processes whose command line contains `needle`."""
    out = []
    for entry in os.scandir("/proc"):
        try:
            cmdline = Path(f"/proc/{entry.name}/cmdline").read_bytes()
            stat = Path(f"/proc/{entry.name}/stat").read_text()
        except OSError:
            continue
        if needle in cmdline and stat[stat.rfind(")") + 2] != "Z":
            out.append(int(entry.name))
    return out


def mine(parent: str) -> list[Path]:
    """The cgroups this test process made under `parent`."""
    return sorted(Path(parent).glob(f"plait-{os.getpid()}-*")) if parent else []


def files(count: int, where: str = ".") -> str:
    """A shell loop that writes `count` files of 1 MB."""
    return f"for i in $(seq {count}); do head -c 1048576 /dev/zero > {where}/f$i.bin; done"


@pytest.mark.parametrize("layer", memory_layers())
def test_three_processes_share_the_agents_memory(make_box: MakeBox, layer: str) -> None:
    box = make_box(layer, limits={"memory_mb": 512})
    hog = f"{sys.executable} -c 'import time; b = bytearray(400 << 20); time.sleep(20)'"
    result = box.run(f"for i in 1 2 3; do {hog} & done; wait; echo finished", timeout=60)
    assert "[plait: stopped: the agent's commands used more than 512 MB of memory" in result.output
    assert "(the limit is sandbox.limits.memory_mb)]" in result.output
    assert "finished" not in result.output
    assert not result.timed_out
    assert [d.rule for d in box.decisions() if d.rule.startswith("limit:")] == ["limit:memory"]


@pytest.mark.parametrize("layer", layer_params())
def test_many_small_files_in_the_worktree_and_tmp_share_the_disk_limit(make_box: MakeBox, layer: str) -> None:
    box = make_box(layer, limits={"disk_mb": 50})
    result = box.run(f"{files(90)}; {files(81, '$TMPDIR')}; sleep 20; echo finished", timeout=60)
    assert "[plait: stopped: the agent's commands added more than 50 MB to its worktree and" in result.output
    assert "(the limit is sandbox.limits.disk_mb)" in result.output
    assert "finished" not in result.output
    assert not result.timed_out
    hits = [d for d in box.decisions() if d.rule.startswith("limit:")]
    assert [d.rule for d in hits] == ["limit:disk"]
    assert hits[0].verdict == "deny"


@pytest.mark.parametrize("layer", layer_params())
def test_two_commands_in_a_row_share_the_disk_total_and_deleting_makes_room(make_box: MakeBox, layer: str) -> None:
    box = make_box(layer, limits={"disk_mb": 50})
    first = box.run(f"mkdir a && {files(30, 'a')} && echo first", timeout=60)
    assert first.output.strip() == "first"
    second = box.run(f"mkdir b && {files(30, 'b')}; sleep 20; echo second", timeout=60)
    assert "added more than 50 MB" in second.output
    assert "second" not in second.output
    cleanup = box.run("rm -rf a b && echo cleaned", timeout=60)
    assert cleanup.output.strip() == "cleaned"
    again = box.run(f"mkdir c && {files(30, 'c')} && echo again", timeout=60)
    assert again.output.strip() == "again"


@pytest.mark.parametrize("layer", memory_layers())
def test_the_agents_memory_cgroup_holds_the_limit_and_goes_when_the_runner_closes(
    make_box: MakeBox, layer: str
) -> None:
    parent = found().memory_cgroup
    before, pids_before = mine(parent), mine(found().cgroup)
    box = make_box(layer, limits={"memory_mb": 300})
    assert box.run("echo hi").output.strip() == "hi"
    made = [d for d in mine(parent) if d not in before]
    assert len(made) == 1
    limit = made[0] / ("memory.max" if (made[0] / "memory.max").exists() else "memory.limit_in_bytes")
    assert int(limit.read_text()) == 300 << 20
    box.runner.close()
    assert not made[0].exists()
    assert [d for d in mine(found().cgroup) if d not in pids_before] == []


@pytest.mark.parametrize("cgroup", [True, False], ids=["cgroup", "no-cgroup"])
@pytest.mark.parametrize("layer", layer_params())
def test_every_process_still_gets_the_per_process_limits(make_box: MakeBox, layer: str, cgroup: bool) -> None:
    limits = {"memory_mb": 300, "file_size_mb": 7, "open_files": 77, "cpu_seconds": 33, "cgroup": cgroup}
    box = make_box(layer, limits=limits)
    result = box.run("ulimit -d; ulimit -f; ulimit -n; ulimit -St; ulimit -Ht")
    assert result.output.split() == [str(300 << 10), str(7 << 10), "77", "33", "38"]


def test_the_report_says_whether_memory_is_an_agents_total() -> None:
    with_cgroup = Probe(platform="linux", root=True, cgroup="/x", memory_cgroup="/y")
    assert "512 MB memory for all of an agent's processes" in with_cgroup.report("none", Limits(memory_mb=512))
    assert "4096 MB added to the worktree and tmp" in with_cgroup.report("none", Limits())
    without = Probe(platform="linux", root=True, memory_cgroup_problem="no memory controller")
    assert "512 MB memory per process (no memory cgroup: no memory controller)" in without.report(
        "none", Limits(memory_mb=512)
    )


@pytest.mark.parametrize("layer", pids_layers())
def test_two_commands_at_once_share_the_agents_process_limit(make_box: MakeBox, layer: str) -> None:
    box = make_box(layer, limits={"processes": 64})
    seconds = f"3.{random.randrange(10**6, 10**7)}"
    command = f"for i in $(seq 40); do sleep {seconds} & done; wait; echo done"

    async def both() -> list[str]:
        runs = [box.runner.run(command, cwd=box.worktree, timeout=30, output_limit=4000) for _ in range(2)]
        return [r.output for r in await asyncio.gather(*runs)]

    outputs = asyncio.run(both())
    assert any("the agent's commands tried to run more than 64 processes at once" in o for o in outputs), outputs
    assert alive_with(f"sleep\0{seconds}".encode()) == []


@pytest.mark.parametrize("layer", pids_layers())
def test_a_command_that_cannot_join_the_agents_cgroup_does_not_run(make_box: MakeBox, layer: str) -> None:
    before = mine(found().cgroup)
    box = make_box(layer)
    for group in [d for d in mine(found().cgroup) if d not in before]:
        for leaf in group.glob("command-*"):
            leaf.rmdir()
        group.rmdir()  # behind the runner's back: joining it now fails
    result = box.run("touch ran.txt; echo ran")
    assert result.exit_code == 126
    assert "plait could not confine this command" in result.output
    assert not (box.worktree / "ran.txt").exists()
