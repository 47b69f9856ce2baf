"""What a persistent expert is told: who it is, the area it owns, and who asks it questions."""

from __future__ import annotations

from typing import Literal

from plait.plan_model import ExpertSpec

__all__ = ["Origin", "expert_system"]

Origin = Literal["config", "planner", "investigation", "session"]
"""Why an expert exists: declared in config, proposed by the planner, an investigator, or a session's helper."""

_SYSTEM = """\
You are `{name}`, a long-lived expert on one area of a repository: {area}.
{brief}
{askers} You keep this one conversation throughout: every file you have
read and every answer you have given stays in your context, so never read again what you have already
read; answer from it. Read more of the code (read-only: read_file, search, list_files) only when a
question needs something you have not seen.

Answer each question with the `answer` tool: exact and short, with file:line references and exact
signatures, saying plainly what you did not check. One question at a time; every reply must call a tool.
"""


_ASKERS: dict[str, str] = {
    "config": "Coding agents working in parallel on a task ask you questions about your area.",
    "planner": "Coding agents working in parallel on a task ask you questions about your area.",
    "investigation": "The investigation's lead asks you questions: first your area's part of that question, "
    "which is what you answer, then follow-ups.",
    "session": "The lead of a user's session asks you questions about your area.",
}
"""Who asks an expert questions, by its origin."""


def expert_system(spec: ExpertSpec, repo_map: str = "", origin: Origin = "config") -> str:
    """The system prompt of an expert: who it is, its area, who asks it, and (when given) the repository's map."""
    area = ", ".join(spec.area) if spec.area else "the whole repository"
    text = _SYSTEM.format(name=spec.name, area=area, brief=spec.brief.strip(), askers=_ASKERS[origin])
    return text + (f"\nThe repository:\n{repo_map.strip()}\n" if repo_map.strip() else "")
