"""What a resumed run's earlier calls paid is summed field by field, then charged once per budget: the sum is what
adding each call's usage would give, cached and cache-written tokens too."""

from __future__ import annotations

import pytest

from plait.agent.budget import spent
from plait.messages import Usage


def test_what_calls_paid_adds_up_field_by_field() -> None:
    paid = [
        (Usage(input_tokens=100, output_tokens=7, cached_tokens=40), 0.25),
        (Usage(input_tokens=3, output_tokens=1, cache_write_tokens=9), 0.5),
        (Usage(), 0.0),
    ]
    usage, usd = spent(paid)
    assert usage == sum((u for u, _ in paid), Usage())
    assert usage == Usage(input_tokens=103, output_tokens=8, cached_tokens=40, cache_write_tokens=9)
    assert usd == pytest.approx(0.75)
    assert spent([]) == (Usage(), 0.0)
