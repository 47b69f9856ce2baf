"""What the LLM rung is told about a real merge: the hunk in its function, the commits behind it, related files
in one call, and the places git merged cleanly that may need a change. Real git; only the model is scripted."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest
from gitrepo import Sandbox, sandbox

from plait.messages import ModelRequest, ModelResponse, ToolCall, UserMessage
from plait.models import FunctionModel
from plait.reconcile.ladder import default_resolvers, merge_commits
from plait.reconcile.llm_resolver import LLMResolver
from plait.reconcile.types import MergeOutcome

FILLER = "".join(
    f"\n\ndef helper_{i}(value):\n    '''Helper number {i}.'''\n    return value + {i}\n" for i in range(300)
)
NAMES = "abcdef"
BODY = "".join(f"    {n} = items[{i}]\n" for i, n in enumerate(NAMES))
TOTAL = f'''

def total(items):
    """The sum of the items."""
    count = len(items)
{BODY}    return a + b + c + d + e + f, count
'''
TAIL = "".join(f"\n\ndef tail_{i}(value):\n    return value - {i}\n" for i in range(100))
HEAD = "import decimal\nimport math\nfrom collections import OrderedDict\n"


@pytest.fixture
def box(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Sandbox:
    return sandbox(tmp_path, monkeypatch)


def _answering(*replies: dict[str, object]) -> tuple[FunctionModel, list[ModelRequest]]:
    seen: list[ModelRequest] = []

    def answer(request: ModelRequest) -> ModelResponse:
        seen.append(request)
        reply = replies[len(seen) - 1]
        return ModelResponse(tool_calls=(ToolCall(id=f"c{len(seen)}", name="resolve_conflicts", arguments=reply),))

    return FunctionModel(answer), seen


def _merge(box: Sandbox, ours: str, theirs: str, model: FunctionModel) -> MergeOutcome:
    assert box.repo is not None
    resolvers = [*default_resolvers(), LLMResolver(model)]
    return asyncio.run(merge_commits(box.repo, ours, theirs, resolvers=resolvers))


def _prompt(request: ModelRequest) -> str:
    first = request.messages[0]
    assert isinstance(first, UserMessage)
    return first.text


def test_a_small_conflict_in_a_large_file_sends_its_function_imports_side_diffs_and_commits(box: Sandbox) -> None:
    big = HEAD + FILLER + TOTAL + TAIL
    base = box.start({"shop.py": big, "CHANGES.txt": "changes\n"})
    note = box.commit({"CHANGES.txt": "changes\n- clamp\n"}, "Update changelog", parent=base)
    clamp = big.replace(BODY, BODY.replace("]\n", "].price\n"))
    body = "Clamp negative totals\n\nRefunds made totals negative.\n```python\ntotal([])\n\nSigned-off-by: A <a@b.c>\n"
    ours = box.commit({"shop.py": clamp}, body, parent=note)
    rounded = big.replace('    """The sum of the items."""', '    """The sum of the items, in cents."""')
    rounded = rounded.replace(BODY, BODY.replace("= items", "= int(items").replace("]\n", "])\n"))
    theirs = box.commit({"shop.py": rounded}, "Round totals to cents", parent=base)
    block = BODY.replace("= items", "= int(items").replace("]\n", "].price)\n")
    assert len(BODY.splitlines()) == 6
    model, seen = _answering({"hunks": [{"id": "H1", "text": block}]})

    outcome = _merge(box, ours, theirs, model)

    assert outcome.commit is not None
    merged = box.show(outcome.commit, "shop.py")
    assert merged + "\n" == rounded.replace(BODY.replace("= items", "= int(items").replace("]\n", "])\n"), block)
    (request,) = seen
    prompt = _prompt(request)
    assert len(prompt) < len(big) / 15 and request.tool_choice == "resolve_conflicts"
    assert (
        "### H1, in `def total`" in prompt
        and "    count = len(items)\n" in prompt
        and "return a + b + c + d + e + f, count" in prompt
    )
    assert "import decimal\nimport math\nfrom collections import OrderedDict\n" in prompt
    assert '+    """The sum of the items, in cents."""' in prompt  # theirs' clean change next to the conflict
    why_ours = prompt[prompt.index("Why ours changed") : prompt.index("Why theirs changed")]
    assert "Clamp negative totals — Refunds made totals negative." in why_ours and "changelog" not in prompt
    assert "Round totals to cents" in prompt and "Signed-off-by" not in prompt
    assert len(re.findall(r"^`{3,}", prompt, re.MULTILINE)) % 2 == 0  # every fence is closed
    assert "helper_150" not in prompt and "tail_50" not in prompt


def test_a_module_and_its_tests_go_in_one_call(box: Sandbox) -> None:
    calc = "def add(a, b):\n    return a + b\n"
    test = "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
    base = box.start({"calc.py": calc, "test_calc.py": test})
    ours = box.commit(
        {"calc.py": calc.replace("a + b", "int(a) + int(b)"), "test_calc.py": test.replace("1, 2", "'1', 2")},
        "Accept strings",
        parent=base,
    )
    theirs = box.commit(
        {"calc.py": calc.replace("a + b", "float(a) + b"), "test_calc.py": test.replace("== 3", "== 3.0")},
        "Return floats",
        parent=base,
    )
    model, seen = _answering(
        {
            "hunks": [
                {"id": "H1", "text": "    return float(int(a) + int(b))\n"},
                {"id": "H2", "text": "    assert add('1', 2) == 3.0\n"},
            ]
        }
    )

    outcome = _merge(box, ours, theirs, model)

    assert outcome.commit is not None and len(seen) == 1
    prompt = _prompt(seen[0])
    assert "## `calc.py`" in prompt and "## `test_calc.py`" in prompt and "each of H1, H2." in prompt
    assert box.show(outcome.commit, "calc.py") == "def add(a, b):\n    return float(int(a) + int(b))"
    assert "assert add('1', 2) == 3.0" in box.show(outcome.commit, "test_calc.py")
    assert {r.path: r.rung for r in outcome.resolutions} == {"calc.py": "llm", "test_calc.py": "llm"}


def test_a_use_git_merged_cleanly_of_a_renamed_name_is_shown_and_can_be_edited(box: Sandbox) -> None:
    app = (
        "import util\n\n\ndef run():\n    return util.helper()\n\n\n"
        "def other():\n    x = compute_left()\n    y = 1\n    z = 2\n    return x + y + z\n"
    )
    base = box.start({"util.py": "def helper():\n    return 1\n", "app.py": app})
    renamed = app.replace("util.helper()", "util.assist()").replace("compute_left()", "compute_middle()")
    ours = box.commit({"util.py": "def assist():\n    return 1\n", "app.py": renamed}, "Rename helper", parent=base)
    extra = app.replace("compute_left()", "compute_right()") + "\n\ndef extra():\n    return util.helper() + 1\n"
    theirs = box.commit({"app.py": extra}, "Add extra", parent=base)
    fix = {"path": "app.py", "find": "    return util.helper() + 1\n", "replace": "    return util.assist() + 1\n"}
    model, seen = _answering({"hunks": [{"id": "H1", "text": "    x = compute_middle()\n"}], "edits": [fix]})

    outcome = _merge(box, ours, theirs, model)

    prompt = _prompt(seen[0])
    assert "## Places that may need a change" in prompt
    assert "uses util.helper, which util no longer defines" in prompt and "return util.helper() + 1" in prompt
    assert outcome.commit is not None
    merged = box.show(outcome.commit, "app.py")
    assert "return util.assist() + 1" in merged and "util.helper" not in merged and "compute_middle()" in merged


def test_where_code_one_side_moved_to_another_file_went_is_said(box: Sandbox) -> None:
    first, target, last = (
        "def first():\n    return 1\n",
        "def target(x):\n    return x + 1\n",
        "def last():\n    return 3\n",
    )
    base = box.start({"mod.py": f"{first}\n\n{target}\n\n{last}"})
    moved = {"mod.py": f"{first}\n\n{last}", "other.py": f"import os\n\n\n{target}"}
    ours = box.commit(moved, "Move target to other.py", parent=base)
    theirs = box.commit({"mod.py": f"{first}\n\n{target.replace('+ 1', '+ 2')}\n\n{last}"}, "Add two", parent=base)
    model, seen = _answering({"hunks": [{"id": "H1", "text": ""}]})

    outcome = _merge(box, ours, theirs, model)

    prompt = _prompt(seen[0])
    assert "ours removed `target` from H1 while theirs changed it; ours defines it at other.py:4." in prompt
    assert outcome.commit is not None and box.show(outcome.commit, "mod.py") + "\n" == f"{first}\n\n{last}"


def test_a_later_call_of_the_same_merge_is_told_how_the_earlier_blocks_were_resolved(box: Sandbox) -> None:
    base = box.start({"a.cfg": "[tool]\npin = 1\n", "b.cfg": "[other]\npin = 1\n"})
    ours = box.commit({"a.cfg": "[tool]\npin = 2\n", "b.cfg": "[other]\npin = 2\n"}, "Pin 2", parent=base)
    theirs = box.commit({"a.cfg": "[tool]\npin = 3\n", "b.cfg": "[other]\npin = 3\n"}, "Pin 3", parent=base)
    seen: list[ModelRequest] = []

    def answer(request: ModelRequest) -> ModelResponse:
        seen.append(request)
        reply = {"hunks": [{"id": "H1", "text": "pin = 3\n"}]}
        return ModelResponse(tool_calls=(ToolCall(id=f"c{len(seen)}", name="resolve_conflicts", arguments=reply),))

    outcome = _merge(box, ours, theirs, FunctionModel(answer))

    assert outcome.commit is not None and len(seen) == 2
    first, second = _prompt(seen[0]), _prompt(seen[1])
    assert "## `a.cfg`" in first and "Resolved earlier" not in first
    assert (
        "## `b.cfg`" in second and "## Resolved earlier in this merge" in second and "- `a.cfg` H1: pin = 3" in second
    )
