"""The sandboxed runner: the policy decides, an OS layer confines, limits bound, output is redacted, all is logged."""

from __future__ import annotations

import asyncio
import functools
import os
import shutil
import subprocess
import uuid
import weakref
from collections.abc import Mapping, Sequence
from pathlib import Path

from plait.events.runlog import RunLog
from plait.events.types import PolicyDecided
from plait.redact import Redactor
from plait.sandbox_settings import Limits
from plait.workspace.command import CommandResult, Launch, LocalShell
from plait.workspace.policy import Asker, Decision, Policy
from plait.workspace.sandbox._bounds import Bounds
from plait.workspace.sandbox._cgroups import AgentCgroups
from plait.workspace.sandbox._confinement import Confinement
from plait.workspace.sandbox._disk import DiskBudget
from plait.workspace.sandbox._env import command_env
from plait.workspace.sandbox._guards import GitLink, refusals
from plait.workspace.sandbox._layers import Layer
from plait.workspace.sandbox._limits import CapabilityDrop

__all__ = ["SandboxedShell"]

_MARKER = "PLAIT_SANDBOX_ID"
_GIT_VARS = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY")


def _release(layer: Layer, tmp: Path, cgroups: AgentCgroups | None) -> None:
    if cgroups is not None:
        cgroups.close()
    layer.close()
    shutil.rmtree(tmp, ignore_errors=True)


class SandboxedShell:
    """A `Shell` for one agent: policy, OS layer, limits and a scrubbed environment; decisions are logged."""

    def __init__(
        self,
        *,
        policy: Policy,
        layer: Layer,
        confinement: Confinement,
        limits: Limits,
        log: RunLog | None,
        agent: str,
        interactive: bool = False,
        asker: Asker | None = None,
        redactor: Redactor | None = None,
        env: Mapping[str, str] | None = None,
        extra_env: Mapping[str, str] | None = None,
        passthrough: Sequence[str] = (),
        allow_unsandboxed: bool = False,
        cgroup_parent: Path | None = None,
        memory_cgroup_parent: Path | None = None,
        root: bool = False,
        grace: float = 2.0,
        drain: float = 1.0,
    ) -> None:
        """`env` is the environment the allow-list takes from (this process's by default); `extra_env` is plait's
        own for this agent (its ports), passed as it is. The agent's cgroups are made in the parents given, the
        pids one and the memory one (where `limits.cgroup` allows)."""
        self.policy, self.layer, self.confinement, self.limits = policy, layer, confinement, limits
        self.log, self.agent = log, agent
        self.interactive, self.asker = interactive, asker
        self._base_env = dict(os.environ if env is None else env)
        self._redact = redactor or Redactor(env=self._base_env)
        self._passthrough = tuple(passthrough)
        self._extra_env = dict(extra_env or {})
        self.allow_unsandboxed = allow_unsandboxed
        self._cgroups = (
            AgentCgroups(
                pids_parent=cgroup_parent,
                memory_parent=memory_cgroup_parent,
                processes=limits.processes,
                memory_mb=limits.memory_mb,
            )
            if limits.cgroup and (cgroup_parent or memory_cgroup_parent)
            else None
        )
        where = f"worktree and {layer.tmpdir}"
        self._disk = DiskBudget((confinement.worktree, confinement.tmp), limits.disk_mb, where)
        self._root = root
        self._drop = CapabilityDrop() if root and layer.name != "bwrap" else None
        self._local = LocalShell(grace=grace, drain=drain)
        self._link = GitLink(confinement.worktree)
        self._answers: dict[str, bool] = {}
        self._cleanup = weakref.finalize(self, _release, layer, confinement.tmp, self._cgroups)
        private_tmp = [Path("/tmp")] if layer.pid_namespace else []
        self._writable = (confinement.tmp, *confinement.writable, *private_tmp)
        self._protected = (confinement.common_dir, confinement.home) if private_tmp else ()

    async def run(self, command: str, *, cwd: Path, timeout: float, output_limit: int) -> CommandResult:  # noqa: ASYNC109
        """Judge `command`, then run it confined; a refusal is an observation, never an exception."""
        decision, network = await self._decide(command, cwd)
        if decision.verdict != "allow":
            text = f"plait did not run this command: {decision.reason or 'the policy forbids it'}"
            text += f" (rule {decision.rule})." if decision.rule else "."
            if decision.instead:
                text += f" Instead: {decision.instead}."
            return CommandResult(exit_code=126, output=self._redact(text))
        result, notes = await self._execute(command, cwd=cwd, seconds=timeout, limit=output_limit, network=network)
        if self._link.restore():
            self._record(
                Decision(
                    action="write",
                    subject=str(self._link.path),
                    verdict="deny",
                    rule="git-link",
                    reason="a command changed the worktree's .git link; plait restored it",
                )
            )
            notes.append("the command changed the worktree's .git link, which plait restored: git state is plait's")
        notes += self._observe(result.output, network)
        output = result.output + "".join(f"\n[plait: {note}]" for note in notes)
        return result.model_copy(update={"output": self._redact(output)})

    def close(self) -> None:
        """Release the layer and remove the private tmp directory (also done when the runner is collected)."""
        self._cleanup()

    async def _decide(self, command: str, cwd: Path) -> tuple[Decision, bool]:
        """The final verdict (asks resolved) and whether the command gets the network; recorded either way."""
        decision = self.policy.check_command(command, cwd=cwd, writable=self._writable, protected=self._protected)
        network = self.policy.network == "allow"
        if decision.verdict == "allow" and self.layer.name == "none" and not self.allow_unsandboxed:
            decision = decision.model_copy(
                update={
                    "verdict": "ask",
                    "rule": "unsandboxed",
                    "reason": "no OS sandbox works on this machine, so the command would run unconfined",
                    "instead": "edit files with the file tools; the user can install bubblewrap or set "
                    "sandbox.allow_unsandboxed = true",
                }
            )
        if decision.verdict == "ask":
            decision = await self._ask(decision)
            network = network or (decision.verdict == "allow" and self.policy.network == "ask")
        self._record(decision)
        if network and self.policy.network == "ask":
            self._record(
                Decision(action="network", subject=command, verdict="allow", rule="approved", reason="with the command")
            )
        return decision, network

    async def _ask(self, decision: Decision) -> Decision:
        why = decision.reason or "the policy asks for approval"
        if not self.interactive or self.asker is None:
            reason = f"{why}; that needs the user's approval, and this run is unattended"
            return decision.model_copy(update={"verdict": "deny", "reason": reason})
        if decision.subject not in self._answers:
            self._answers[decision.subject] = await asyncio.to_thread(self.asker, decision, self.agent)
        approved = self._answers[decision.subject]
        reason = f"{why}; the user {'approved' if approved else 'refused'}"
        return decision.model_copy(update={"verdict": "allow" if approved else "deny", "reason": reason})

    @functools.cached_property
    def _fixed_env(self) -> dict[str, str]:
        """What every command of this agent starts from: the allow-list is read once, not per command."""
        tmpdir = self.layer.tmpdir
        home = f"{tmpdir}/{self.confinement.home_dir.name}"
        env = command_env(
            self._base_env, home=home, tmpdir=tmpdir, extra=self._extra_env, passthrough=self._passthrough
        )
        for name in _GIT_VARS:
            env.pop(name, None)
        return env

    def _env(self, marker: str) -> dict[str, str]:
        return {**self._fixed_env, _MARKER: marker}

    async def _execute(
        self, command: str, *, cwd: Path, seconds: float, limit: int, network: bool
    ) -> tuple[CommandResult, list[str]]:
        marker = uuid.uuid4().hex
        argv, layer_setup, fds = self.layer.prepare(["bash", "-c", command], cwd=cwd, network=network)
        # bwrap starts blocked until plait has put it in the cgroups and limited it: no Python runs in the child
        blocked = self.layer.name == "bwrap" and layer_setup is None and self._drop is None
        spawner = self._cgroups.spawner() if blocked and self._cgroups is not None else None
        bounds = Bounds(
            self.limits,
            marker=f"{_MARKER}={marker}",
            agent=self._cgroups,
            disk=self._disk,
            root=self._root,
            drop=self._drop,
            pid_namespace=self.layer.pid_namespace,
            layer_setup=layer_setup,
            blocked=blocked,
            inside=spawner is not None,
        )
        passed = fds
        if bounds.block_fd is not None:
            argv[1:1] = ["--block-fd", str(bounds.block_fd)]
            passed = (*fds, bounds.block_fd)
        spec = Launch(
            argv,
            self._env(marker),
            None if blocked else bounds.setup,
            pass_fds=passed,
            reap=bounds.reap,
            started=bounds.confine if blocked else None,
            contained=self.layer.pid_namespace,
            executor=spawner,
        )
        try:
            result = await self._local.launch(spec, cwd=cwd, timeout=seconds, output_limit=limit, watch=bounds.watch)
        except subprocess.SubprocessError as exc:  # the child's set-up failed: nothing ran, fail closed
            text = f"plait could not confine this command ({self.layer.name}: {exc}), so it did not run it"
            return CommandResult(exit_code=126, output=text), []
        finally:
            for fd in fds:
                os.close(fd)
            bounds.reap()
            await bounds.close()
        await bounds.finish()
        for rule, note in bounds.hits:
            self._record(Decision(action="command", subject=command, verdict="deny", rule=f"limit:{rule}", reason=note))
        return result, [note for _, note in bounds.hits]

    def _observe(self, output: str, network: bool) -> list[str]:
        if self.layer.name == "none":
            return []
        found = refusals(output)
        for kind, line in found:
            self._record(
                Decision(
                    action=kind,
                    subject=line,
                    verdict="deny",
                    rule=f"sandbox:{self.layer.name}",
                    reason="the output suggests the OS sandbox refused this",
                )
            )
        if not found:
            return []
        offline = "" if network else "; the network is off"
        return [
            f"if the {self.layer.name} sandbox refused something above: commands may write only inside the worktree "
            f"and {self.layer.tmpdir}{offline}; the shared .git is read-only and plait commits your work itself"
        ]

    def _record(self, decision: Decision) -> None:
        if self.log is None:
            return
        self.log.append(
            PolicyDecided(
                run_id=self.log.run_id,
                agent=self.agent,
                action=decision.action,
                subject=self._redact(decision.subject)[:2000],
                verdict=decision.verdict,
                rule=decision.rule,
                reason=self._redact(decision.reason),
            )
        )
