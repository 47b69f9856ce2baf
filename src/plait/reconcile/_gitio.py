"""git plumbing that moves raw bytes: blobs, trees and paths that need not be UTF-8."""

from __future__ import annotations

import shlex
import subprocess
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from plait.errors import EnvironmentProblem
from plait.workspace import GitError, Repo
from plait.workspace._gitcall import argv, environment

__all__ = ["decode", "encode", "git_bytes", "hash_blob", "read_blobs"]

_SPAWN_TRIES = 6


def decode(data: bytes) -> str:
    """Text of a blob or path; bytes that are not UTF-8 survive the round trip through `encode`."""
    return data.decode("utf-8", "surrogateescape")


def encode(text: str) -> bytes:
    """The bytes `decode` came from."""
    return text.encode("utf-8", "surrogateescape")


def git_bytes(
    repo: Repo | None,
    *args: str,
    input: bytes | None = None,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    ok: Iterable[int] = (0,),
) -> tuple[int, bytes]:
    """Run git (safely: see `plait.workspace._gitcall`) on bytes in `cwd` or the repository; return the status and
    stdout, raising outside `ok`."""
    try:
        done = _spawn(argv(args), cwd or (repo.root if repo else Path.cwd()), environment(env), input)
    except FileNotFoundError as exc:
        raise EnvironmentProblem("git is not installed or not on PATH: install git and try again") from exc
    except OSError as exc:
        raise GitError(shlex.join(args), str(exc)) from exc
    if done.returncode not in set(ok):
        first = next((line.strip() for line in decode(done.stderr).splitlines() if line.strip()), "")
        raise GitError(shlex.join(args[:3]), first or f"exit status {done.returncode}")
    return done.returncode, done.stdout


def _spawn(argv: list[str], cwd: Path, env: dict[str, str], input: bytes | None) -> subprocess.CompletedProcess[bytes]:
    """Run a process; a fork refused for lack of resources (EAGAIN) is transient, so it is tried again."""
    for attempt in range(_SPAWN_TRIES):
        try:
            return subprocess.run(argv, cwd=cwd, env=env, input=input, capture_output=True, check=False)
        except BlockingIOError:
            if attempt == _SPAWN_TRIES - 1:
                raise
            time.sleep(0.05 * 2**attempt)
    raise AssertionError("unreachable")


def read_objects(repo: Repo, specs: Sequence[str]) -> list[tuple[bytes, bytes] | None]:
    """(type, contents) of each object named (an id, or `commit:path`) in one `cat-file --batch` call; None for
    one that does not exist."""
    if not specs:
        return []
    _, out = git_bytes(repo, "cat-file", "--batch", input="".join(f"{spec}\n" for spec in specs).encode())
    found: list[tuple[bytes, bytes] | None] = []
    pos = 0
    for _ in specs:
        end = out.index(b"\n", pos)
        header = out[pos:end].split()
        pos = end + 1
        if len(header) != 3 or header[1] == b"missing":
            found.append(None)
            continue
        size = int(header[2])
        found.append((header[1], out[pos : pos + size]))
        pos += size + 1
    return found


def read_blobs(repo: Repo, oids: Iterable[str]) -> dict[str, bytes]:
    """The contents of many blobs in one `cat-file --batch` call."""
    wanted = list(dict.fromkeys(oids))
    found: dict[str, bytes] = {}
    for oid, read in zip(wanted, read_objects(repo, wanted), strict=True):
        if read is None:
            raise GitError("cat-file --batch", f"object {oid} is missing")
        found[oid] = read[1]
    return found


def hash_blob(repo: Repo, data: bytes) -> str:
    """Write `data` as a blob into the repository's object store; return its id."""
    _, out = git_bytes(repo, "hash-object", "-w", "--no-filters", "--stdin", input=data)
    return out.decode().strip()
