"""`plait integrate` gives what it gave before it started without typer and ran fewer git processes: on each kind
of integrate (clean, a conflict resolved, one left, the semantic and the parse check rejecting, `--json`, a verify
command that passes and one that fails at the base, no model key), the exit code, what it printed (run ids and
merge commits taken out), the integration branch's tree and the kinds of events logged are those recorded in
`snapshots/integrate_cases.json` from the code before (70e79e1), run both ways: the fast start and typer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_support import Plait, git
from integrate_cases import make_branches, normalized

CASES = {
    "clean": ["hello", "bye", "--no-llm", "--no-verify"],
    "resolved": ["note-a", "note-b", "--no-llm", "--no-verify"],
    "unresolved": ["hi", "hey", "--no-llm", "--no-verify"],
    "semantic": ["drop-part", "use-part", "--no-llm", "--no-verify"],
    "parse": ["hello", "bad-syntax", "--no-llm", "--no-verify"],
    "json": ["hello", "hi", "hey", "note-a", "note-b", "--no-llm", "--no-verify", "--json"],
    "verify": ["hello", "bye", "--no-llm", "--verify", "true"],
    "verify fails": ["hello", "--no-llm", "--verify", "false"],
    "no llm key": ["hi", "hey", "--no-verify"],
}
SNAPSHOT = Path(__file__).parent / "snapshots" / "integrate_cases.json"
BEFORE: dict[str, dict[str, Any]] = json.loads(SNAPSHOT.read_text())


def _record(plait: Plait, root: Path, args: list[str], *, fast: bool) -> dict[str, Any]:
    """What `plait integrate ARGS` did: its exit code, output, the integration branch's tree, the events' kinds."""
    done = plait("integrate", *args, cwd=root, fast=fast)
    branch = git(root, "for-each-ref", "--format=%(refname:short)", "refs/heads/plait/").split()[-1]
    shown = plait("show", "last", "--json", cwd=root)
    kinds = [json.loads(line)["kind"] for line in shown.out.splitlines() if line.startswith("{")]
    return {
        "code": done.code,
        "out": normalized(done.out),
        "err": normalized(done.err),
        "tree": git(root, "rev-parse", f"{branch}^{{tree}}"),
        "kinds": kinds,
    }


@pytest.mark.parametrize("fast", [True, False], ids=["fast start", "typer"])
@pytest.mark.parametrize("case", list(CASES))
def test_integrate_does_what_it_did_before(plait: Plait, project: Path, case: str, fast: bool) -> None:
    make_branches(project)
    assert _record(plait, project, CASES[case], fast=fast) == BEFORE[case]
