"""Shared fixtures. No test may reach beyond this machine: the guard below fails any such connection.

The suite runs on parallel workers (pytest-xdist, `--dist loadgroup`): each test keeps its own files, ports,
processes and home; the tests of a module with a module-scoped fixture are sent to one worker, so that what the
fixture makes (a demo run, an uncrashed reference run) is made once rather than once per worker.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator
from typing import Any

import pytest
from _pytest.nodeid import coerce_node_id

from pg_cluster import PostgresServer, Unavailable, start_postgres
from plait.workspace._mounts import unmount_under


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Group each test that takes a module-scoped fixture of the suite's by its module (an explicit group stays),
    then, on a worker of `--dist loadgroup`, name every grouped test as xdist does, `<nodeid>@<group>`.

    pytest-xdist 3.8 names them by setting `item._nodeid`, which pytest 9 no longer reads: without the second
    step every xdist_group marker is ignored and a group's tests are spread over the workers.
    """
    for item in items:
        if item.get_closest_marker("xdist_group"):
            continue
        # no public API says which fixtures an item takes, with their scope; plugins' fixtures have no baseid
        definitions = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {})
        if any(d[-1].scope == "module" and d[-1].baseid for d in definitions.values() if d):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))
    if not (hasattr(config, "workerinput") and getattr(config.option, "loadgroup", False)):
        return
    for item in items:
        names = {
            str(m.args[0] if m.args else m.kwargs.get("name", "default")) for m in item.iter_markers("xdist_group")
        }
        if names and "@" not in item.nodeid.rpartition("]")[2] and hasattr(item, "_id"):
            item._id = coerce_node_id(f"{item.nodeid}@{'_'.join(sorted(names))}")


@pytest.fixture(autouse=True, scope="session")
def _no_mount_left(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Unmount the layered worktrees the session's runs kept (a stopped or killed run keeps its worktrees for a
    resume), so that no mount outlives the files it shows."""
    yield
    unmount_under(tmp_path_factory.getbasetemp())


def _is_local(address: Any) -> bool:
    if isinstance(address, (str, bytes)):  # AF_UNIX paths
        return True
    host = address[0] if isinstance(address, tuple) else address
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@pytest.fixture(autouse=True)
def _no_network(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Fail the test on any connection to a non-loopback address, unless marked `allow_network`."""
    if request.node.get_closest_marker("allow_network"):
        yield
        return
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex

    def guarded(self: socket.socket, address: Any) -> Any:
        if not _is_local(address):
            pytest.fail(f"test tried to reach the network: {address!r}")
        return real_connect(self, address)

    def guarded_ex(self: socket.socket, address: Any) -> Any:
        if not _is_local(address):
            pytest.fail(f"test tried to reach the network: {address!r}")
        return real_connect_ex(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded)
    monkeypatch.setattr(socket.socket, "connect_ex", guarded_ex)
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    yield


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """A PostgreSQL server for the session (a throwaway cluster, or PLAIT_TEST_POSTGRES); skips, saying why, without.

    `postgres.database()` makes a fresh database and returns its URL.
    """
    try:
        server = start_postgres()
    except Unavailable as exc:
        pytest.skip(str(exc))
    yield server
    server.close()
