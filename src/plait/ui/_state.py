"""The parts of a run's state the reducer (`_reduce.py`) folds the log into: agents, their spans, spending, waits.

They are plain dataclasses: the read-only commands fold a log read without pydantic (`plait.ui._fast_events`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from plait.models.rates import DEFAULT_RATES, Rated, RateTable
from plait.ui._describe import short_args
from plait.ui._usd import dollars

if TYPE_CHECKING:
    from plait.models.rates import Tokens

__all__ = [
    "EXPERT_PREFIX",
    "AgentView",
    "CostLine",
    "Span",
    "TokenSum",
    "Wait",
    "dollars",
    "phase_of",
    "run_prices",
    "short_args",
]

EXPERT_PREFIX = "expert:"
"""How an expert's agent id begins, as `plait.events.types.EXPERT_PREFIX` says (a test keeps the two equal)."""

_FINAL = ("done", "failed", "dropped", "interrupted")


def run_prices(settings: dict[str, Any]) -> RateTable[Any]:
    """The price table a run was started with: the default one unless its settings logged prices of their own,
    which only `plait.models.pricing.logged_prices` validates (with pydantic)."""
    if not settings.get("prices"):
        return RateTable[Rated](DEFAULT_RATES)
    from plait.models.pricing import logged_prices

    return logged_prices(settings)


@dataclass(frozen=True)
class TokenSum:
    """Tokens of several calls added up, counted as `plait.messages.Usage` counts one call's."""

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0

    def __add__(self, other: Tokens) -> TokenSum:
        return TokenSum(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cached_tokens + other.cached_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
        )

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def as_json(self) -> dict[str, int]:
        """The four counts, as `Usage.model_dump` writes them."""
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cached_tokens": self.cached_tokens,
            "cache_write_tokens": self.cache_write_tokens,
        }


def phase_of(agent: str) -> str:
    """The phase an agent's spending belongs to: planning, work, experts or reconciliation."""
    if agent in ("planner", "triage"):  # the triage asks whether a planner is needed at all
        return "planning"
    if agent.startswith(EXPERT_PREFIX):
        return "experts"
    if agent.startswith(("resolver", "merge")):
        return "reconciliation"
    return "work" if agent else "run"


@dataclass
class CostLine:
    """Spending of one agent, model or phase, or of the whole run."""

    name: str
    calls: int = 0
    usage: TokenSum = field(default_factory=TokenSum)
    cost_usd: float = 0.0
    saved_usd: float = 0.0
    """What prompt caching saved: the cached tokens' discount, less the premium paid on cache writes."""
    billed_tokens: float = 0.0
    """The tokens as the providers bill them: cached and cache-written input weighed by their price."""
    unpriced_calls: int = 0
    """Calls of a model with no price: their dollars are unknown, not zero."""

    def add(self, usage: Tokens, cost: float, saved: float, billed: float, *, priced: bool = True) -> None:
        self.calls += 1
        self.unpriced_calls += 0 if priced else 1
        self.usage, self.cost_usd, self.saved_usd = self.usage + usage, self.cost_usd + cost, self.saved_usd + saved
        self.billed_tokens += billed

    @property
    def cost_text(self) -> str:
        """Its dollars, or `unpriced` when its model has no price."""
        return dollars(self.cost_usd, self.calls, self.unpriced_calls)

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "calls": self.calls,
            "usage": self.usage.as_json(),
            "billed_tokens": round(self.billed_tokens),
            "cost_usd": round(self.cost_usd, 6),
            "cache_saved_usd": round(self.saved_usd, 6),
            "unpriced_calls": self.unpriced_calls,
        }


@dataclass
class Span:
    """One stretch of time an agent was busy: one attempt at its task."""

    start: float
    end: float | None = None
    attempt: int = 1
    status: str = "running"


@dataclass
class Wait:
    """A stretch of time an agent waited for a path another task held; `end` None while it still waits."""

    agent: str
    path: str
    holder: str
    why: str
    start: float
    end: float | None = None


@dataclass
class AgentView:
    """What one agent is doing and has spent."""

    id: str
    title: str = ""
    state: str = "waiting"
    """waiting, running, done, failed, dropped or interrupted (of its latest attempt)."""
    now: str = ""
    """The tool call in flight, `thinking` while the model answers, or why it waits."""
    attempt: int = 0
    branch: str = ""
    tool_calls: int = 0
    retries: int = 0
    spent: CostLine = field(default_factory=lambda: CostLine(""))
    """Its model calls and what they cost."""
    merge: str = ""
    """Where its branch is in the merge queue: queued, merged (rung), conflict, integrated, ejected."""
    summary: str = ""
    reason: str = ""
    spans: list[Span] = field(default_factory=list)
    last_ts: float = 0.0
    answered: int = 0
    """Questions answered, when the agent is an expert (its state is `ready` between questions)."""
    claims: list[str] = field(default_factory=list)
    """Paths outside its write-set it holds a lease on."""
    waiting_for: str = ""
    """While a claim of it waits: the task it waits for and the path, such as `percent-split (tally/money.py)`."""

    def __post_init__(self) -> None:
        self.spent.name = self.spent.name or self.id

    @property
    def steps(self) -> int:
        """Its model calls."""
        return self.spent.calls

    @property
    def usage(self) -> TokenSum:
        return self.spent.usage

    @property
    def cost_usd(self) -> float:
        return self.spent.cost_usd

    @property
    def unpriced_calls(self) -> int:
        """Model calls of a model with no price: their dollars are unknown, not zero."""
        return self.spent.unpriced_calls

    @property
    def finished(self) -> bool:
        return self.state in _FINAL

    @property
    def cost_text(self) -> str:
        """Its dollars, or `unpriced` when its model has no price."""
        return self.spent.cost_text

    def busy_s(self) -> float:
        """Seconds spent working, over every attempt; an open span counts up to the agent's last event."""
        return sum(max((s.end if s.end is not None else self.last_ts) - s.start, 0.0) for s in self.spans)
