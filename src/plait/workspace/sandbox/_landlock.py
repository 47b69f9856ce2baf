"""Landlock through raw syscalls: a ruleset is built once in plait, then enforced in each command's child."""

from __future__ import annotations

import ctypes
import os
import stat
import sys
from collections.abc import Iterable
from pathlib import Path

__all__ = ["Ruleset", "abi", "restrict_self", "set_no_new_privs"]

_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446  # the same number on every architecture
_VERSION = 1
_PR_SET_NO_NEW_PRIVS = 38
_RULE_PATH_BENEATH, _RULE_NET_PORT = 1, 2

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR, MAKE_REG = 1 << 4, 1 << 5, 1 << 6, 1 << 7, 1 << 8
MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM, REFER, TRUNCATE = 1 << 9, 1 << 10, 1 << 11, 1 << 12, 1 << 13, 1 << 14
_NET_BIND_TCP, _NET_CONNECT_TCP = 1 << 0, 1 << 1
_SCOPE_ABSTRACT_UNIX, _SCOPE_SIGNAL = 1 << 0, 1 << 1
_FILE_ONLY = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE
_READ = EXECUTE | READ_FILE | READ_DIR

_libc = ctypes.CDLL(None, use_errno=True)  # the C library this process already has loaded
_syscall = _libc.syscall
_syscall.restype = ctypes.c_long
_prctl = _libc.prctl
_prctl.restype = ctypes.c_int


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("fs", ctypes.c_uint64), ("net", ctypes.c_uint64), ("scoped", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def abi() -> int:
    """The Landlock ABI version of this kernel, or 0 when Landlock is missing or disabled."""
    if sys.platform != "linux":
        return 0
    version = _syscall(_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_VERSION))
    return max(int(version), 0)


def _handled_fs(version: int) -> int:
    rights = (1 << 13) - 1
    if version >= 2:
        rights |= REFER
    if version >= 3:
        rights |= TRUNCATE
    return rights


def _fail(what: str) -> OSError:
    errno = ctypes.get_errno()
    return OSError(errno, f"landlock {what}: {os.strerror(errno)}")


def _ancestors(path: Path) -> set[Path]:
    return set(path.parents)


def _both(paths: Iterable[Path]) -> set[Path]:
    return {p.absolute() for p in paths} | {p.resolve() for p in paths}


def _readable(hidden: Iterable[Path], visible: Iterable[Path] = ()) -> tuple[list[Path], list[Path]]:
    """(readable, listable): paths covering the whole file system but `hidden`, plus the `visible` paths (which may
    lie inside hidden ones) but what is hidden inside those; and the directories above hidden paths.

    Only what exists now is granted below a directory that holds something hidden: what is created there later
    stays unreadable, which is why rulesets are built anew for each command. Listing is hierarchical in Landlock,
    so the names (not the contents) of hidden files stay visible.
    """
    hidden_set = _both(list(hidden))
    roots = [Path("/"), *sorted(_both(list(visible)) - hidden_set)]
    if not hidden_set:
        return roots[:1], []
    ancestors = set().union(*(_ancestors(p) for p in hidden_set))
    out: list[Path] = []
    for root in roots:
        if root not in ancestors:
            out.append(root)
            continue
        pending = [root]
        while pending:
            directory = pending.pop()
            try:
                entries = list(directory.iterdir())
            except OSError:
                continue
            for entry in entries:
                if entry in hidden_set or entry.is_symlink():
                    continue  # a symlink is granted nothing itself: its target's own rules apply when it is followed
                if entry in ancestors:
                    pending.append(entry)
                else:
                    out.append(entry)
    return out, sorted(ancestors)


class Ruleset:
    """A Landlock ruleset: read everything but `hidden` (save `visible` inside it), write only `writable`, and TCP
    only if `network`.

    The file descriptor stays open for the runner's life; each command's child enforces it with `restrict_self`.
    """

    def __init__(
        self,
        version: int,
        *,
        writable: Iterable[Path],
        hidden: Iterable[Path],
        network: bool,
        visible: Iterable[Path] = (),
    ) -> None:
        self.version = version
        handled = _handled_fs(version)
        attr = _RulesetAttr(fs=handled, net=0, scoped=0)
        size = 8
        if version >= 4 and not network:
            attr.net = _NET_BIND_TCP | _NET_CONNECT_TCP
            size = 16
        if version >= 6:
            attr.scoped = _SCOPE_SIGNAL | (0 if network else _SCOPE_ABSTRACT_UNIX)
            size = 24
        fd = _syscall(_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
        if fd < 0:
            raise _fail("create_ruleset")
        self.fd = int(fd)
        try:
            readable, listable = _readable(hidden, visible)
            for path in readable:
                self._allow(path, _READ & handled)
            for path in listable:
                self._allow(path, READ_DIR)
            for path in writable:
                self._allow(path, handled)
        except OSError:
            os.close(self.fd)
            raise

    def _allow(self, path: Path, rights: int) -> None:
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            return  # gone since it was listed, or unreadable: nothing to grant
        try:
            if not stat.S_ISDIR(os.fstat(fd).st_mode):
                rights &= _FILE_ONLY
            rule = _PathBeneath(allowed=rights, parent_fd=fd)
            if _syscall(_ADD_RULE, self.fd, _RULE_PATH_BENEATH, ctypes.byref(rule), ctypes.c_uint32(0)) < 0:
                raise _fail(f"add_rule {path}")
        finally:
            os.close(fd)

    def close(self) -> None:
        """Close the ruleset's file descriptor."""
        os.close(self.fd)


def set_no_new_privs() -> None:
    """Forbid gaining privileges through exec (setuid binaries, file capabilities); needed before restricting."""
    if _prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise _fail("no_new_privs")


def restrict_self(ruleset_fd: int) -> None:
    """Enforce the ruleset on this process and everything it will start (called in the child, before exec)."""
    set_no_new_privs()
    if _syscall(_RESTRICT_SELF, ruleset_fd, ctypes.c_uint32(0)) != 0:
        raise _fail("restrict_self")
