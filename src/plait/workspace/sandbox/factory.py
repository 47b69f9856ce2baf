"""Build the sandboxed shell for one agent's commands from the settings: the probe's layer, the preset, the limits."""

from __future__ import annotations

import functools
import os
import re
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path

from plait.errors import EnvironmentProblem
from plait.events.runlog import RunLog
from plait.redact import Redactor
from plait.settings import Settings
from plait.workspace.policy import Asker, ConsoleAsker, Policy
from plait.workspace.sandbox._confinement import Confinement
from plait.workspace.sandbox._layers import make_layer
from plait.workspace.sandbox._regions import machine_visible, regions, visible
from plait.workspace.sandbox.probe import Probe, probe
from plait.workspace.sandbox.runner import SandboxedShell

__all__ = ["sandboxed_shell"]


@functools.lru_cache(maxsize=4096)
def _within(path: Path, regions: tuple[Path, ...]) -> bool:
    return any(path.is_relative_to(region) for region in regions)


def sandboxed_shell(
    settings: Settings,
    *,
    worktree: Path,
    common_dir: Path,
    log: RunLog | None,
    agent: str,
    interactive: bool,
    asker: Asker | None = None,
    found: Probe | None = None,
    extra_env: Mapping[str, str] | None = None,
    env: Mapping[str, str] | None = None,
    preset: str | None = None,
    grace: float = 2.0,
) -> SandboxedShell:
    """The shell for `agent`'s commands in `worktree`; call `close()` on it when the agent is done.

    Args:
        settings: `settings.sandbox` gives the preset, layer, limits and extra rules.
        worktree: the one directory commands may write (besides a private tmp).
        common_dir: the repository's shared `.git`, kept read-only.
        log: the run's log, where each policy decision is recorded (None records nothing).
        interactive: whether `ask` verdicts go to `asker` (the terminal by default) or are denied.
        found: the machine's probe, to share one among agents (probed now when None).
        extra_env: variables added for this agent, such as its port block.
        env: the environment the commands' allow-list takes from (this process's by default).
        preset: a preset other than the settings' own, e.g. "trusted" for the user's own setup command.
        grace: seconds between SIGTERM and SIGKILL when a command's tree is killed.

    Raises:
        EnvironmentProblem: `sandbox.layer` names a layer that cannot run here, or the layer fails to set up.
    """
    sandbox = settings.sandbox
    found = found or probe()
    name = found.choose(sandbox.layer)
    policy = found.once(("policy", id(sandbox), preset), lambda: (sandbox, Policy.from_settings(sandbox, preset)))[1]
    tmp = Path(tempfile.mkdtemp(prefix=f"plait-{re.sub(r'[^A-Za-z0-9_.-]', '_', agent)[:40]}-"))
    base = dict(os.environ if env is None else env)
    home, common = Path.home(), common_dir.absolute()
    hidden_regions = tuple(found.once(("regions", home, common), lambda: regions(home=home, common_dir=common)))
    search = base.get("PATH", "")
    machine = found.once(
        ("visible", home, common, search), lambda: machine_visible(common_dir=common, home=home, env={"PATH": search})
    )
    shown = visible(
        worktree=worktree.absolute(),
        common_dir=common,
        home=home,
        env=base,
        allowed=policy.readable(worktree),
        machine=machine,
    )
    confinement = Confinement(
        worktree=worktree.absolute(),
        common_dir=common,
        tmp=tmp,
        home=home,
        writable=tuple(policy.writable(worktree)),
        hidden=tuple(policy.hidden(worktree)),
        regions=hidden_regions,
        # only what a region hides needs showing again: every mount costs bubblewrap time
        visible=tuple(path for path in shown if _within(path, hidden_regions)),
    )
    confinement.home_dir.mkdir(mode=0o700)
    try:
        layer = make_layer(name, confinement, found)
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise EnvironmentProblem(
            f"the {name} sandbox could not be set up ({exc}): choose another sandbox.layer (`plait sandbox` lists them)"
        ) from exc
    keys = [k.get_secret_value() for k in (settings.openai_api_key, settings.anthropic_api_key) if k is not None]
    return SandboxedShell(
        policy=policy,
        layer=layer,
        confinement=confinement,
        limits=sandbox.limits,
        log=log,
        agent=agent,
        interactive=interactive,
        asker=asker or (ConsoleAsker() if interactive else None),
        redactor=Redactor(keys, env=base),
        env=base,
        extra_env=extra_env,
        passthrough=sandbox.env_passthrough,
        allow_unsandboxed=sandbox.allow_unsandboxed,
        cgroup_parent=Path(found.cgroup) if found.cgroup else None,
        memory_cgroup_parent=Path(found.memory_cgroup) if found.memory_cgroup else None,
        root=found.root,
        grace=grace,
    )
