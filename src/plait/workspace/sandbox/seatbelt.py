"""macOS: a `sandbox-exec` (Seatbelt) profile that confines a command as bubblewrap does on Linux."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from plait.workspace.sandbox._confinement import Confinement

__all__ = ["seatbelt_argv", "seatbelt_profile"]

_BASE = """(version 1)
(deny default)
(allow process-exec process-fork)
(allow signal (target same-sandbox))
(allow process-info* (target same-sandbox))
(allow sysctl-read)
(allow ipc-posix-sem ipc-posix-shm*)
(allow mach-lookup
  (global-name "com.apple.system.opendirectoryd.libinfo")
  (global-name "com.apple.system.notification_center")
  (global-name "com.apple.system.logger")
  (global-name "com.apple.trustd.agent"))
(allow pseudo-tty)
(allow file-ioctl (literal "/dev/null") (literal "/dev/tty") (regex #"^/dev/ttys[0-9]+$"))
(allow file-read*)
(allow file-write-data
  (literal "/dev/null") (literal "/dev/zero") (literal "/dev/tty") (literal "/dev/stdout") (literal "/dev/stderr"))
"""


def seatbelt_profile(c: Confinement, *, network: bool) -> tuple[str, dict[str, str]]:
    """(profile, parameters): paths go in as `-D NAME=PATH` parameters, so none is ever quoted into the text.

    Later rules win in Seatbelt: reads are allowed, then denied in the regions, allowed again on the visible paths
    inside them, and denied on hidden paths; writes are allowed only below the worktree, the private tmp and
    `writable`, then denied again on the worktree's `.git` link. Offline, no socket may be made at all.
    """
    params: dict[str, str] = {}
    lines = [_BASE]

    def param(prefix: str, path: Path) -> str:
        name = f"{prefix}{len([k for k in params if k.startswith(prefix)])}"
        params[name] = str(path.resolve())
        return f'(param "{name}")'

    for region in c.regions:
        lines.append(f"(deny file-read* (subpath {param('REGION_', region)}))")
    for shown in c.visible:
        lines.append(f"(allow file-read* (subpath {param('VISIBLE_', shown)}))")
    for hidden in c.hidden:
        lines.append(f"(deny file-read* (subpath {param('HIDDEN_', hidden)}))")
    roots = [c.worktree, c.tmp, *c.writable]
    writable = " ".join(f"(subpath {param('WRITABLE_', root)})" for root in roots)
    lines.append(f"(allow file-read* {writable})")
    lines.append(f"(allow file-write* {writable})")
    lines.append(f"(deny file-write* (literal {param('GITLINK_', c.worktree / '.git')}))")
    if network:
        lines.append("(allow network-outbound network-inbound network-bind system-socket)")
    return "\n".join(lines) + "\n", params


def seatbelt_argv(
    c: Confinement, argv: Sequence[str], *, network: bool, sandbox_exec: str = "sandbox-exec"
) -> list[str]:
    """The full argv that runs `argv` under `sandbox-exec` with the generated profile."""
    profile, params = seatbelt_profile(c, network=network)
    args = [sandbox_exec, "-p", profile]
    for name, value in params.items():
        args += ["-D", f"{name}={value}"]
    return [*args, *argv]
