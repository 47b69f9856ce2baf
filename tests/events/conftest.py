"""Each store's log, opened as a process of plait opens it: the SQLite file, or a fresh PostgreSQL database."""

from __future__ import annotations

from pathlib import Path

import pytest
from store_logs import Log

from pg_cluster import PostgresServer


@pytest.fixture
def postgres_url(postgres: PostgresServer) -> str:
    """A fresh, empty PostgreSQL database."""
    return postgres.database()


@pytest.fixture(params=["sqlite", "postgresql"])
def log(request: pytest.FixtureRequest, tmp_path: Path) -> Log:
    """The contract's log, once per store: every test taking it runs against SQLite and against PostgreSQL."""
    path = tmp_path / "events.db"
    if request.param == "sqlite":
        return Log("sqlite", "", path)
    return Log("postgresql", request.getfixturevalue("postgres_url"), path)
