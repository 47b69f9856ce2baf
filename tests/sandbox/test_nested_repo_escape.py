"""A scripted agent in a real parallel run plants a repository of its own in its worktree, armed to run a command
on the host when plait's git looks inside it, and a conftest.py that tries to get out when the gate runs the tests.

Nothing planted runs on the host: not at the checkpoints, the commit, the merge queue, the gate or the apply. The
agent is told its nested repository is not committed, the gate runs the agent's tests confined and they pass, and
the work (without the nested repository) reaches the user's branch.
"""

from __future__ import annotations

import asyncio
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest
from sandbox_box import FAKE_KEY, SSH_MARKER, found

from plait.cli._starting import sandboxed_runners
from plait.events.runlog import RunLog
from plait.events.store import SQLiteEventStore
from plait.events.types import GateChecked, ToolReturned
from plait.models import ScriptedModel
from plait.reconcile.apply import apply_commit
from plait.run.base import RunBase
from plait.run.orchestrate import Orchestration, orchestrate
from plait.run.parallel import ParallelOutcome
from plait.sandbox_settings import Limits, SandboxSettings
from plait.settings import Settings
from plait.workspace import Repo

PLAN = """\
mode: parallel
tasks:
  - id: alpha
    title: Add mul
    instructions: Add mul to calc.py, with its tests.
    writes: [calc.py, conftest.py, test_mul.py]
  - id: beta
    title: Write notes
    instructions: Write notes.md.
    writes: [notes.md]
"""

CONFTEST = """\
import os, pathlib
got = ["ran"]
for target in {targets!r}:
    try:
        pathlib.Path(target).write_text("pwned")
        got.append("wrote " + target)
    except OSError:
        pass
try:
    got.append("ssh " + (pathlib.Path.home() / ".ssh" / "id_ed25519").read_text())
except OSError:
    pass
got.append("env " + os.environ.get("FAKE_SERVICE_API_KEY", ""))
print("conftest: " + " | ".join(got))
"""


def _plant(marks: Path) -> str:
    """The agent's command: a repository in sub/ with a commit (past the policy by an alias), then armed."""

    def touch(name: str) -> str:
        return shlex.quote(f"touch {marks / name}; cat")

    return " && ".join(
        [
            "git init -q sub",
            "cd sub",
            "echo hello > f.txt",
            "git -c alias.a=add a -A",
            "git -c alias.ci=commit -c user.name=a -c user.email=a@a ci -q -m nested",
            f"git config filter.x.clean {touch('filter-clean')}",
            f"git config filter.x.smudge {touch('filter-smudge')}",
            f"git config diff.x.textconv {touch('textconv')}",
            f"git config diff.external {touch('diff-external')}",
            f"git config core.fsmonitor {touch('fsmonitor')}",
            "printf '* filter=x diff=x merge=x\\n' > .gitattributes",
            "mkdir -p .git/hooks",
            f"printf '#!/bin/sh\\ntouch {marks / 'hook'}\\n' > .git/hooks/post-index-change",
            "chmod +x .git/hooks/post-index-change",
            "echo HELLO > f.txt",
            "cd ..",
            "printf '* filter=x diff=x merge=x\\n' > .gitattributes",
        ]
    )


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def _model(marks: Path, targets: list[str]) -> ScriptedModel:
    alpha = [
        _call("run", command=_plant(marks)),
        {
            "expect": "sub/ is a git repository",
            **_call("write_file", path="conftest.py", content=CONFTEST.format(targets=targets)),
        },
        _call(
            "write_file",
            path="test_mul.py",
            content="from calc import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n",
        ),
        _call(
            "edit_file",
            path="calc.py",
            old="    return a + b\n",
            new="    return a + b\n\n\ndef mul(a, b):\n    return a * b\n",
        ),
        _call("finish", summary="mul added"),
    ]
    beta = [_call("write_file", path="notes.md", content="notes\n"), _call("finish", summary="notes written")]
    return ScriptedModel(
        conversations=[
            {"name": "alpha", "match": "Your task is `alpha`", "turns": alpha},
            {"name": "beta", "match": "Your task is `beta`", "turns": beta},
        ]
    )


@pytest.mark.parametrize("layer", [n for n in ("bwrap", "landlock") if n in found().usable()] or ["none"])
def test_a_planted_nested_repository_and_conftest_run_nothing_on_the_host(
    repo: Repo, home: Path, tmp_path: Path, layer: str
) -> None:
    if layer == "none":
        pytest.skip("no OS sandbox works here")
    marks = tmp_path / "marks"
    marks.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    targets = [str(outside / "pwned.txt"), str(repo.root / "PWNED"), str(repo.common_dir / "hooks" / "pre-commit")]
    plan = tmp_path / "plan.yaml"
    plan.write_text(PLAN)
    store = SQLiteEventStore(tmp_path / "events.db")
    settings = Settings(
        verify_command=f"{sys.executable} -m pytest -q -s -p no:cacheprovider",
        sandbox=SandboxSettings(layer=layer, limits=Limits(processes=64, cpu_seconds=60)),
    )
    model = _model(marks, targets)
    work = Orchestration(
        repo=repo,
        task="Add mul, and write notes.",
        settings=settings,
        model=model,
        log=RunLog(store, "r1"),
        base=RunBase(repo.head(), "main"),
        runners=sandboxed_runners(settings, repo, quiet=True)(RunLog(store, "r1")),
        plan_file=plan,
        use_llm_resolver=False,
    )
    outcome = asyncio.run(orchestrate(work))

    assert isinstance(outcome, ParallelOutcome) and outcome.status == "done", outcome.results
    model.assert_complete()
    assert sorted(p.name for p in marks.iterdir()) == []
    assert [t for t in targets if Path(t).exists()] == []
    told = [e.output for e in store.events("r1", agent="alpha") if isinstance(e, ToolReturned)]
    assert any("sub/ is a git repository" in o for o in told)
    gate = [e.output for e in store.events("r1") if isinstance(e, GateChecked) and e.stage == "verify"]
    assert any("conftest: ran | env \n" in o and "2 passed" in o for o in gate), gate
    assert not any(SSH_MARKER in o or FAKE_KEY in o for o in gate)

    files = repo.git("ls-tree", "-r", "--name-only", outcome.commit).split()
    assert {"calc.py", "conftest.py", "test_mul.py", "notes.md", ".gitattributes"} <= set(files)
    assert not [f for f in files if f.startswith("sub")]
    assert "160000" not in repo.git("ls-tree", "-r", outcome.commit)

    applied = asyncio.run(apply_commit(repo, outcome.commit, what="run r1"))
    assert applied.mode == "fast-forward" and "def mul" in (repo.root / "calc.py").read_text()
    assert sorted(p.name for p in marks.iterdir()) == []
