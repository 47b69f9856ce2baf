"""An edit's observation shows where its new text meets the code around it, not the middle the model just wrote."""

from __future__ import annotations

from pathlib import Path

from plait.agent._files import edit_file

_TEN = "".join(f"line{i}\n" for i in range(1, 11))


def test_a_long_edit_is_echoed_at_its_seams_with_the_lines_left_out_named(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text(_TEN)
    new = "".join(f"new{i}\n" for i in range(1, 21))
    said = edit_file(path, "m.py", "line5\n", new, False)
    shown = said.splitlines()[1:]
    assert [row.split("| ")[1] for row in shown if "| " in row] == [
        "line3", "line4", "new1", "new2", "new19", "new20", "line6", "line7", "line8"
    ]  # fmt: skip
    assert "... lines 7-22 as you wrote them ..." in said
    assert path.read_text() == _TEN.replace("line5\n", new)  # the file holds every line


def test_a_short_edit_is_echoed_whole(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text(_TEN)
    said = edit_file(path, "m.py", "line5\n", "a\nb\nc\nd\ne\n", False)
    assert [row.split("| ")[1] for row in said.splitlines()[1:]] == [
        "line3", "line4", "a", "b", "c", "d", "e", "line6", "line7", "line8"
    ]  # fmt: skip
    assert "as you wrote them" not in said
