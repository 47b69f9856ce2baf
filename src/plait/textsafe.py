"""Text from models, commands and files made safe to show: no control character reaches a terminal as such.

A terminal obeys the characters it is sent: ESC and CSI sequences clear the screen or move the cursor,
OSC sequences retitle the window, write the clipboard (OSC 52) or draw links (OSC 8), BEL rings, BS and
CR write over what was shown, bidi overrides reorder it. `visible` shows each of them as a mark instead
(ESC as ␛, CR as ␍, CSI as \\x9b, RIGHT-TO-LEFT OVERRIDE as \\u202e), so that a reader sees that
something was there; newlines and tabs stay.
"""

from __future__ import annotations

__all__ = ["visible"]

_BIDI = (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))
_MARKS: dict[int, str] = {c: chr(0x2400 + c) for c in range(0x20) if c not in (0x09, 0x0A)}
_MARKS[0x7F] = "␡"
_MARKS.update({c: f"\\x{c:02x}" for c in range(0x80, 0xA0)})
_MARKS.update({c: f"\\u{c:04x}" for c in (*_BIDI, 0x2028, 0x2029)})


def visible(text: str) -> str:
    """`text` with every control character a terminal would act on shown as a mark; newlines and tabs kept.

    Showing it again changes nothing more.
    """
    if text.isprintable():
        return text
    return text.replace("\r\n", "\n").translate(_MARKS)
