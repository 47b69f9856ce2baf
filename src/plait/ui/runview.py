"""The state of a run as a person follows it (agents, plan, merges, gate, totals), folded from its events.

The fold is `_reduce.RunView`; its parts are in `_state`.
"""

from __future__ import annotations

from plait.ui._reduce import RunView
from plait.ui._state import AgentView, CostLine, Span, Wait, dollars, phase_of

__all__ = ["AgentView", "CostLine", "RunView", "Span", "Wait", "dollars", "phase_of"]
