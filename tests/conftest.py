"""Shared fixtures. No test may reach beyond this machine: the guard below fails any such connection."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator
from typing import Any

import pytest

from pg_cluster import PostgresServer, Unavailable, start_postgres


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
