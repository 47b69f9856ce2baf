"""Small formatters shared by the live view, the plain status, the cost table and the report."""

from __future__ import annotations

from typing import TYPE_CHECKING

from plait.ui._usd import dollars

if TYPE_CHECKING:  # `plait log` words its lines without the run's fold and its event models
    from plait.ui.runview import RunView

__all__ = ["STATE_STYLE", "bar", "duration", "gate_line", "integration_line", "one_line", "plan_line", "tokens", "usd"]

STATE_STYLE = {
    "waiting": "dim",
    "running": "cyan",
    "done": "green",
    "failed": "red",
    "dropped": "red",
    "interrupted": "yellow",
}


def tokens(n: int) -> str:
    """1234 -> 1.2k, 1234567 -> 1.23M."""
    if n < 1000:
        return str(n)
    if n < 1_000_000:
        return f"{n / 1000:.1f}k"
    return f"{n / 1_000_000:.2f}M"


def usd(x: float, *, calls: int = 0, unpriced: int = 0) -> str:
    """Dollars; of `calls` model calls, `unpriced` were of a model with no price: all of them reads `unpriced`,
    some of them `$0.0123 + unpriced`, never a `$0.0000` that looks like a free run."""
    return dollars(x, calls, unpriced)


def duration(seconds: float) -> str:
    """75.2 -> 1m15s; 3725 -> 1h02m."""
    s = int(round(seconds))
    if s < 60:
        return f"{seconds:.1f}s" if seconds < 10 else f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{(s % 3600) // 60:02d}m"


def bar(done: int, total: int, width: int = 20) -> str:
    if total <= 0:
        return "░" * width
    filled = round(width * done / total)
    return "█" * filled + "░" * (width - filled)


def plan_line(view: RunView) -> str:
    """`plan ███░░ 2/3 done, 1 running` (or what stands for it when the run has no plan)."""
    counts = view.plan_counts()
    total = sum(counts.values())
    if total == 0:
        return "planning…" if "planner" in view.agents or "triage" in view.agents else "no tasks yet"
    finished = sum(counts.get(s, 0) for s in ("done", "failed", "dropped", "interrupted"))
    parts = [f"{n} {state}" for state, n in sorted(counts.items()) if n]
    label = "plan" if view.plan else "tasks"
    return f"{label} {bar(finished, total)} {finished}/{total} finished ({', '.join(parts)})"


def gate_line(view: RunView) -> str:
    """The last gate check per stage, on the latest commit checked."""
    if not view.gates:
        return "gate: not run yet"
    commit = view.gates[-1].commit
    stages = [g for g in view.gates if g.commit == commit]
    marks = " ".join(f"{g.stage} {'✓' if g.passed else '✗'}" for g in stages)
    return f"gate @{commit[:8]}: {marks}"


def integration_line(view: RunView) -> str:
    """Where the integration branch is and every task it holds so far."""
    if not view.integrations:
        return "integration: nothing integrated yet"
    held: list[str] = []
    last = view.integrations[-1]
    for step in (s for s in view.integrations if s.branch == last.branch):  # a run integrated again starts anew
        held = [t for t in held if t not in step.ejected] + [t for t in step.tasks if t not in held]
    text = f"integration {last.branch} @{last.commit[:8]}: {', '.join(held) or '-'}"
    return text + (f"; ejected {', '.join(last.ejected)}" if last.ejected else "")


def one_line(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"
