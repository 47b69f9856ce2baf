"""Bundles against real git: an attempt's commits out of one repository, into a clone of its base, and no refs left."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from plait.errors import EnvironmentProblem, PlaitError, StateError
from plait.workspace.bundles import REF_PREFIX, bundle, clone_from_bundle, unbundle


@pytest.fixture(autouse=True)
def plain_git(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """A HOME whose git configuration is known: no identity, `main` as the first branch."""
    home = tmp_path_factory.mktemp("home")
    config = home / "gitconfig"
    config.write_text("[user]\n\tuseConfigOnly = true\n[init]\n\tdefaultBranch = main\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path_factory.getbasetemp()))
    monkeypatch.delenv("GIT_DIR", raising=False)


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=Test", "-c", "user.email=test@example.com", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


def commit(root: Path, name: str, text: str) -> str:
    (root / name).write_text(text)
    git(root, "add", name)
    git(root, "commit", "-qm", f"write {name}")
    return git(root, "rev-parse", "HEAD")


def refs(root: Path) -> str:
    return git(root, "for-each-ref", "--format=%(refname) %(objectname)")


def seen(root: Path) -> tuple[str, str, str, str]:
    """What a user sees of a repository: its refs, HEAD, branch and work tree status."""
    return refs(root), git(root, "rev-parse", "HEAD"), git(root, "symbolic-ref", "-q", "HEAD"), git(root, "status")


@pytest.fixture
def origin(tmp_path: Path) -> Path:
    root = tmp_path / "origin"
    root.mkdir()
    git(root, "init", "-q")
    commit(root, "README.md", "hello\n")
    return root


@pytest.fixture
def clone(origin: Path, tmp_path: Path) -> Path:
    """A clone of the base, as a machine that has the base but not the attempt's commits."""
    git(tmp_path, "clone", "-q", str(origin), "clone")
    return tmp_path / "clone"


def attempt(origin: Path, count: int) -> tuple[str, list[str]]:
    """`count` commits on branch `attempt` from main; the base and the commits, oldest first."""
    base = git(origin, "rev-parse", "main")
    git(origin, "switch", "-qc", "attempt")
    made = [commit(origin, f"file{i}.txt", f"{i}\n") for i in range(count)]
    git(origin, "switch", "-q", "main")
    return base, made


def test_an_attempts_commits_move_into_a_clone_of_its_base(origin: Path, clone: Path) -> None:
    base, made = attempt(origin, 2)
    before_origin, before_clone = refs(origin), seen(clone)

    data = bundle(origin, made[-1], since=[base])
    sha = unbundle(clone, data)

    assert sha == made[-1]
    assert git(clone, "log", "--format=%H", f"{base}..{sha}").split() == made[::-1]
    assert git(clone, "show", f"{sha}:file1.txt") == "1"
    assert refs(origin) == before_origin  # the temporary ref is gone
    assert seen(clone) == before_clone  # no branch, HEAD, work tree or ref changed
    assert REF_PREFIX not in refs(origin) + refs(clone)


def test_a_bundle_since_the_base_carries_only_the_attempts_commits(origin: Path, tmp_path: Path) -> None:
    base, made = attempt(origin, 1)
    path = tmp_path / "x.bundle"
    path.write_bytes(bundle(origin, made[0], since=[base]))
    assert git(origin, "bundle", "list-heads", str(path)).split()[0] == made[0]
    needs = git(origin, "bundle", "verify", str(path))
    assert base in needs
    empty = tmp_path / "empty"
    empty.mkdir()
    git(empty, "init", "-q")
    with pytest.raises(StateError, match=rf"needs commits this repository lacks \({base}\)"):
        unbundle(empty, path.read_bytes())


def test_a_dependent_chain_of_bundles_applies_in_order(origin: Path, clone: Path) -> None:
    base, made = attempt(origin, 3)
    first = bundle(origin, made[0], since=[base])
    second = bundle(origin, made[2], since=[made[0]])
    with pytest.raises(StateError, match="needs commits this repository lacks"):
        unbundle(clone, second)
    assert unbundle(clone, first) == made[0]
    assert unbundle(clone, second) == made[2]
    assert git(clone, "rev-list", "--count", f"{base}..{made[2]}") == "3"
    assert REF_PREFIX not in refs(clone)


@pytest.mark.parametrize("since", ["tip", "descendant"])
def test_a_bundle_of_a_commit_the_receiver_has_is_taken_in(origin: Path, clone: Path, since: str) -> None:
    base, made = attempt(origin, 1)
    unbundle(clone, bundle(origin, made[0], since=[base]))
    before = seen(clone)

    data = bundle(origin, base if since == "descendant" else made[0], since=[made[0]])

    assert unbundle(clone, data) == (base if since == "descendant" else made[0])
    assert seen(clone) == before
    assert REF_PREFIX not in refs(origin)


def test_a_full_bundle_makes_a_new_repository_with_no_remote(origin: Path, tmp_path: Path) -> None:
    _, made = attempt(origin, 2)
    dest = clone_from_bundle(tmp_path / "worker" / "repo", bundle(origin, made[-1]))

    assert git(dest, "rev-parse", "HEAD") == made[-1]
    assert (dest / "file1.txt").read_text() == "1\n"
    assert git(dest, "remote") == ""
    assert git(dest, "status", "--porcelain") == ""
    assert refs(dest) == ""  # HEAD is detached at the commit; no ref, temporary or not, remains
    assert REF_PREFIX not in refs(origin)


def test_clone_refuses_a_directory_in_use_and_leaves_nothing_on_a_bad_bundle(origin: Path, tmp_path: Path) -> None:
    with pytest.raises(EnvironmentProblem, match="is not an empty directory"):
        clone_from_bundle(origin, bundle(origin, "HEAD"))
    base, made = attempt(origin, 1)
    with pytest.raises(StateError, match="needs commits this repository lacks"):
        clone_from_bundle(tmp_path / "new", bundle(origin, made[0], since=[base]))
    assert not (tmp_path / "new").exists()
    (tmp_path / "kept").mkdir()
    with pytest.raises(StateError):
        clone_from_bundle(tmp_path / "kept", b"junk")
    assert list((tmp_path / "kept").iterdir()) == []


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"not a bundle at all\n",
        b"# v2 git bundle\nzzz\n\n",
        b"# v2 git bundle\n" + b"1" * 40 + b" refs/heads/x\n\nPACK\x00\x00\x00\x02\x00\x00\x00\x05garbage",
    ],
)
def test_corrupt_bytes_are_one_clear_plait_error(clone: Path, data: bytes) -> None:
    before = seen(clone)
    with pytest.raises(PlaitError, match=r"^the bundle cannot be taken in: ") as err:
        unbundle(clone, data)
    assert "\n" not in str(err.value)
    assert "in.bundle" not in str(err.value)
    assert seen(clone) == before


def test_a_truncated_bundle_is_refused(origin: Path, clone: Path) -> None:
    base, made = attempt(origin, 2)
    data = bundle(origin, made[-1], since=[base])
    with pytest.raises(StateError, match="^the bundle cannot be taken in: "):
        unbundle(clone, data[:-30])
    assert subprocess.run(["git", "cat-file", "-e", made[-1]], cwd=clone, check=False).returncode != 0
    assert REF_PREFIX not in refs(clone)


def test_a_name_that_is_not_a_commit_is_a_git_error(origin: Path) -> None:
    with pytest.raises(PlaitError, match="'no-such' is not a commit of the repository"):
        bundle(origin, "no-such")
    with pytest.raises(PlaitError, match="is not a commit"):
        bundle(origin, "HEAD", since=["0" * 40])
    assert refs(origin) == f"refs/heads/main {git(origin, 'rev-parse', 'HEAD')}"
