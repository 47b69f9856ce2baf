"""The git of `plait pr`: which remote and base branch, a squash commit authored as the user, and the push."""

from __future__ import annotations

import os
import re

from plait.errors import EnvironmentProblem, UsageError
from plait.events.runlog import RunLog
from plait.run.results import result_branch
from plait.ui._landing import parse_ident
from plait.workspace import Repo
from plait.workspace.gitcall import first_line, run

__all__ = ["PushRejected", "base_branch", "push", "remote_for", "remote_url", "result_of", "squash"]


class PushRejected(EnvironmentProblem):
    """The remote refused the push, or could not be reached; the message says why."""


def result_of(repo: Repo, log: RunLog) -> tuple[str, str]:
    """(branch, commit) of a run's verified result: its latest integration branch, or a single agent's done branch."""
    branch = result_branch(repo, log, to="open a pull request for")
    return branch, repo.git("rev-parse", "--verify", f"refs/heads/{branch}^{{commit}}").strip()


def base_branch(repo: Repo, base_ref: str, given: str | None) -> str:
    """The branch a pull request goes into: `--base`, else the branch the run started from, else the current one."""
    if given:
        return given
    if base_ref and base_ref != "HEAD" and repo.branch_exists(base_ref.removeprefix("refs/heads/")):
        return base_ref.removeprefix("refs/heads/")
    current = repo.head_ref()
    if current == "HEAD":
        raise UsageError("the run did not start from a branch and HEAD is detached: name the base with --base")
    return current


def _config(repo: Repo, key: str) -> str:
    return repo.git("config", "--get", key, check=False).strip()


def remote_for(repo: Repo, given: str | None, base: str) -> str:
    """`--remote`, else the base branch's upstream remote, else the current branch's, else `origin`."""
    remotes = repo.git("remote", check=False).split()
    if given:
        if given not in remotes:
            raise UsageError(f"no remote '{given}' in this repository: `git remote -v` lists them")
        return given
    for branch in (base, repo.head_ref()):
        upstream = _config(repo, f"branch.{branch}.remote")
        if upstream in remotes:
            return upstream
    if "origin" in remotes:
        return "origin"
    raise EnvironmentProblem("no remote to push to: add one (`git remote add origin URL`) or name one with --remote")


def remote_url(repo: Repo, remote: str) -> str:
    """The remote's URL as configured (a pull request's address is made from it, not from where pushes go)."""
    return _config(repo, f"remote.{remote}.url")


def squash(repo: Repo, *, commit: str, base: str, message: str, when: float) -> str:
    """One commit with `commit`'s tree on top of `base`, authored by the user (git's own identity).

    Both dates are the run's end, so that the same run squashes to the same commit and pushing it again is a no-op.
    """
    ident = parse_ident(repo.git("var", "GIT_AUTHOR_IDENT", check=False))
    if ident is None:
        raise EnvironmentProblem(
            "git does not know who you are: set user.name and user.email (`git config --global user.name ...`)"
        )
    date = f"@{int(when)} +0000"
    env = {"GIT_AUTHOR_NAME": ident.name, "GIT_AUTHOR_EMAIL": ident.email}
    env.update(GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    return repo.git("commit-tree", f"{commit}^{{tree}}", "-p", base, input=message, env=env).strip()


def push_args(remote: str, commit: str, branch: str) -> list[str]:
    return ["push", "--porcelain", remote, f"{commit}:refs/heads/{branch}"]


def push(repo: Repo, remote: str, commit: str, branch: str) -> None:
    """Push `commit` to `branch` of `remote`; a refusal is a `PushRejected` saying why."""
    # The push goes out as the user's own `git push` would: plait's hardened options (no hooks, no pager...) are
    # kept, but the user's credential helpers, ssh and its agent, and git's prompt for a password are theirs to
    # use, so the prompt is not turned off here as it is for every other git plait runs.
    prompt = {"GIT_TERMINAL_PROMPT": os.environ.get("GIT_TERMINAL_PROMPT", "1")}
    done = run(tuple(push_args(remote, commit, branch)), repo.root, prompt)
    if done.returncode == 0:
        return
    refused = re.search(r"^!\t[^\t]*\t\[[^\]]*\]\s*\(?([^)\n]*)\)?", done.stdout, re.MULTILINE)
    if refused:
        why = refused.group(1).strip() or "refused"
        hint = {
            "non-fast-forward": f"{branch} on {remote} has commits this run does not: name another with --branch",
            "fetch first": f"{branch} on {remote} has commits this run does not: name another with --branch",
            "stale info": f"{branch} on {remote} moved: name another with --branch",
        }.get(why, "see `git push` for the remote's rules")
        raise PushRejected(f"push of {branch} to {remote} rejected ({why}): {hint}")
    lines = [line.strip() for line in done.stderr.splitlines() if line.strip() and not line.startswith("hint:")]
    remote_says = [line for line in lines if line.startswith(("remote:", "fatal:", "error:"))]
    detail = (remote_says or lines or [first_line(done.stdout, f"exit status {done.returncode}")])[0]
    raise PushRejected(f"push of {branch} to {remote} failed: {detail}")
