"""Reading many files of a commit in one `cat-file --batch`: what is not a file reads as None, and the files
after it still read as themselves."""

from __future__ import annotations

from pathlib import Path

import pytest
from gitrepo import Sandbox, sandbox

from plait.reconcile._gitio import read_blobs as read_ids
from plait.reconcile._trees import read_blobs
from plait.workspace import GitError


@pytest.fixture
def box(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Sandbox:
    return sandbox(tmp_path, monkeypatch)


def test_a_directory_or_a_missing_path_among_the_files_reads_as_none(box: Sandbox) -> None:
    head = box.start({"pkg/a.py": "a = 1\n", "b.txt": "b\n", "c.bin": "\xff\n"})

    found = read_blobs(box.repo, head, ["pkg", "b.txt", "gone.py", "pkg/a.py", "c.bin", "b.txt"])

    assert found == {"pkg": None, "b.txt": "b\n", "gone.py": None, "pkg/a.py": "a = 1\n", "c.bin": "\xff\n"}


def test_a_missing_object_id_is_an_error(box: Sandbox) -> None:
    box.start({"a.txt": "a\n"})
    with pytest.raises(GitError, match="is missing"):
        read_ids(box.repo, ["0" * 40])
