"""The merge ladder on real branches of a real repository: git first, then the rungs, and never the user's checkout."""

from __future__ import annotations

import ast
import asyncio
from pathlib import Path

import pytest
from gitrepo import Sandbox, git, sandbox

from plait.reconcile.ladder import default_resolvers, merge_commits, merge_commits_sync
from plait.reconcile.types import FileConflict, MergeContext, MergeOutcome, Resolution, Resolver, Rung
from plait.workspace import Repo

CALC = """def add(a, b):
    return a + b


def sub(a, b):
    return a - b
"""


@pytest.fixture
def box(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Sandbox:
    return sandbox(tmp_path, monkeypatch)


def _repo(box: Sandbox) -> Repo:
    assert box.repo is not None
    return box.repo


def _merge(box: Sandbox, ours: str, theirs: str, resolvers: list[Resolver] | None = None) -> MergeOutcome:
    return merge_commits_sync(_repo(box), ours, theirs, resolvers=resolvers)


def _watch(box: Sandbox) -> tuple[object, ...]:
    index = box.root / ".git" / "index"
    return box.state(), git(box.root, "for-each-ref"), index.read_bytes(), (box.root / "calc.py").read_text()


def test_a_clean_merge_is_a_two_parent_commit_with_no_rung(box: Sandbox) -> None:
    base = box.start({"calc.py": CALC, "a.txt": "a\n"})
    ours = box.branch("ours", {"a.txt": "a\nours\n"}, parent=base)
    theirs = box.branch("theirs", {"b.txt": "theirs\n"}, parent=base)

    outcome = _merge(box, ours, theirs)

    assert outcome.clean and outcome.commit and outcome.resolutions == [] and outcome.unresolved == []
    assert git(box.root, "rev-parse", f"{outcome.commit}^1", f"{outcome.commit}^2").split() == [ours, theirs]
    assert box.show(outcome.commit, "b.txt") == "theirs" and outcome.detail == "git merged it cleanly"


def test_different_functions_of_one_file_are_resolved_by_the_structured_rung(box: Sandbox) -> None:
    base = box.start({"calc.py": CALC})
    ours_calc = CALC.replace("return a - b", "return int(a) - int(b)") + "\n\ndef mul(a, b):\n    return a * b\n"
    theirs_calc = CALC.replace("return a + b", "return int(a) + int(b)") + "\n\ndef div(a, b):\n    return a / b\n"
    ours = box.branch("ours", {"calc.py": ours_calc}, parent=base)
    theirs = box.branch("theirs", {"calc.py": theirs_calc}, parent=base)
    before = _watch(box)

    outcome = _merge(box, ours, theirs)

    assert outcome.commit and not outcome.clean and outcome.unresolved == []
    (res,) = outcome.resolutions
    assert res.path == "calc.py" and res.rung == "structured"
    assert res.reason == "entity merge: ours changed sub, mul; theirs changed add, div"
    merged = box.show(outcome.commit, "calc.py")
    assert "int(a) + int(b)" in merged and "int(a) - int(b)" in merged
    assert merged.index("def mul") < merged.index("def div")
    ast.parse(merged)
    assert _watch(box) == before


def test_reformat_imports_and_changelog_are_deterministic(box: Sandbox) -> None:
    changes = "Changes\n=======\n\n- one\n"
    head = "import os\nimport sys\n\n\n"
    base = box.start({"calc.py": head + CALC, "CHANGES.rst": changes})
    ours_calc = "import os\nimport json\nimport sys\n\n\n" + CALC.replace("a + b", "a+b")
    theirs_calc = "import os\nimport re\nimport sys\n\n\n" + CALC.replace("a + b", "b + a")
    ours = box.branch("ours", {"calc.py": ours_calc, "CHANGES.rst": changes + "- ours\n"}, parent=base)
    theirs = box.branch("theirs", {"calc.py": theirs_calc, "CHANGES.rst": changes + "- theirs\n"}, parent=base)

    outcome = _merge(box, ours, theirs)

    assert outcome.commit and {r.rung for r in outcome.resolutions} == {"deterministic"}
    assert box.show(outcome.commit, "CHANGES.rst").endswith("- one\n- ours\n- theirs")
    merged = box.show(outcome.commit, "calc.py")
    assert merged.startswith("import os\nimport json\nimport re\nimport sys\n") and "return b + a" in merged


def test_a_union_attribute_is_honoured_and_recorded(box: Sandbox) -> None:
    base = box.start({".gitattributes": "*.dat merge=union\n", "list.dat": "alpha\nbeta\n"})
    ours = box.branch("ours", {"list.dat": "alpha\nbeta-ours\n"}, parent=base)
    theirs = box.branch("theirs", {"list.dat": "alpha\nbeta-theirs\n"}, parent=base)

    outcome = _merge(box, ours, theirs)

    assert outcome.commit and box.show(outcome.commit, "list.dat") == "alpha\nbeta-ours\nbeta-theirs"
    (res,) = outcome.resolutions
    assert res.rung == "deterministic" and "merge=union" in res.reason


def test_a_no_merge_attribute_keeps_a_clean_text_merge_from_happening(box: Sandbox) -> None:
    base = box.start({".gitattributes": "lock.txt -merge\n", "lock.txt": "one\ntwo\nthree\nfour\n"})
    ours = box.branch("ours", {"lock.txt": "ONE\ntwo\nthree\nfour\n"}, parent=base)
    theirs = box.branch("theirs", {"lock.txt": "one\ntwo\nthree\nFOUR\n"}, parent=base)

    outcome = _merge(box, ours, theirs)

    assert outcome.commit is None and not outcome.clean
    (held,) = outcome.unresolved
    assert held.path == "lock.txt" and held.merged == "ONE\ntwo\nthree\nfour\n"


def test_a_genuine_conflict_in_one_function_stays_unresolved(box: Sandbox) -> None:
    base = box.start({"calc.py": CALC})
    ours = box.branch("ours", {"calc.py": CALC.replace("return a + b", "return a + b + 0")}, parent=base)
    theirs = box.branch("theirs", {"calc.py": CALC.replace("return a + b", "return b + a")}, parent=base)
    before = _watch(box)

    outcome = _merge(box, ours, theirs)

    assert outcome.commit is None and outcome.resolutions == []
    (left,) = outcome.unresolved
    assert left.path == "calc.py" and "<<<<<<< ours" in left.merged and "calc.py" in outcome.detail
    assert _watch(box) == before


class _Fixed:
    """A rung that always answers with the same text."""

    def __init__(self, rung: Rung, text: str) -> None:
        self.rung: Rung = rung
        self.text = text
        self.seen: list[FileConflict] = []

    async def resolve(self, conflict: FileConflict, context: MergeContext) -> Resolution | None:
        self.seen.append(conflict)
        return Resolution(conflict.path, self.text, self.rung, "fixed answer")


def test_rungs_are_tried_in_order_and_bad_answers_are_refused(box: Sandbox) -> None:
    base = box.start({"calc.py": CALC})
    ours = box.branch("ours", {"calc.py": CALC.replace("return a + b", "return a + b + 0")}, parent=base)
    theirs = box.branch("theirs", {"calc.py": CALC.replace("return a + b", "return b + a")}, parent=base)
    markers = _Fixed("llm", "<<<<<<< ours\nx = 1\n=======\nx = 2\n>>>>>>> theirs\n")
    broken = _Fixed("llm", "def add(:\n")
    good = _Fixed("redo", CALC.replace("return a + b", "return b + a + 0"))
    never = _Fixed("llm", "unused\n")

    outcome = _merge(box, ours, theirs, [*default_resolvers(), markers, broken, good, never])

    assert outcome.commit and [r.rung for r in outcome.resolutions] == ["redo"] and never.seen == []
    assert "conflict markers" in outcome.detail and "does not parse" in outcome.detail
    assert box.show(outcome.commit, "calc.py").count("return b + a + 0") == 1


def test_a_deletion_against_a_reformat_removes_the_file(box: Sandbox) -> None:
    base = box.start({"calc.py": CALC, "old.py": CALC})
    ours = box.branch("ours", {"old.py": None}, parent=base)
    theirs = box.branch("theirs", {"old.py": CALC.replace("a + b", "a+b")}, parent=base)

    outcome = _merge(box, ours, theirs)

    assert outcome.commit and outcome.resolutions[0].text is None
    assert git(box.root, "ls-tree", "--name-only", outcome.commit) == "calc.py"


def test_merging_what_is_already_in_returns_ours(box: Sandbox) -> None:
    base = box.start({"calc.py": CALC})
    ours = box.branch("ours", {"a.txt": "a\n"}, parent=base)

    outcome = asyncio.run(merge_commits(_repo(box), "ours", base, resolvers=default_resolvers()))

    assert outcome.commit == ours and outcome.clean and outcome.detail == "already merged"
