"""Which OS sandbox layers work on this machine, found by trying each, and a one-line report of the choice."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Hashable
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, PrivateAttr

from plait.errors import EnvironmentProblem
from plait.sandbox_settings import Limits
from plait.workspace.sandbox import _landlock, _seccomp
from plait.workspace.sandbox._procs import cgroup_parent

__all__ = ["LayerName", "Probe", "probe"]

LayerName = Literal["bwrap", "landlock", "seatbelt", "none"]
_ORDER: tuple[LayerName, ...] = ("bwrap", "landlock", "seatbelt")
T = TypeVar("T")


class Probe(BaseModel):
    """What this machine offers to confine commands; each `*_problem` says why a layer is missing."""

    model_config = ConfigDict(frozen=True)

    platform: str
    root: bool
    bwrap: str = ""
    bwrap_problem: str = ""
    landlock_abi: int = 0
    landlock_problem: str = ""
    seccomp: bool = False
    seccomp_problem: str = ""
    seatbelt: str = ""
    seatbelt_problem: str = ""
    cgroup: str = ""
    """A directory where plait can make pids cgroups, bounding a command's processes even for root."""
    cgroup_problem: str = ""
    memory_cgroup: str = ""
    """A directory where plait can make memory cgroups, bounding all of an agent's processes together."""
    memory_cgroup_problem: str = ""
    _found: dict[Hashable, Any] = PrivateAttr(default_factory=dict)

    def once(self, key: Hashable, find: Callable[[], T]) -> T:
        """`find()`, called for the first `key` only: what every agent's runner needs alike (the regions the
        machine hides, what it shows again) is looked up once per probe, that is once per run."""
        if key not in self._found:
            self._found[key] = find()
        found: T = self._found[key]
        return found

    def usable(self) -> list[LayerName]:
        """The layers that work here, strongest first; "none" (limits only) always comes last."""
        found = {"bwrap": bool(self.bwrap), "landlock": self.landlock_abi > 0, "seatbelt": bool(self.seatbelt)}
        return [name for name in _ORDER if found[name]] + ["none"]

    def problem(self, layer: str) -> str:
        """Why `layer` cannot run here ("" when it can)."""
        return {
            "bwrap": self.bwrap_problem,
            "landlock": self.landlock_problem,
            "seatbelt": self.seatbelt_problem,
        }.get(layer, "")

    def choose(self, wanted: str) -> LayerName:
        """The layer to use for the setting `wanted` (auto picks the strongest); a named one must work here."""
        usable = self.usable()
        if wanted == "auto":
            return usable[0]
        if wanted not in usable:
            raise EnvironmentProblem(
                f"the sandbox layer {wanted} cannot run here ({self.problem(wanted)}); "
                'set sandbox.layer = "auto" to use the strongest that works (`plait sandbox` lists them)'
            )
        return wanted

    def describe(self, layer: str) -> str:
        """What `layer` enforces, in a phrase."""
        hidden = "homes, your checkout, plait's log and other agents hidden"
        if layer == "bwrap":
            sockets = "no Unix sockets (seccomp)" if self.seccomp else "daemons' sockets hidden"
            return (
                f"bubblewrap: read-only system, {hidden}, writable worktree, private /tmp and home, own network "
                f"and pid namespaces, {sockets}"
            )
        if layer == "landlock":
            net = "no sockets at all (seccomp)" if self.seccomp else "TCP denied, UDP and Unix sockets NOT contained"
            if not self.seccomp and self.landlock_abi < 4:
                net = "network NOT contained (no seccomp here, Landlock ABI < 4)"
            return f"Landlock ABI {self.landlock_abi}: {hidden}, writes only in the worktree and a private tmp, {net}"
        if layer == "seatbelt":
            return "sandbox-exec: writes only in the worktree and a private tmp, no network"
        return "NO OS sandbox: commands can write anywhere this user can and reach the network"

    def report(self, layer: str, limits: Limits | None = None, *, allow_unsandboxed: bool = False) -> str:
        """One line for the user: the layer in force, what it enforces, the limits, and what is missing."""
        limits = limits or Limits()
        procs = "pids cgroup" if self.cgroup and limits.cgroup else "watchdog" if self.root else "RLIMIT_NPROC+watchdog"
        memory = "for all of an agent's processes"
        if not (self.memory_cgroup and limits.cgroup):
            why = self.memory_cgroup_problem if limits.cgroup else "sandbox.limits.cgroup is off"
            memory = f"per process (no memory cgroup: {why or 'none found'})"
        line = (
            f"sandbox: {self.describe(layer)}; limits: {limits.cpu_seconds}s CPU, {limits.memory_mb} MB memory "
            f"{memory}, {limits.disk_mb} MB added to the worktree and tmp, {limits.file_size_mb} MB files, "
            f"{limits.open_files} open files, {limits.processes} processes ({procs})"
        )
        if layer == "none":
            missing = "; ".join(f"{n}: {self.problem(n)}" for n in _ORDER if self.problem(n))
            then = (
                "commands run anyway (sandbox.allow_unsandboxed is set)"
                if allow_unsandboxed
                else "unattended commands are refused; set sandbox.allow_unsandboxed = true to run them anyway"
            )
            line += f" [{missing}] {then}"
        return line


def _try_bwrap(root: bool) -> tuple[str, str]:
    path = shutil.which("bwrap")
    if path is None:
        return "", "bwrap is not installed (apt-get install bubblewrap, dnf install bubblewrap)"
    argv = [path, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-all"]
    argv += ["--die-with-parent", "--new-session", *(["--cap-drop", "ALL"] if root else []), "--", "true"]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=20, check=False, cwd=tempfile.gettempdir())
    except (OSError, subprocess.TimeoutExpired) as exc:
        return "", f"bwrap failed to start: {exc}"
    if done.returncode != 0:
        first = next((line for line in done.stderr.splitlines() if line.strip()), f"exit status {done.returncode}")
        hint = " (user namespaces are blocked here)" if "uid map" in first or "namespace" in first else ""
        return "", f"bwrap cannot sandbox here: {first.strip()}{hint}"
    return path, ""


def _try_seccomp() -> tuple[bool, str]:
    if not _seccomp.supported():
        return False, f"no socket filter for {sys.platform}/{os.uname().machine}"
    try:
        with open("/proc/self/status") as fh:  # noqa: PTH123
            if "Seccomp:" not in fh.read():
                return False, "the kernel has no seccomp filters"
    except OSError as exc:
        return False, f"cannot read /proc/self/status: {exc.strerror}"
    return True, ""


def probe() -> Probe:
    """Try every layer now (about 10 ms, most of it starting bubblewrap once)."""
    root = hasattr(os, "geteuid") and os.geteuid() == 0
    if sys.platform == "darwin":
        exe = shutil.which("sandbox-exec") or ""
        return Probe(
            platform="darwin",
            root=root,
            bwrap_problem="Linux only",
            landlock_problem="Linux only",
            seccomp_problem="Linux only",
            seatbelt=exe,
            seatbelt_problem="" if exe else "sandbox-exec is not on PATH",
            cgroup_problem="Linux only",
            memory_cgroup_problem="Linux only",
        )
    if sys.platform != "linux":
        no = f"not available on {sys.platform}"
        return Probe(platform=sys.platform, root=root, bwrap_problem=no, landlock_problem=no, seatbelt_problem=no)
    bwrap, bwrap_problem = _try_bwrap(root)
    version = _landlock.abi()
    seccomp, seccomp_problem = _try_seccomp()
    cgroup, cgroup_problem = cgroup_parent("pids")
    memory, memory_problem = cgroup_parent("memory")
    return Probe(
        platform="linux",
        root=root,
        bwrap=bwrap,
        bwrap_problem=bwrap_problem,
        landlock_abi=version,
        landlock_problem="" if version else "this kernel has no Landlock (needs Linux 5.13+ with it enabled)",
        seccomp=seccomp,
        seccomp_problem=seccomp_problem,
        seatbelt_problem="macOS only",
        cgroup=str(cgroup or ""),
        cgroup_problem=cgroup_problem,
        memory_cgroup=str(memory or ""),
        memory_cgroup_problem=memory_problem,
    )
