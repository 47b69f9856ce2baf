"""Dollars as every view shows them, an unpriced model's calls included."""

from __future__ import annotations

__all__ = ["dollars"]


def dollars(x: float, calls: int, unpriced: int) -> str:
    """Dollars; all calls of an unpriced model read `unpriced`, some of them `$0.0123 + unpriced`."""
    money = f"${x:.4f}" if x < 10 else f"${x:.2f}"
    if unpriced and unpriced >= calls:
        return "unpriced"
    return f"{money} + unpriced" if unpriced else money
