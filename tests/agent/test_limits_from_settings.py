"""Every agent's limits come from the settings one way; an expert's answer is capped further."""

from __future__ import annotations

from plait.agent.loop import AgentLimits
from plait.coord.experts import EXPERT_STEPS
from plait.settings import Settings


def test_limits_follow_the_settings_and_an_expert_s_cap_only_lowers_them() -> None:
    s = Settings(max_steps=80, max_tokens=1234, max_format_errors=5, max_output_tokens=999)

    limits = AgentLimits.from_settings(s)
    expert = AgentLimits.from_settings(s, most_steps=EXPERT_STEPS)
    few = AgentLimits.from_settings(Settings(max_steps=7), most_steps=EXPERT_STEPS)

    assert (limits.max_steps, limits.max_tokens, limits.max_format_errors, limits.max_output_tokens) == (
        80,
        1234,
        5,
        999,
    )
    assert expert.max_steps == EXPERT_STEPS == 30 and expert.max_tokens == 1234
    assert few.max_steps == 7
