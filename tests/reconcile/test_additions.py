"""Both sides added at one spot: a sorted list stays sorted, history orders the rest, nothing is held twice,
no whitespace is lost or made up; a chosen order is of low confidence, and says so."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from gitrepo import Sandbox, git, sandbox

from plait.events import SQLiteEventStore
from plait.events.runlog import RunLog
from plait.reconcile._hunks import import_union
from plait.reconcile.deterministic import DeterministicResolver, resolve_deterministic
from plait.reconcile.ladder import default_resolvers, merge_commits
from plait.reconcile.types import FileConflict, MergeContext, Resolution, Rung
from plait.run.review import resolvers_for
from plait.settings import Settings

AUTHORS = "Authors\n=======\n\n- Alice\n- Bob\n- Zed\n"
CHANGES = "Changes\n=======\n\nVersion 2.8\n-----------\n\n- Old fix.\n"
HEADER = "Version 2.9\n-----------\n\n"


def _resolve(path: str, base: str, ours: str, theirs: str) -> Resolution:
    found = resolve_deterministic(FileConflict(path, base, ours, theirs))
    assert found is not None and found.text is not None
    return found


def test_a_sorted_list_stays_sorted_with_high_confidence() -> None:
    ours = AUTHORS.replace("- Bob\n", "- Bob\n- Dan\n")
    theirs = AUTHORS.replace("- Bob\n", "- Bob\n- Carl\n")
    found = _resolve("AUTHORS.rst", AUTHORS, ours, theirs)
    assert found.text == AUTHORS.replace("- Bob\n", "- Bob\n- Carl\n- Dan\n")
    assert found.confidence == "high" and "kept the list sorted" in found.reason


def test_outside_a_sorted_list_ours_goes_first_and_the_resolution_says_it_chose() -> None:
    log = "Contributors\n============\n\n- Zoe\n- Adam\n"
    found = _resolve("AUTHORS.rst", log, log + "- Mia\n", log + "- Ben\n")
    assert found.text == log + "- Mia\n- Ben\n"
    assert found.confidence == "low" and found.reason.startswith("low confidence")
    assert "ours first: the order was chosen" in found.reason


def test_a_header_both_sides_added_is_held_once() -> None:
    top = "Changes\n=======\n\n"
    ours = CHANGES.replace(top, top + HEADER + "- Fix A.\n\n")
    theirs = CHANGES.replace(top, top + HEADER + "- Fix B.\n\n")
    found = _resolve("CHANGES.rst", CHANGES, ours, theirs)
    assert found.text == CHANGES.replace(top, top + HEADER + "- Fix A.\n- Fix B.\n\n")
    assert found.text.count("Version 2.9") == 1


def test_an_author_both_sides_added_is_listed_once() -> None:
    log = "Contributors\n============\n\n- Zoe\n- Adam\n"
    found = _resolve("AUTHORS.rst", log, log + "- Dave\n- Erin\n", log + "- Erin\n- Fay\n")
    assert found.text == log + "- Dave\n- Erin\n- Fay\n"


def test_both_only_reformatted_keeps_the_side_without_trailing_spaces() -> None:
    base = "Intro\n\nSome  text   here.\n\nEnd\n"
    found = _resolve(
        "README.rst",
        base,
        base.replace("Some  text   here.", "Some text here. "),
        base.replace("Some  text   here.", "Some text  here."),
    )
    assert found.text == base.replace("Some  text   here.", "Some text  here.")


def test_an_import_union_puts_no_blank_line_inside_ours_group() -> None:
    ours, base, theirs = ["import a\n", "import b\n"], ["import a\n"], ["import a\n", "\n", "import c\n"]
    assert import_union(ours, base, theirs, python=True) == ["import a\n", "import b\n", "import c\n"]
    with_tail = ["from a import x\n", "from c import z\n", "\n"]
    merged = import_union(["from a import x\n", "from b import y\n"], ["from a import x\n"], with_tail, python=True)
    assert merged == ["from a import x\n", "from b import y\n", "from c import z\n"]


@pytest.fixture
def box(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Sandbox:
    return sandbox(tmp_path, monkeypatch)


def _dated(box: Sandbox, when: str, *args: str) -> str:
    env = {**os.environ, "GIT_COMMITTER_DATE": when, "GIT_AUTHOR_DATE": when}
    return git(box.root, *args, env=env)


def _commit(box: Sandbox, files: dict[str, str], parent: str, when: str) -> str:
    tree = git(box.root, "rev-parse", box.commit(files, parent=parent) + "^{tree}")
    return _dated(box, when, "commit-tree", tree, "-p", parent, "-m", "change")


def _merge(box: Sandbox, ours: str, theirs: str, **kwargs: object) -> tuple[str, str, list[Resolution]]:
    assert box.repo is not None
    out = asyncio.run(merge_commits(box.repo, ours, theirs, message="merge\n", **kwargs))  # type: ignore[arg-type]
    assert out.commit is not None
    return (
        box.show(out.commit, "AUTHORS.rst") + "\n",
        git(box.root, "log", "-1", "--format=%B", out.commit),
        out.resolutions,
    )


LOG = "Contributors (chronological)\n============================\n\n- Zoe\n- Adam\n"


def test_a_chosen_order_is_marked_in_the_merge_commit_message(box: Sandbox) -> None:
    base = box.start({"AUTHORS.rst": LOG})
    ours = _commit(box, {"AUTHORS.rst": LOG + "- Getka\n"}, base, "2020-01-03T10:00:00")
    theirs = _commit(box, {"AUTHORS.rst": LOG + "- Reskov\n"}, base, "2020-01-05T10:00:00")
    text, message, (res,) = _merge(box, ours, theirs, resolvers=default_resolvers())
    assert text == LOG + "- Getka\n- Reskov\n"
    assert res.confidence == "low" and "ours first: the order was chosen" in res.reason
    assert "Resolutions of low confidence" in message and f"- AUTHORS.rst: {res.reason}" in message


class _Model:
    """The LLM rung, scripted: answers `text` for every file (None: gives up)."""

    rung: Rung = "llm"

    def __init__(self, text: str | None) -> None:
        self.text, self.calls = text, 0

    async def resolve(self, conflict: FileConflict, context: MergeContext) -> Resolution | None:
        self.calls += 1
        return None if self.text is None else Resolution(conflict.path, self.text, "llm", "model")


@pytest.mark.parametrize("answer", [LOG + "- Two\n- One\n", None])
def test_a_low_confidence_resolution_can_go_to_the_llm_rung_first(box: Sandbox, answer: str | None) -> None:
    base = box.start({"AUTHORS.rst": LOG})
    ours = _commit(box, {"AUTHORS.rst": LOG + "- One\n"}, base, "2021-05-01T10:00:00")
    theirs = _commit(box, {"AUTHORS.rst": LOG + "- Two\n"}, base, "2021-06-01T10:00:00")
    model = _Model(answer)
    text, _, (res,) = _merge(box, ours, theirs, resolvers=[DeterministicResolver(defer_low=True), model])
    assert model.calls == 1
    assert (text, res.rung) == ((answer, "llm") if answer else (LOG + "- One\n- Two\n", "deterministic"))


def test_the_setting_makes_the_ladder_defer_low_confidence_resolutions(tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "events.db")
    on = resolvers_for(Settings(low_confidence_to_llm=True), True, RunLog(store, "r1"), print)
    off = resolvers_for(Settings(), True, RunLog(store, "r1"), print)
    assert [getattr(r, "defer_low", None) for r in (on[0], off[0])] == [True, False]


def test_a_changelog_entry_both_sides_added_elsewhere_is_kept_whole() -> None:
    base = "Changes\n=======\n\n-   Old fix.\n"
    shared = "-   ``Request.host`` validates the\n    characters of the value. :pr:`3113`\n"
    other = "-   ``Request.host`` validates the\n    port as well. :pr:`3114`\n"
    ours = base + shared + "-   Fix multipart parsing. :issue:`3088`\n"
    theirs = base + other + shared
    found = _resolve("CHANGES.rst", base, ours, theirs)
    assert found.text == ours + other + shared
