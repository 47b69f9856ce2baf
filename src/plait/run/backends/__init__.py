"""Where an agent's attempt runs: `local` (this process, the default) or `ray` (a task on a Ray cluster).

The planner, scheduler, merge queue, gate and radar always stay in the driver process; a backend only places
attempts. `None` stands for the local backend: `plait.run.parallel` runs the attempt in place. Ray is imported
only when the ray backend is chosen.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from plait.errors import ConfigError

if TYPE_CHECKING:
    from plait.coord.experts import Experts, ExpertSpec
    from plait.events.store import EventStore
    from plait.run.backends._remote import RemoteJob, RemoteOutcome
    from plait.settings import Settings
    from plait.workspace import Repo

__all__ = ["AttemptBackend", "open_backend"]


class AttemptBackend(Protocol):
    """Runs attempts elsewhere; the commits they make come back into the user's repository."""

    async def attempt(self, job: RemoteJob) -> RemoteOutcome: ...

    async def open_experts(
        self, specs: list[tuple[ExpertSpec, str]], run_id: str, commit: str, repo_map: str
    ) -> Experts:
        """The run's persistent experts, placed by the backend; asked through what this returns."""
        ...

    def close_experts(self) -> None: ...

    def fetch(self, run_id: str, commit: str) -> None:
        """Make sure `commit` (an attempt's result, logged) is in the user's repository."""
        ...

    def close(self) -> None: ...


def open_backend(settings: Settings, repo: Repo, store: EventStore, run_base: str) -> AttemptBackend | None:
    """The backend `settings` name, connected; None for the local one.

    Raises:
        ConfigError: the ray backend without the ray extra, without a shared store, or with an external agent.
    """
    if settings.backend == "local":
        return None
    if not settings.store:
        raise ConfigError('the ray backend needs an event log every node can reach: set store = "postgresql://..."')
    if settings.agent != "plait":
        raise ConfigError(f"the ray backend runs plait's own agent; agent = {settings.agent!r} runs with the local one")
    from plait.run.backends.ray_backend import RayBackend

    return RayBackend.connect(settings, repo, store, run_base)
