"""git plumbing that moves raw bytes: blobs, trees and paths that need not be UTF-8."""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from plait.workspace import GitError, Repo
from plait.workspace.gitcall import first_line, run_bytes

__all__ = ["decode", "encode", "git_bytes", "hash_blob", "object_ids", "read_blobs", "read_objects"]


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
    """Run git (`plait.workspace.gitcall.run_bytes`) on bytes in `cwd` or the repository; return the status and
    stdout, raising outside `ok`."""
    done = run_bytes(args, cwd or (repo.root if repo else Path.cwd()), env, input)
    if done.returncode not in set(ok):
        raise GitError(shlex.join(args[:3]), first_line(decode(done.stderr), f"exit status {done.returncode}"))
    return done.returncode, done.stdout


def read_objects(repo: Repo, specs: Sequence[str]) -> list[tuple[str, bytes, bytes] | None]:
    """(id, type, contents) of each object named (an id, or `commit:path`) in one `cat-file --batch` call; None
    for one that does not exist."""
    if not specs:
        return []
    _, out = git_bytes(repo, "cat-file", "--batch", input="".join(f"{spec}\n" for spec in specs).encode())
    found: list[tuple[str, bytes, bytes] | None] = []
    pos = 0
    for _ in specs:
        end = out.index(b"\n", pos)
        header = out[pos:end].split()
        pos = end + 1
        if len(header) != 3 or header[1] == b"missing":
            found.append(None)
            continue
        size = int(header[2])
        found.append((header[0].decode(), header[1], out[pos : pos + size]))
        pos += size + 1
    return found


def object_ids(repo: Repo, specs: Sequence[str]) -> list[str | None]:
    """The id of each object named (`ref^{commit}`, `commit:path`...) in one `cat-file --batch-check` call; None for
    one that does not exist."""
    if not specs:
        return []
    request = "".join(f"{spec}\n" for spec in specs).encode()
    _, out = git_bytes(repo, "cat-file", "--batch-check=%(objectname)", input=request)
    return [None if line.endswith(b" missing") or b" " in line else line.decode() for line in out.splitlines()]


def read_blobs(repo: Repo, oids: Iterable[str]) -> dict[str, bytes]:
    """The contents of many blobs in one `cat-file --batch` call."""
    wanted = list(dict.fromkeys(oids))
    found: dict[str, bytes] = {}
    for oid, read in zip(wanted, read_objects(repo, wanted), strict=True):
        if read is None:
            raise GitError("cat-file --batch", f"object {oid} is missing")
        found[oid] = read[2]
    return found


def hash_blob(repo: Repo, data: bytes) -> str:
    """Write `data` as a blob into the repository's object store; return its id."""
    _, out = git_bytes(repo, "hash-object", "-w", "--no-filters", "--stdin", input=data)
    return out.decode().strip()
