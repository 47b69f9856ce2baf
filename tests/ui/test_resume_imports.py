"""The run and resume commands import what a run needs before its first model call, and leave for later what only
the end of a run (its report), a review (the plan's rendering) or a detached start needs."""

from __future__ import annotations

import json
import subprocess
import sys

LATER = ("plait.plan.render", "plait.cli._detach", "plait.ui._run_report", "plait.ui.runview", "rich.table")

_PROBE = """
import json, sys
from plait.cli._app import load_command
load_command("resume")
print(json.dumps(sorted(sys.modules)))
"""


def test_the_run_command_leaves_the_end_of_a_run_for_later() -> None:
    proc = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=120, check=True)
    modules = set(json.loads(proc.stdout.strip().splitlines()[-1]))
    assert "plait.cli.cmd_run" in modules
    assert sorted(m for m in LATER if m in modules) == []
