"""Real git repositories for the planner and the repository map to look at."""

from __future__ import annotations

from pathlib import Path

import pytest
from plan_helpers import make_repo


@pytest.fixture(autouse=True)
def git_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home" / ".config"))
    for key, value in {
        "GIT_AUTHOR_NAME": "Test",
        "GIT_AUTHOR_EMAIL": "test@example.invalid",
        "GIT_COMMITTER_NAME": "Test",
        "GIT_COMMITTER_EMAIL": "test@example.invalid",
    }.items():
        monkeypatch.setenv(key, value)


CALC = {
    "calc.py": "def add(a: int, b: int) -> int:\n    return a - b\n\n\ndef _helper():\n    pass\n",
    "test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
    "README.md": "# calc\n",
}


@pytest.fixture
def calc_repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "calc", CALC)
