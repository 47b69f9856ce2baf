"""Escapes through processes and output: a fork bomb, a detached process, gigabytes of output, a sleep ignoring TERM.

Each runs under every layer, with and without the pids cgroup (where the probe found one), since a machine may
lack it: then the bwrap pid namespace, or the watchdog and the marker sweep, must hold on their own.
"""

from __future__ import annotations

import os
import random
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from sandbox_box import MakeBox, found, layer_params


def cgroup_params() -> list[Any]:
    skip = pytest.mark.skipif(not found().cgroup, reason=f"no pids cgroup here: {found().cgroup_problem}")
    return [pytest.param(True, marks=skip, id="cgroup"), pytest.param(False, id="no-cgroup")]


def alive_with(needle: bytes) -> list[int]:
    """Live (not zombie) processes whose command line contains `needle`."""
    found_pids = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = Path(f"/proc/{entry.name}/cmdline").read_bytes()
            stat = Path(f"/proc/{entry.name}/stat").read_text()
        except OSError:
            continue
        if needle in cmdline and stat[stat.rfind(")") + 2] != "Z":
            found_pids.append(int(entry.name))
    return found_pids


def marker() -> str:
    return f"{random.randrange(10**8, 10**9)}"


def bomb_params() -> list[Any]:
    """With the pids cgroup the kernel bounds a real fork bomb; without one only an ordinary user's RLIMIT_NPROC
    does. As root without a cgroup, only the watchdog stands, and it is starved of CPU by the bomb it watches:
    a real bomb could exhaust the machine's pids before it is caught, so that case runs the bounded flood below."""
    cgroup, no_cgroup = cgroup_params()
    if found().root:
        no_cgroup = pytest.param(
            False, marks=pytest.mark.skip(reason="root: RLIMIT_NPROC binds no one"), id="no-cgroup"
        )
    return [cgroup, no_cgroup]


@pytest.mark.parametrize("cgroup", bomb_params())
@pytest.mark.parametrize("layer", layer_params())
def test_a_fork_bomb_is_bounded_and_killed(make_box: MakeBox, layer: str, cgroup: bool) -> None:
    box = make_box(layer, limits={"processes": 64, "cgroup": cgroup})
    tag = marker()
    result = box.run(f": {tag}; bomb() {{ bomb | bomb & }}; bomb; sleep 30", timeout=20)
    assert "more than 64 processes" in result.output
    assert not result.timed_out
    assert alive_with(tag.encode()) == []


@pytest.mark.parametrize("cgroup", cgroup_params())
@pytest.mark.parametrize("layer", layer_params())
def test_a_flood_of_processes_is_stopped_at_the_limit(make_box: MakeBox, layer: str, cgroup: bool) -> None:
    box = make_box(layer, limits={"processes": 64, "cgroup": cgroup})
    seconds = marker()
    result = box.run(f"for i in $(seq 150); do sleep {seconds} & done; wait", timeout=20)
    assert "more than 64 processes" in result.output
    assert not result.timed_out
    assert alive_with(f"sleep\0{seconds}".encode()) == []


@pytest.mark.parametrize("cgroup", cgroup_params())
@pytest.mark.parametrize("layer", layer_params())
def test_a_process_that_detaches_with_setsid_is_killed(make_box: MakeBox, layer: str, cgroup: bool) -> None:
    box = make_box(layer, limits={"cgroup": cgroup})
    seconds = marker()
    # The first detaches and stays a child of bash; the second's parent exits at once, so it is re-parented.
    result = box.run(f"setsid sleep {seconds} & (setsid sleep {seconds}.5 &); echo started")
    assert result.output.startswith("started")
    assert alive_with(f"sleep\0{seconds}".encode()) == []


@pytest.mark.parametrize("layer", layer_params())
def test_gigabytes_of_output_are_capped(make_box: MakeBox, layer: str) -> None:
    box = make_box(layer)
    tracemalloc.start()
    try:
        result = box.run("yes | head -c 3G", timeout=1, limit=4000)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.truncated
    assert len(result.output) < 4500
    assert peak < 64 * 2**20


@pytest.mark.parametrize("layer", layer_params())
def test_a_sleep_that_ignores_sigterm_is_killed(make_box: MakeBox, layer: str) -> None:
    box = make_box(layer, grace=0.3)
    seconds = marker()
    result = box.run(f"trap '' TERM; sleep {seconds} & wait", timeout=0.5)
    assert result.timed_out
    assert result.exit_code is None
    assert alive_with(f"sleep\0{seconds}".encode()) == []
