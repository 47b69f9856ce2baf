"""`plait bench reconcile --gate`: plait's merges go through the gate's parse and semantic stages too."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from gitrepo import Sandbox, git, sandbox

from plait.reconcile.bench import run_track_a, run_track_b, scratch_clone
from plait.reconcile.ladder import default_resolvers

UTIL = "def helper():\n    return 1\n"


@pytest.fixture
def box(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Sandbox:
    return sandbox(tmp_path, monkeypatch)


def _broken_clean_merge(box: Sandbox) -> str:
    """A merge git makes cleanly whose result imports a name the other side renamed."""
    main = box.start({"util.py": UTIL, "app.py": "import util\n"})
    left = box.commit({"util.py": UTIL.replace("helper", "assist")}, "rename", parent=main)
    right = box.commit({"app.py": "from util import helper\n\nhelper()\n"}, "use", parent=main)
    tree = git(box.root, "rev-parse", box.commit({"app.py": "from util import helper\n\nhelper()\n"}, parent=left))
    merge = git(box.root, "commit-tree", f"{tree}^{{tree}}", "-p", left, "-p", right, "-m", "merge")
    git(box.root, "update-ref", "refs/heads/main", merge)
    return merge


def test_track_a_with_the_gate_counts_a_refused_clean_merge(box: Sandbox) -> None:
    merge = _broken_clean_merge(box)
    with scratch_clone(box.root) as clone:
        plain = run_track_a(clone, name="toy", resolvers=default_resolvers())
        gated = run_track_a(clone, name="toy", resolvers=default_resolvers(), gated=True)
    assert [(c.commit, c.git, c.plait) for c in plain.cases] == [(merge, "clean_same", "same")]
    (case,) = gated.cases
    assert case.plait == "refused" and case.refused.startswith("semantic: app.py:1:")
    assert gated.summary()["clean_refused_by_gate"] == 1 and gated.regressions == [merge]


def test_track_b_with_the_gate_leaves_out_a_refused_branch(box: Sandbox) -> None:
    base = box.start({"util.py": UTIL, "app.py": "import util\n"})
    c1 = box.commit({"util.py": UTIL.replace("helper", "assist")}, "rename", parent=base)
    c2 = box.commit({"app.py": "from util import helper\n"}, "use", parent=c1)
    git(box.root, "update-ref", "refs/heads/main", c2)
    with scratch_clone(box.root) as clone:
        track = run_track_b(clone, name="toy", resolvers=default_resolvers(), k=2, windows=1, gated=True)
    (window,) = track.windows
    assert window.plait_integrated == 1 and len(window.plait_refused) == 1
    assert track.summary()["plait_refused_by_gate"] == 1


def test_the_command_takes_gate(box: Sandbox) -> None:
    _broken_clean_merge(box)
    argv = [sys.executable, "-m", "plait", "bench", "reconcile", "--repo", str(box.root), "--track", "a", "--gate"]
    done = subprocess.run([*argv, "--json"], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["track_a"]["refused_by_gate"] == 1
    table = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    assert "refused by the gate" in table.stdout
