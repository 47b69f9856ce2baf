from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from plait.errors import StateError
from plait.events import SQLiteEventStore
from plait.events.lease import Lease


def test_a_second_driver_is_refused_while_the_first_lives(tmp_path: Path) -> None:
    db = tmp_path / "events.db"
    SQLiteEventStore(db).close()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\nfrom plait.events.lease import Lease\n"
            "Lease(sys.argv[1], 'r1').acquire(); print('held', flush=True); time.sleep(60)",
            str(db),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        second = Lease(db, "r1")
        with pytest.raises(StateError, match=rf"run r1 is driven by pid {holder.pid} on"):
            second.acquire()
        other = Lease(db, "other-run")
        assert other.acquire() == ""  # other runs are free
        other.release()
    finally:
        holder.kill()
        holder.wait()
        holder.stdout.close() if holder.stdout else None
    # its holder is dead: the lease is taken over, and says so
    note = second.acquire()
    assert f"from pid {holder.pid}" in note
    second.release()


def test_a_stale_heartbeat_from_another_host_is_taken_over(tmp_path: Path) -> None:
    import sqlite3

    db = tmp_path / "events.db"
    lease = Lease(db, "r1", stale_after=30)
    con = sqlite3.connect(db)
    con.execute("INSERT INTO leases VALUES ('r1', 'pid 1 on elsewhere', 1, 'elsewhere', 0, 0)")
    con.commit()
    assert "elsewhere" in lease.acquire()
    lease.release()
