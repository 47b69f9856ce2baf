"""`plait pr`: a real demo run pushed to a local bare remote, the pull request opened by a stand-in `gh` (or, with
no `gh`, the compare page printed), the body written from the run's plan, summaries, merges and gate."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from cli_support import Plait, git

from plait.events.store import SQLiteEventStore
from plait.events.types import Decision, Event, GateChecked, MergeStep, TaskFinished

_GH = """#!/bin/sh
# stands in for gh: records its arguments and the body it was given, then answers like gh
: > "$GH_RECORD"
for arg in "$@"; do printf '%s\\n' "$arg" >> "$GH_RECORD"; done
while [ $# -gt 0 ]; do
  if [ "$1" = --body-file ]; then cp "$2" "$GH_RECORD.body"; fi
  shift
done
if [ -n "$GH_FAIL" ]; then echo "some progress" >&2; echo "$GH_FAIL" >&2; exit 1; fi
echo "Creating pull request for plait branch"
echo "https://github.com/o/r/pull/7"
"""


@pytest.fixture
def project(demo: tuple[Path, str]) -> Path:
    """A copy of the real demo run (the conftest's, made once) for this test alone."""
    return demo[0]


@pytest.fixture
def bare(tmp_path: Path) -> Path:
    path = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(path)], check=True)
    return path


def _events(project: Path) -> tuple[str, list[Event]]:
    store = SQLiteEventStore(project / ".git" / "plait" / "events.db")
    run_id = store.run_ids()[-1]
    return run_id, store.events(run_id)


def _gh_on_path(tmp_path: Path, env: dict[str, str]) -> dict[str, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "gh").write_text(_GH)
    (bin_dir / "gh").chmod(0o755)
    return {"PATH": f"{bin_dir}{os.pathsep}{env['PATH']}", "GH_RECORD": str(tmp_path / "gh.txt")}


def _no_gh(tmp_path: Path, env: dict[str, str]) -> dict[str, str]:
    """PATH without any `gh`, with git kept."""
    git_only = tmp_path / "git-only"
    git_only.mkdir()
    (git_only / "git").symlink_to(shutil.which("git") or "/usr/bin/git")
    kept = [d for d in env["PATH"].split(os.pathsep) if d and not (Path(d) / "gh").exists()]
    return {"PATH": os.pathsep.join([str(git_only), *kept])}


def test_pr_pushes_the_result_and_opens_a_pull_request_with_gh(
    plait: Plait, project: Path, bare: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    git(project, "remote", "add", "origin", str(bare))
    run_id, events = _events(project)
    result = git(project, "rev-parse", f"plait/{run_id}/integration")
    opened = plait("pr", "last", "--draft", cwd=project, extra_env=_gh_on_path(tmp_path, env))
    assert opened.code == 0, opened.err
    assert git(bare, "rev-parse", f"refs/heads/plait/{run_id}") == result
    assert "pull request: https://github.com/o/r/pull/7" in opened.out
    args = (tmp_path / "gh.txt").read_text().splitlines()
    assert args[:7] == ["pr", "create", "--base", "main", "--head", f"plait/{run_id}", "--title"]
    assert args[7] == "Get tally ready for its 0.4 release" and args[-1] == "--draft"
    assert args[8] == "--body-file"
    body = (tmp_path / "gh.txt.body").read_text()
    summaries = [e.summary.splitlines()[0] for e in events if isinstance(e, TaskFinished) and e.summary]
    assert len(summaries) == 4 and all(line in body for line in summaries)
    resolved = [m for m in events if isinstance(m, MergeStep) and m.outcome == "resolved"]
    assert resolved and all(f"`{path}`: resolved by {m.rung}" in body for m in resolved for path in m.files)
    verify = [g for g in events if isinstance(g, GateChecked) and g.stage == "verify"][-1]
    assert verify.output.strip().splitlines()[-1] in body
    assert f"`{verify.commit[:10]}` ({', '.join(verify.tasks)}): parse passed · semantic passed · verify passed" in body
    _, after = _events(project)
    logged = [e for e in after if isinstance(e, Decision) and e.topic == "pr"]
    assert len(logged) == 1 and logged[0].data["url"] == "https://github.com/o/r/pull/7"


def test_without_gh_a_squashed_branch_is_pushed_and_the_compare_url_printed(
    plait: Plait, project: Path, bare: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    git(project, "remote", "add", "origin", "https://github.com/o/r.git")
    git(project, "remote", "set-url", "--push", "origin", str(bare))
    git(project, "config", "user.name", "Pat Doe")
    git(project, "config", "user.email", "pat@example.invalid")
    run_id, events = _events(project)
    no_gh = _no_gh(tmp_path, env)
    for name in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL"):  # git's identity is then the repository's user.name
        env.pop(name)
    opened = plait("pr", "last", "--squash", "--json", cwd=project, extra_env=no_gh)
    assert opened.code == 0, opened.err
    data = opened.json()
    branch = f"plait/{run_id}"
    assert data["url"] == f"https://github.com/o/r/compare/main...{branch}" and data["tool"] == ""
    pushed = git(bare, "rev-parse", f"refs/heads/{branch}")
    assert pushed == data["commit"]
    base = git(project, "rev-parse", "main")
    assert git(bare, "rev-parse", f"{branch}^") == base and git(bare, "rev-list", "--count", branch) == "2"
    assert git(bare, "rev-parse", f"{branch}^{{tree}}") == git(
        project, "rev-parse", f"plait/{run_id}/integration^{{tree}}"
    )
    assert git(bare, "log", "-1", "--format=%an <%ae>", branch) == "Pat Doe <pat@example.invalid>"
    message = git(bare, "log", "-1", "--format=%B", branch)
    assert message.startswith("Get tally ready for its 0.4 release\n")
    titles = [e.title for e in events if e.kind == "task_started"]
    assert titles and all(title in message for title in titles)
    again = plait("pr", "last", "--squash", cwd=project, extra_env=no_gh)
    assert again.code == 0, again.err  # the same run squashes to the same commit: pushing it again changes nothing
    assert f"open the pull request: https://github.com/o/r/compare/main...{branch}" in again.out


def test_dry_run_prints_the_body_and_commands_and_pushes_nothing(
    plait: Plait, project: Path, bare: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    git(project, "remote", "add", "origin", str(bare))
    run_id, _ = _events(project)
    shown = plait("pr", run_id[:12], "--dry-run", "--branch", "mine", cwd=project, extra_env=_gh_on_path(tmp_path, env))
    assert shown.code == 0, shown.err
    assert "## Merges" in shown.out and "## Gate" in shown.out
    result = git(project, "rev-parse", f"plait/{run_id}/integration")
    assert f"git push --porcelain origin {result}:refs/heads/mine" in shown.out
    assert "gh pr create --base main --head mine" in shown.out
    assert git(bare, "for-each-ref") == "" and not (tmp_path / "gh.txt").exists()


def test_errors_are_one_line(plait: Plait, project: Path, bare: Path, tmp_path: Path, env: dict[str, str]) -> None:
    def one_line(args: list[str], code: int, says: str, extra: dict[str, str] | None = None) -> None:
        failed = plait("pr", *args, cwd=project, extra_env=extra)
        assert failed.code == code and says in failed.err, failed.err
        assert len(failed.err.strip().splitlines()) == 1 and "Traceback" not in failed.err

    no_gh = _no_gh(tmp_path, env)
    one_line(["last"], 3, "no remote to push to: add one (`git remote add origin URL`)", no_gh)
    git(project, "remote", "add", "origin", str(bare))
    one_line(["last", "--remote", "upstream"], 2, "no remote 'upstream' in this repository")
    run_id, _ = _events(project)
    assert plait("pr", "last", "--squash", cwd=project, extra_env=no_gh).code == 0
    one_line(["last"], 3, f"push of plait/{run_id} to origin rejected (non-fast-forward)", no_gh)
    gh = {
        **_gh_on_path(tmp_path, env),
        "GH_FAIL": "GraphQL: Resource not accessible by integration (createPullRequest)",
    }
    one_line(["last", "--branch", "other"], 3, "gh pr create failed: GraphQL: Resource not accessible", gh)
    assert git(bare, "rev-parse", "refs/heads/other") == git(project, "rev-parse", f"plait/{run_id}/integration")
    git(project, "branch", "-D", f"plait/{run_id}/integration")
    one_line([run_id], 3, f"run {run_id} has no verified result to open a pull request for", no_gh)
    assert json.loads(plait("runs", "--json", cwd=project).out)[-1]["run_id"] == run_id
