"""The live view's board: an agent's row, cut to fit the screen, and which agents have one."""

from __future__ import annotations

from rich.text import Text

from plait.ui import _fmt
from plait.ui.runview import AgentView, RunView, phase_of

__all__ = ["COLUMNS", "cells", "lease_lines", "shown", "widths"]

COLUMNS = ("agent", "task", "state", "now", "steps", "tokens", "cost", "merge")
_TITLE_W, _NOW_W, _NOW_MIN, _TITLE_MIN = 30, 44, 20, 12
"""The widest title and tool call shown; the `now` width the title gives way to; the narrowest title kept."""
_ARRIVING_W, _WRITING = 40, "writing: …"
"""The characters shown of the end of a reply streaming in."""


def cells(agent: AgentView, title_w: int = _TITLE_W, now_w: int = _NOW_W, arriving: str = "") -> list[Text]:
    """The row of an agent; every cell a `Text`, since the table would read a plain string as markup.

    The title is cut to `title_w` (and left out at 0, its column dropped), the tool call to `now_w`. While the
    agent's reply streams in, `arriving` (its end) is shown in place of the tool call.
    """
    now = Text(_fmt.one_line(agent.now, now_w))
    if arriving and agent.state == "running":
        room = min(_ARRIVING_W, max(now_w - len(_WRITING), 8))  # the newest text is kept: cut from the left
        now = Text(_WRITING + " ".join(arriving.split())[-room:], style="italic")
    state = agent.state + (f" #{agent.attempt}" if agent.attempt > 1 else "")
    cells = [
        Text(agent.id),
        Text(_fmt.one_line(agent.title, title_w)),
        Text(state, style=_fmt.STATE_STYLE.get(agent.state, "")),
        now,
        Text(str(agent.steps), justify="right"),
        Text(_fmt.tokens(agent.usage.total_tokens), justify="right"),
        Text(agent.cost_text, justify="right"),
        Text(agent.merge),
    ]
    return cells if title_w else cells[:1] + cells[2:]


def widths(agents: list[AgentView], width: int, arriving: dict[str, str] | None = None) -> tuple[int, int]:
    """How wide the title and the tool call may be for every column to fit in `width` cells: the title
    shrinks first, then its column goes (0); the agent, state, steps, tokens, cost and merge show in full."""
    rows = [cells(a, arriving=(arriving or {}).get(a.id, "")) for a in agents]
    fixed = sum(
        max([len(name), *(len(row[i].plain) for row in rows)]) + 2
        for i, name in enumerate(COLUMNS)
        if name not in ("task", "now")
    )
    title = max([4, *(len(row[1].plain) for row in rows)])
    now = max([3, *(len(row[3].plain) for row in rows)])
    spare = width - fixed - 2 * 2 - 1  # the two cells' padding; one cell for the scrollbar's edge
    if title + now <= spare:
        return title, now
    title = min(title, spare - min(now, _NOW_MIN))
    if title >= _TITLE_MIN:
        return title, spare - title
    return 0, max(spare + 2, 3)  # the title's column and its padding go to the tool call


def shown(agent: AgentView, view: RunView) -> bool:
    """Whether the agent has a row: not a planner that never ran because the run was given its plan."""
    return not (phase_of(agent.id) == "planning" and view.plan and agent.steps == 0 and agent.state == "waiting")


def lease_lines(view: RunView) -> list[str]:
    """Who holds a lease on a path outside its write-set, and who waits for one: a line, or none."""
    parts = []
    for agent in view.agents.values():
        if agent.waiting_for:
            parts.append(f"{agent.id} waits for {agent.waiting_for}")
        if agent.claims:
            parts.append(f"{agent.id} holds {', '.join(agent.claims)}")
    return ["leases: " + " · ".join(parts)] if parts else []
