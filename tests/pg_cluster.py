"""A throwaway PostgreSQL server for the tests, or the one PLAIT_TEST_POSTGRES names.

Without PLAIT_TEST_POSTGRES, `initdb` makes a cluster in a new directory under the system's temporary directory
and `pg_ctl` starts it listening on a Unix socket in that directory only (no TCP port). The binaries are looked
for on PATH, then where Debian's and Homebrew's packages put them. PostgreSQL refuses to run as root: as root,
the cluster belongs to the `postgres` user (made by the packages), and its commands run as that user.

PLAIT_TEST_POSTGRES is the URL of a database on a server where the tests may create databases.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

__all__ = ["PostgresServer", "Unavailable", "start_postgres"]

PASSWORD = "pg-Secret-4711"
"""Put in every URL the fixture hands out, so that tests can check it is never shown (the cluster trusts
local connections and ignores it)."""


class Unavailable(Exception):
    """No PostgreSQL can run here; the message says why (the tests that need one skip with it)."""


class PostgresServer:
    """A server the tests may create databases on; `database()` makes a fresh one and returns its URL."""

    def __init__(self, url: str, stop: Callable[[], None] | None = None, directory: Path | None = None) -> None:
        self.url, self._stop, self._directory = url, stop, directory

    def database(self) -> str:
        import psycopg

        name = f"plait_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return urlsplit(self.url)._replace(path=f"/{name}").geturl()

    def close(self) -> None:
        if self._stop is not None:
            self._stop()
        if self._directory is not None:
            shutil.rmtree(self._directory, ignore_errors=True)


def binaries() -> Path | None:
    """The directory of `initdb` and `pg_ctl`, the newest version where packages put several."""
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(found).parent
    candidates = [*Path("/usr/lib/postgresql").glob("*/bin"), Path("/usr/local/pgsql/bin")]
    for brew in ("/usr/local/opt", "/opt/homebrew/opt"):
        candidates += Path(brew).glob("postgresql*/bin")
    usable = [c for c in candidates if (c / "initdb").exists() and (c / "pg_ctl").exists()]

    def version(path: Path) -> tuple[int, ...]:
        digits = "".join(c if c.isdigit() else " " for c in str(path))
        return tuple(int(n) for n in digits.split())

    return max(usable, key=version) if usable else None


def _owner() -> pwd.struct_passwd | None:
    """Who runs the cluster: us, or the `postgres` user when we are root."""
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam("postgres")
    except KeyError:
        raise Unavailable("PostgreSQL cannot run as root and there is no `postgres` user to run it as") from None


def _run(command: list[str], owner: pwd.struct_passwd | None, cwd: Path) -> subprocess.CompletedProcess[str]:
    who = {"user": owner.pw_uid, "group": owner.pw_gid, "extra_groups": []} if owner else {}
    return subprocess.run(command, capture_output=True, text=True, check=False, cwd=cwd, **who)


def _cluster() -> PostgresServer:
    bindir = binaries()
    if bindir is None:
        raise Unavailable("no PostgreSQL server binaries (initdb, pg_ctl) on PATH or in /usr/lib/postgresql")
    owner = _owner()
    directory = Path(tempfile.mkdtemp(prefix="plait-pg-"))
    if owner is not None:
        os.chown(directory, owner.pw_uid, owner.pw_gid)
    data, log = directory / "data", directory / "server.log"
    initdb = [str(bindir / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C"]
    start = [str(bindir / "pg_ctl"), "-D", str(data), "-l", str(log), "-w", "-t", "60", "start", "-o"]
    start.append(f"-c listen_addresses='' -k {directory} -c max_connections=200")
    for step in ([*initdb, "--no-sync"], start):
        done = _run(step, owner, directory)
        if done.returncode != 0:
            tail = log.read_text()[-600:] if log.exists() else ""
            shutil.rmtree(directory, ignore_errors=True)
            raise Unavailable(f"{Path(step[0]).name} failed: {(done.stderr or done.stdout).strip()[-600:]} {tail}")

    def stop() -> None:
        _run([str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"], owner, directory)

    return PostgresServer(f"postgresql://postgres:{PASSWORD}@/postgres?host={directory}", stop, directory)


def start_postgres() -> PostgresServer:
    """The server named by PLAIT_TEST_POSTGRES, else a throwaway cluster; `Unavailable` says why there is none."""
    try:
        import psycopg
    except ImportError:
        raise Unavailable("psycopg is not installed (the dev or postgres extra)") from None
    given = os.environ.get("PLAIT_TEST_POSTGRES")
    server = PostgresServer(given) if given else _cluster()
    try:
        with psycopg.connect(server.url, autocommit=True, connect_timeout=10) as conn:
            conn.execute("SELECT 1")
    except psycopg.Error as exc:
        server.close()
        raise Unavailable(f"cannot connect to the test PostgreSQL: {' '.join(str(exc).split())}") from None
    return server
