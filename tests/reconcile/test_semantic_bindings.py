"""The semantic check stays silent on every way Python lets a module bind a name: no false alarm on real code."""

from __future__ import annotations

from pathlib import Path

import pytest
from gitrepo import Sandbox, sandbox

from plait.reconcile.semantic import find_breakage

BINDINGS = {
    "a conditional definition": (
        "import sys\n\nif sys.platform == 'win32':\n    def name():\n        pass\nelse:\n    name = None\n"
    ),
    "a try import": "try:\n    from json import loads as name\nexcept ImportError:\n    name = None\n",
    "a tuple assignment": "first, name = 1, 2\n",
    "a for target": "for name in range(3):\n    pass\n",
    "a with target": "import contextlib\n\nwith contextlib.nullcontext(1) as name:\n    pass\n",
    "a walrus": "if (name := 3) > 2:\n    pass\n",
    "a dotted import": "import name.sub\n",
    "a re-export": "from stats import total as name\n",
    "a star import": "from stats import *\n",
    "a module __getattr__": "def __getattr__(attr):\n    return attr\n",
    "a globals() update": "globals().update(name=1)\n",
    "a locals() item at module level": "locals()['name'] = 1\n",
    "an exec in a loop": "for n in ['name']:\n    exec(n + ' = 1')\n",
    "the module object itself": "import sys\n\nfor n in ['name']:\n    setattr(sys.modules[__name__], n, 1)\n",
    "a global statement": "def setup():\n    global name\n    name = 1\n",
}


@pytest.fixture
def box(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Sandbox:
    return sandbox(tmp_path, monkeypatch)


@pytest.mark.parametrize("label", list(BINDINGS))
def test_a_new_import_of_a_name_bound_any_way_python_allows_is_not_reported(box: Sandbox, label: str) -> None:
    base = box.start({"stats.py": "def total(items):\n    return sum(items)\n\n\nname = 1\n", "main.py": "X = 1\n"})
    assert box.repo is not None
    combined = box.commit({"lib.py": BINDINGS[label], "user.py": "from lib import name\n\nprint(name)\n"}, parent=base)
    assert [str(b) for b in find_breakage(box.repo, base, combined)] == [], label


def test_a_name_bound_nowhere_is_still_reported(box: Sandbox) -> None:
    base = box.start({"main.py": "X = 1\n"})
    assert box.repo is not None
    combined = box.commit({"lib.py": "other = 1\n", "user.py": "from lib import name\n"}, parent=base)
    assert [str(b) for b in find_breakage(box.repo, base, combined)] == [
        "user.py:1: imports 'name' from lib, which does not define it"
    ]
