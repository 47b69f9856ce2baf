"""Commits moved between machines as git bundles: an attempt's commits out of one repository and into another.

`bundle` packs a commit and its history less what the receiver already has; `unbundle` takes such a bundle into
a repository without touching its branches, HEAD or work tree; `clone_from_bundle` makes a new repository from a
bundle that carries a whole history (a worker machine with no checkout).

git names what a bundle carries by refs, so each of these holds its commit under a ref of its own,
`refs/plait/bundle/<random>`, for as long as git needs it, and deletes it afterwards, on error too. A commit
taken in by `unbundle` is then held by no ref: the caller gives it one (a branch, a worktree) before git's
garbage collection would prune it (two weeks, by default).

A bundle whose commit the receiver has already (its `since` holds it) carries no objects. git refuses to write
such a bundle, so `bundle` writes it itself: a header naming the commit, as both what the bundle holds and what
it needs, and an empty pack. git reads it as any other bundle.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import secrets
import shutil
import struct
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

from plait.errors import EnvironmentProblem, StateError
from plait.workspace.gitcall import GitError, first_line, run

__all__ = ["REF_PREFIX", "bundle", "clone_from_bundle", "unbundle"]

REF_PREFIX = "refs/plait/bundle/"
"""Where the short-lived refs of bundles being written or read live."""

_OID = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")
_HASHES = {"sha1": hashlib.sha1, "sha256": hashlib.sha256}


def _git(cwd: Path, *args: str) -> str:
    done = run(args, cwd)
    if done.returncode != 0:
        raise GitError(" ".join(args[:2]), first_line(done.stderr, f"exit status {done.returncode}"))
    return done.stdout


def _commit(repo_root: Path, name: str) -> str:
    done = run(("rev-parse", "--verify", "--quiet", "--end-of-options", f"{name}^{{commit}}"), repo_root)
    if done.returncode != 0:
        raise GitError("bundle", f"{name!r} is not a commit of the repository at {repo_root}")
    return done.stdout.strip()


@contextlib.contextmanager
def _temporary_ref(repo_root: Path, sha: str | None = None) -> Iterator[str]:
    """A new ref under `REF_PREFIX` (at `sha`, when given), deleted when the block ends however it ends."""
    ref = REF_PREFIX + secrets.token_hex(8)
    try:
        if sha is not None:
            _git(repo_root, "update-ref", ref, sha, "")
        yield ref
    finally:
        run(("update-ref", "-d", ref), repo_root)


def bundle(repo_root: Path, tip: str, *, since: Sequence[str] = ()) -> bytes:
    """A git bundle of commit `tip` and its history, less what is reachable from any commit of `since`.

    Args:
        repo_root: the repository that has `tip` and every commit of `since`.
        tip: the commit the bundle carries (a sha, or any name git resolves to a commit).
        since: commits the receiver has; the bundle needs them and leaves out their history.

    Returns:
        The bundle's bytes. When `tip` is in the history of `since`, a bundle that carries no objects yet still
        names `tip`, which `unbundle` takes into any repository that has it.

    Raises:
        GitError: a name is not a commit of the repository, or git could not write the bundle.
    """
    tip_sha = _commit(repo_root, tip)
    bases = [_commit(repo_root, s) for s in since]
    if any(run(("merge-base", "--is-ancestor", tip_sha, b), repo_root).returncode == 0 for b in bases):
        return _empty_bundle(repo_root, tip_sha)
    with tempfile.TemporaryDirectory(prefix="plait-bundle-") as tmp, _temporary_ref(repo_root, tip_sha) as ref:
        path = Path(tmp) / "out.bundle"
        _git(repo_root, "bundle", "create", "--quiet", str(path), ref, *(f"^{b}" for b in bases))
        return path.read_bytes()


def _empty_bundle(repo_root: Path, tip_sha: str) -> bytes:
    """A bundle that needs `tip_sha`, names it, and carries an empty pack."""
    fmt = _git(repo_root, "rev-parse", "--show-object-format").strip() or "sha1"
    if fmt not in _HASHES:
        raise GitError("bundle", f"the repository at {repo_root} uses object format {fmt}, which plait cannot bundle")
    header = "# v2 git bundle\n" if fmt == "sha1" else f"# v3 git bundle\n@object-format={fmt}\n"
    header += f"-{tip_sha} \n{tip_sha} {REF_PREFIX}{secrets.token_hex(8)}\n\n"
    pack = b"PACK" + struct.pack(">II", 2, 0)
    return header.encode() + pack + _HASHES[fmt](pack).digest()


def _refused(why: str) -> StateError:
    return StateError(f"the bundle cannot be taken in: {why}")


def unbundle(repo_root: Path, data: bytes) -> str:
    """Take the commits of bundle `data` into the repository at `repo_root`, and return the commit it names.

    The bundle is checked (`git bundle verify`) and fetched with git's connectivity check; no branch, HEAD or
    file of the work tree changes. The commit is held by no ref afterwards: give it one before long.

    Raises:
        StateError: the bytes are not a bundle, the bundle needs commits the repository lacks, it names more or
            fewer than one commit, or its objects are damaged.
    """
    with tempfile.TemporaryDirectory(prefix="plait-bundle-") as tmp:
        path = Path(tmp) / "in.bundle"
        path.write_bytes(data)
        checked = run(("bundle", "verify", str(path)), repo_root)
        if checked.returncode != 0:
            raise _refused(_complaint(checked.stderr, path))
        listed = run(("bundle", "list-heads", str(path)), repo_root)
        heads = {line.split(" ", 1)[0] for line in listed.stdout.splitlines() if line.strip()}
        if listed.returncode != 0 or len(heads) != 1 or not _OID.fullmatch(next(iter(heads))):
            raise _refused(f"it names {len(heads)} commits, and a bundle plait takes names one")
        sha = heads.pop()
        with _temporary_ref(repo_root) as ref:
            fetched = run(
                ("fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--no-auto-gc", "--no-recurse-submodules")
                + (str(path), f"{sha}:{ref}"),
                repo_root,
            )
            if fetched.returncode != 0:
                raise _refused(_complaint(fetched.stderr, path))
            if _git(repo_root, "rev-parse", "--verify", ref).strip() != sha:
                raise _refused(f"git took in another commit than the {sha} it names")
    return sha


def _complaint(stderr: str, path: Path) -> str:
    """git's complaint about a bundle as one line, without the temporary file's name."""
    lines = [line.strip() for line in stderr.replace(str(path), "the bundle").splitlines() if line.strip()]
    if any("lacks these prerequisite commits" in line for line in lines):
        missing = [m.group() for line in lines if (m := _OID.search(line))]
        return f"it needs commits this repository lacks ({', '.join(missing)}); take in their bundle first"
    return lines[0].removeprefix("error: ").removeprefix("fatal: ") if lines else "git refused it"


def clone_from_bundle(dest: Path, data: bytes) -> Path:
    """A new repository at `dest` holding the history of bundle `data`, its HEAD detached at the bundle's commit.

    `dest` must be missing or empty. The bundle must carry a whole history (a `bundle` with no `since`). The new
    repository has no remote: nothing in it points back at the machine the bundle came from.

    Raises:
        EnvironmentProblem: `dest` is not an empty directory.
        StateError: `data` is not such a bundle (nothing is left at `dest`).
    """
    dest = Path(dest)
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise EnvironmentProblem(f"{dest} is not an empty directory: choose a new place for the repository")
    made = not dest.exists()
    dest.mkdir(parents=True, exist_ok=True)
    try:
        _git(dest, "init", "--quiet")
        sha = unbundle(dest, data)
        _git(dest, "checkout", "--quiet", "--detach", sha)
    except BaseException:
        if made:
            shutil.rmtree(dest, ignore_errors=True)
        else:
            for child in dest.iterdir():
                if child.is_dir() and not child.is_symlink():
                    shutil.rmtree(child)
                else:
                    child.unlink()
        raise
    return dest
