"""A seccomp filter, as hand-built BPF, that refuses a command new sockets: of every kind, or of the kinds named.

Offline under Landlock no socket may be made at all (no IP, raw or netlink socket, and no Unix socket, which would
reach a host daemon's socket file: docker, an SSH agent, a database); offline under bubblewrap, whose network
namespace already holds only a loopback, only Unix sockets are refused. `socketpair` stays allowed: it reaches
nothing outside the command.
"""

from __future__ import annotations

import ctypes
import os
import sys
from collections.abc import Collection
from dataclasses import dataclass

__all__ = ["SocketFilter", "supported"]

_PR_SET_SECCOMP, _MODE_FILTER = 22, 2
_LD_W_ABS, _JEQ, _JGE, _RET = 0x20, 0x15, 0x35, 0x06
_ALLOW = 0x7FFF0000
_ERRNO_EPERM = 0x00050000 | 1
_X32_BIT = 0x40000000


@dataclass(frozen=True)
class _Arch:
    audit: int
    socket: int
    socketcall: int | None
    io_uring_setup: int = 425


_NATIVE = {
    "x86_64": (_Arch(0xC000003E, 41, None), _Arch(0x40000003, 359, 102)),
    "aarch64": (_Arch(0xC00000B7, 198, None), _Arch(0x40000028, 281, None)),
    "arm64": (_Arch(0xC00000B7, 198, None), _Arch(0x40000028, 281, None)),
}


class _Insn(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]


class _Prog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_Insn))]


def supported() -> bool:
    """Whether this machine's architecture has a filter here (Linux on x86-64 or ARM64, little-endian)."""
    return sys.platform == "linux" and sys.byteorder == "little" and os.uname().machine in _NATIVE


def _arch_block(arch: _Arch, *, x32: bool, denied: Collection[int] | None) -> list[tuple[object, ...]]:
    """Instructions judging one architecture's syscalls; they jump to the labels allow and deny.

    `denied` None refuses every socket; else only sockets of those domains.
    """
    tag = hex(arch.audit)
    block: list[tuple[object, ...]] = [("label", tag), ("ld", 0)]
    if x32:
        block.append(("jge", _X32_BIT, "deny", f"{tag}-nr"))
        block.append(("label", f"{tag}-nr"))
    if arch.socketcall is not None:
        block += [("jeq", arch.socketcall, "deny", f"{tag}-s"), ("label", f"{tag}-s")]
    block += [
        ("jeq", arch.socket, f"{tag}-domain", f"{tag}-u"),
        ("label", f"{tag}-u"),
        ("jeq", arch.io_uring_setup, "deny", "allow"),
        ("label", f"{tag}-domain"),
    ]
    if denied is None:
        block.append(("ret", _ERRNO_EPERM))
        return block
    block.append(("ld", 16))  # the low 32 bits of args[0], the socket's domain
    domains = sorted(denied)
    for i, domain in enumerate(domains):
        after = f"{tag}-d{i}" if i + 1 < len(domains) else "allow"
        block.append(("jeq", domain, "deny", after))
        if i + 1 < len(domains):
            block.append(("label", after))
    return block


def _assemble(program: list[tuple[object, ...]]) -> list[tuple[int, int, int, int]]:
    """BPF instructions with labels resolved to forward jump offsets."""
    labels: dict[object, int] = {}
    code = [step for step in program if step[0] != "label"]
    index = 0
    for step in program:
        if step[0] == "label":
            labels[step[1]] = index
        else:
            index += 1
    out: list[tuple[int, int, int, int]] = []
    for i, step in enumerate(code):
        op = step[0]
        if op == "ld":
            out.append((_LD_W_ABS, 0, 0, int(str(step[1]))))
        elif op == "ret":
            out.append((_RET, 0, 0, int(str(step[1]))))
        else:
            jt, jf = labels[step[2]] - i - 1, labels[step[3]] - i - 1
            out.append((_JEQ if op == "jeq" else _JGE, jt, jf, int(str(step[1]))))
    return out


class SocketFilter:
    """The filter, built in plait; `install` loads it in a command's child (no new privileges must be set), and
    `program` gives its bytes for bubblewrap's `--seccomp`."""

    def __init__(self, denied: Collection[int] | None = None) -> None:
        """`denied` None refuses every new socket; `{socket.AF_UNIX}` refuses Unix ones only."""
        if denied is not None and not denied:
            raise ValueError("a socket filter needs at least one domain to refuse")
        native, compat = _NATIVE[os.uname().machine]
        program: list[tuple[object, ...]] = [
            ("ld", 4),  # the architecture
            ("jeq", native.audit, hex(native.audit), "compat"),
            ("label", "compat"),
            ("jeq", compat.audit, hex(compat.audit), "deny"),
            *_arch_block(native, x32=native.audit == 0xC000003E, denied=denied),
            *_arch_block(compat, x32=False, denied=denied),
            ("label", "allow"),
            ("ret", _ALLOW),
            ("label", "deny"),
            ("ret", _ERRNO_EPERM),
        ]
        code = _assemble(program)
        self._insns = (_Insn * len(code))(*(_Insn(c, jt, jf, k) for c, jt, jf, k in code))
        self._prog = _Prog(len(code), self._insns)
        self._prctl = ctypes.CDLL(None, use_errno=True).prctl

    def __len__(self) -> int:
        return len(self._insns)

    def program(self) -> bytes:
        """The filter as raw `struct sock_filter` instructions, as `bwrap --seccomp FD` reads them."""
        return bytes(self._insns)

    def install(self) -> None:
        """Load the filter into this process (a child about to exec); it is inherited and cannot be removed."""
        if self._prctl(_PR_SET_SECCOMP, _MODE_FILTER, ctypes.byref(self._prog), 0, 0) != 0:
            errno = ctypes.get_errno()
            raise OSError(errno, f"seccomp: {os.strerror(errno)}")
