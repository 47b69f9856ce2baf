"""The ray backend: each attempt is a Ray task with the CPUs and memory the settings ask for.

The worker gets the repository as git bundles through Ray's object store (the run's base once, then only the
commits an attempt starts from beyond it), and its keys through the task's runtime environment: the agent's
commands never see them (the sandbox passes an allow-list of variables). A task whose worker or node dies is
run again elsewhere by Ray (`max_retries`); the new run replays the attempt's logged model calls from the shared
store and restores its last checkpoint, so nothing is paid twice. Its result commits come back as a bundle that
this process fetches into the user's repository, the only place where branches are written.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from plait.coord.experts import ExpertSpec
from plait.errors import ConfigError, PlaitError
from plait.events.store import EventStore
from plait.run.backends._experts import ActorExperts
from plait.run.backends._remote import RemoteJob, RemoteOutcome, result_key, run_job
from plait.settings import Settings
from plait.workspace import Repo
from plait.workspace.bundles import bundle, unbundle
from plait.workspace.scope import store_scope

__all__ = ["RayBackend"]

_KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL")
RETRIES = 3
"""How many times Ray runs an attempt again after its worker or node died."""


def _placed(job: RemoteJob, base: bytes, extra: bytes) -> RemoteOutcome:
    """The Ray task: runs on the node Ray chose."""
    import ray

    return run_job(job, base, extra, ray.get_runtime_context().get_node_id())


class RayBackend:
    """Attempts as Ray tasks on the cluster `settings.ray_address` names (or one started for the run)."""

    def __init__(self, ray: Any, settings: Settings, repo: Repo, store: EventStore, run_base: str, *, owns: bool):
        self._ray, self.settings, self.repo, self.store, self.run_base = ray, settings, repo, store, run_base
        self._owns = owns
        self._task = ray.remote(_placed)
        self._bases: dict[str, Any] = {}
        self._actors: list[Any] = []

    @classmethod
    def connect(cls, settings: Settings, repo: Repo, store: EventStore, run_base: str) -> RayBackend:
        try:
            import ray
        except ImportError:
            raise ConfigError("the ray backend needs Ray: pip install 'plait[ray]'") from None
        owns = not ray.is_initialized()
        if owns and settings.ray_address and settings.ray_address != "auto":
            _reachable(settings.ray_address)
        if owns:
            _errors_to_stderr(ray)
            try:
                ray.init(
                    address=settings.ray_address or None,
                    log_to_driver=False,
                    logging_level=logging.ERROR,
                    configure_logging=True,
                )
            except (ConnectionError, RuntimeError, ValueError) as exc:
                where = settings.ray_address or "a cluster of this machine"
                raise ConfigError(f"could not reach the Ray cluster at {where}: {_line(exc)}") from None
        return cls(ray, settings, repo, store, run_base, owns=owns)

    def _credentials(self) -> dict[str, str]:
        """The provider keys and endpoints, for the worker process's environment only."""
        s, env = self.settings, dict(os.environ)
        if s.openai_api_key is not None:
            env["OPENAI_API_KEY"] = s.openai_api_key.get_secret_value()
        if s.anthropic_api_key is not None:
            env["ANTHROPIC_API_KEY"] = s.anthropic_api_key.get_secret_value()
        return {k: env[k] for k in _KEYS if env.get(k)}

    def _base(self) -> Any:
        """The run's base as a bundle in the object store, made once."""
        if self.run_base not in self._bases:
            self._bases[self.run_base] = self._ray.put(bundle(self.repo.root, self.run_base))
        return self._bases[self.run_base]

    async def attempt(self, job: RemoteJob) -> RemoteOutcome:
        """Run `job` on the cluster; its result commit is in the user's repository when this returns."""
        tip = job.carry or job.base
        extra = b"" if tip == self.run_base else bundle(self.repo.root, tip, since=[self.run_base])
        s = self.settings
        options: dict[str, Any] = {
            "num_cpus": s.task_cpus,
            "max_retries": RETRIES,
            "retry_exceptions": False,
            "runtime_env": {"env_vars": self._credentials()},
        }
        if s.task_memory_mb:
            options["memory"] = s.task_memory_mb * 1024 * 1024
        ref = self._task.options(**options).remote(job, self._base(), extra)
        try:
            outcome: RemoteOutcome = await ref
        except BaseException as exc:
            if not isinstance(exc, self._ray.exceptions.RayError):
                self._ray.cancel(ref, force=True)  # stopped here (Ctrl-C): the worker stops too
                raise
            return RemoteOutcome("", "", failure=f"the attempt's worker failed on the cluster: {_line(exc)}")
        if outcome.commit:
            self._take(outcome.bundle)
        return outcome

    async def open_experts(
        self, specs: list[tuple[ExpertSpec, str]], run_id: str, commit: str, repo_map: str
    ) -> ActorExperts:
        """Start an actor per expert (none asks for a CPU: an expert reads and asks its model), named for the run."""
        from plait.run.backends._experts import NAMESPACE, ExpertActor, ExpertJob, actor_name

        s = self.settings
        settings = s.model_dump(mode="json", exclude={"openai_api_key", "anthropic_api_key"})
        actor = self._ray.remote(ExpertActor)
        for spec, origin in specs:
            job = ExpertJob(
                run_id, spec.model_dump(mode="json"), origin, commit, s.model, settings, s.store, store_scope(self.repo)
            )
            handle = actor.options(
                name=actor_name(run_id, spec.name),
                namespace=NAMESPACE,
                get_if_exists=True,
                num_cpus=0,
                max_restarts=RETRIES,
                max_task_retries=RETRIES,
                runtime_env={"env_vars": self._credentials()},
            ).remote(job, self._base())
            self._actors.append(handle)
        return ActorExperts(run_id, [spec for spec, _ in specs])

    def close_experts(self) -> None:
        for handle in self._actors:
            self._ray.kill(handle)
        self._actors.clear()

    def fetch(self, run_id: str, commit: str) -> None:
        if not commit or self.repo.has_commit(commit):
            return
        data = self.store.get_blob(run_id, result_key(commit))
        if data is None:
            raise PlaitError(f"commit {commit[:10]} is logged as an attempt's result but is in neither repository")
        self._take(data)

    def _take(self, data: bytes) -> None:
        unbundle(self.repo.root, data)

    def close(self) -> None:
        if self._owns and self._ray.is_initialized():
            self._ray.shutdown()


def _errors_to_stderr(ray: Any) -> None:
    """Ray prints the cluster's error messages (a node lost, ...) on stdout, where `--json` writes: send them to stderr.

    Its error listener looks its printer up in its module at each message, so replacing it there is enough.
    """
    worker = getattr(getattr(ray, "_private", None), "worker", None)
    original = getattr(worker, "print_to_stdstream", None)
    if original is None or getattr(original, "plait_stderr", False):
        return

    def to_stderr(data: dict[str, Any], ignore_prefix: bool) -> None:
        original({**data, "is_err": True}, ignore_prefix)

    to_stderr.plait_stderr = True  # type: ignore[attr-defined]
    worker.print_to_stdstream = to_stderr  # type: ignore[union-attr]


def _reachable(address: str) -> None:
    """Fail at once, in one line, where Ray itself would wait on an address that does not answer."""
    import socket

    host, _, port = address.removeprefix("ray://").rpartition(":")
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
    except (OSError, ValueError) as exc:
        raise ConfigError(f"the Ray cluster at {address} does not answer: {exc}") from None


def _line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[-1] if text else type(exc).__name__
