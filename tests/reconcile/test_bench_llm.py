"""The LLM track of `plait bench reconcile`: merges left by the model-free rungs, judged against the commit."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from gitrepo import Sandbox, git, sandbox

from plait.models import ScriptedModel
from plait.reconcile.bench import historical_merges, scratch_clone
from plait.reconcile.bench.track_llm import TrackLLM, candidates, run_llm_case, verdict
from plait.reconcile.llm_resolver import LLMResolver
from plait.reconcile.types import FileConflict

FILLER = "".join(f"\n\ndef f{i}(x):\n    return x + {i}\n" for i in range(60))
CALC = "def add(a, b):\n    return a + b\n" + FILLER


@pytest.fixture
def box(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Sandbox:
    return sandbox(tmp_path, monkeypatch)


def _merge(box: Sandbox, main: str, ours: str, theirs: str, result: str) -> str:
    left = box.commit({"calc.py": ours}, "Make add exact", parent=main)
    right = box.commit({"calc.py": theirs}, "Make add commute", parent=main)
    tree = git(box.root, "rev-parse", box.commit({"calc.py": result}, "tree", parent=left) + "^{tree}")
    merge = git(box.root, "commit-tree", tree, "-p", left, "-p", right, "-m", "merge")
    git(box.root, "update-ref", "refs/heads/main", merge)
    return merge


def test_the_llm_track_judges_each_file_and_counts_both_prompts(box: Sandbox) -> None:
    main = box.start({"calc.py": CALC})
    ours, theirs = CALC.replace("a + b", "int(a) + int(b)"), CALC.replace("a + b", "b + a")
    _merge(box, main, ours, theirs, CALC.replace("a + b", "int(b) + int(a)"))
    model = ScriptedModel(
        [
            {
                "tool_calls": [
                    {
                        "name": "resolve_conflicts",
                        "arguments": {"hunks": [{"id": "H1", "text": "    return int(b) + int(a)\n"}]},
                    }
                ]
            }
        ]
    )
    with scratch_clone(box.root) as repo:
        found = asyncio.run(candidates(repo, historical_merges(repo), 5, 3))
        assert [[c.path for c in left] for _, left in found] == [["calc.py"]]
        row, left = found[0]
        case = asyncio.run(run_llm_case(repo, row, left, LLMResolver(model)))
    (file,) = case.files
    assert file.verdict == "exact" and file.calls == 1 and 0 < file.tokens * 3 < file.whole_file_tokens
    summary = TrackLLM("calc", [case]).summary()
    assert summary["exact"] == 1 and summary["merges_exact"] == 1 and summary["harmful"] == 0


def test_a_verdict_tells_whitespace_markers_and_a_dropped_side_apart() -> None:
    base = "x = 1\n"
    conflict = FileConflict("a.py", base, "x = 1\ny = 2\n", "x = 1\nz = 3\n")
    assert verdict(conflict, "x = 1\ny = 2\nz = 3\n", "x = 1\ny = 2\nz = 3\n") == "exact"
    assert verdict(conflict, "x = 1\ny = 2\n\nz = 3\n", "x = 1\ny = 2\nz = 3\n") == "whitespace"
    assert verdict(conflict, "x = 1\n<<<<<<< ours\ny = 2\n", "x = 1\ny = 2\nz = 3\n") == "harmful"
    assert verdict(conflict, "x = 1\ny = 2\n", "x = 1\ny = 2\nz = 3\n") == "harmful"  # theirs' z dropped
    assert verdict(conflict, "x = 1\ny = 2\nz = 4\n", "x = 1\ny = 2\nz = 3\n") == "different"
