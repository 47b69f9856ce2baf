"""Track B's static score reads a tree with the builtins of the Python its project declares."""

from __future__ import annotations

from pathlib import Path

import pytest
from gitrepo import Sandbox, sandbox

from plait.reconcile.bench import static_problems

USES = "def text(value):\n    return unicode(value) if isinstance(value, bytes) else value\n"
SETUP_2 = "setup(classifiers=['Programming Language :: Python :: 2.7', 'Programming Language :: Python :: 3'])\n"
SETUP_3 = "setup(classifiers=['Programming Language :: Python :: 3'])\n"


@pytest.fixture
def box(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Sandbox:
    return sandbox(tmp_path, monkeypatch)


def test_a_python2_builtin_is_known_where_the_project_declares_python2(box: Sandbox) -> None:
    both = box.start({"setup.py": SETUP_2, "compat.py": USES})
    only3 = box.commit({"setup.py": SETUP_3}, parent=both)
    assert box.repo is not None
    assert static_problems(box.repo, both, ["compat.py"]) == set()
    assert static_problems(box.repo, only3, ["compat.py"]) == {"compat.py: undefined name unicode"}
