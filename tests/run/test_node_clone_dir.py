"""The directory where a Ray node keeps a run's clone must be this user's own: no one else may plant it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from plait.errors import StateError
from plait.run.backends._remote import _own_dir


def test_a_new_directory_is_made_private(tmp_path: Path) -> None:
    made = _own_dir(tmp_path / "nodes")
    assert made.is_dir() and made.stat().st_mode & 0o777 == 0o700


def test_a_link_planted_where_the_directory_goes_is_refused(tmp_path: Path) -> None:
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (tmp_path / "nodes").symlink_to(theirs)
    with pytest.raises(StateError, match="not this user's own directory"):
        _own_dir(tmp_path / "nodes")


def test_a_directory_others_may_write_to_is_refused(tmp_path: Path) -> None:
    shared = tmp_path / "nodes"
    shared.mkdir()
    shared.chmod(0o777)
    with pytest.raises(StateError, match="not this user's own directory"):
        _own_dir(shared)


@pytest.mark.skipif(os.getuid() != 0, reason="only root can make a directory another user's")
def test_a_directory_of_another_user_is_refused(tmp_path: Path) -> None:
    theirs = tmp_path / "nodes"
    theirs.mkdir(mode=0o700)
    os.chown(theirs, 65534, -1)
    with pytest.raises(StateError, match="not this user's own directory"):
        _own_dir(theirs)
