"""More of what a newcomer tripped over, through the real CLI: NO_COLOR, exit codes, `plait config`, flags."""

from __future__ import annotations

from pathlib import Path

from cli_support import Plait


def test_no_color_writes_no_style_at_all(plait: Plait, project: Path) -> None:
    styled = plait("config", cwd=project, extra_env={"FORCE_COLOR": "1"})
    assert styled.code == 0 and "\x1b[" in styled.out, "a forced terminal is styled (the test can fail)"
    plain = plait("config", cwd=project, extra_env={"FORCE_COLOR": "1", "NO_COLOR": "1"})
    assert plain.code == 0 and "\x1b[" not in plain.out + plain.err
    failed = plait("show", "nosuchrun", cwd=project, extra_env={"FORCE_COLOR": "1", "NO_COLOR": "1"})
    assert failed.code != 0 and "\x1b[" not in failed.err and "plait: error:" in failed.err
