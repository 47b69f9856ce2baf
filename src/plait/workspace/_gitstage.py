"""Staging and merging that never enter a repository nested in a work tree, and finding a worktree's git directory.

An agent can make a repository inside its worktree (`git init sub`, or fill a submodule's empty directory) and
give it a configuration of its own: filters, an fsmonitor, hooks. `git add` runs `git status` inside a populated
submodule under that configuration, and `git merge` opens submodules to merge them; nothing on git's command
line turns either off for a filter named in the nested configuration. So plait stages with gitlinks and nested
repositories excluded by pathspec, and merges in a scratch work tree where no nested repository exists.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from plait.workspace.gitcall import GitError, first_line, run

if TYPE_CHECKING:
    from plait.workspace.git import Repo

__all__ = ["git_dir", "merge_trees", "nested_repositories", "stage_all"]


def _gitlinks(repo: Repo, work_tree: Path, env: Mapping[str, str]) -> list[str]:
    out = repo.git("ls-files", "--stage", "-z", cwd=work_tree, env=env)
    return [entry.split("\t", 1)[1] for entry in out.split("\0") if entry.startswith("160000 ")]


def _listed(repo: Repo, work_tree: Path, env: Mapping[str, str]) -> tuple[list[str], list[str]]:
    """The index's gitlinks, and the new repositories among the untracked files, from one `ls-files`: git lists
    those as `dir/` (it does not look inside them); its tags tell an untracked name (`?`) from an index entry."""
    out = repo.git("ls-files", "-z", "-t", "--stage", "--others", "--exclude-standard", cwd=work_tree, env=env)
    links: list[str] = []
    nested: list[str] = []
    for entry in out.split("\0"):
        if entry.startswith("? "):
            if entry.endswith("/"):
                nested.append(entry[2:].rstrip("/"))
        elif entry[2:].startswith("160000 "):
            links.append(entry.split("\t", 1)[1])
    return links, nested


def nested_repositories(repo: Repo, work_tree: Path, env: Mapping[str, str], *, populated: bool) -> list[str]:
    """Directories of `work_tree` that are repositories of their own: new ones among the untracked files; with
    `populated`, also gitlinks whose directory holds a `.git`."""
    links, found = _listed(repo, work_tree, env)
    if populated:
        found += [path for path in links if os.path.lexists(work_tree / path / ".git")]
    return sorted(found)


def stage_all(repo: Repo, work_tree: Path, env: Mapping[str, str], excludes: tuple[str, ...]) -> list[str]:
    """`git add --all` without gitlinks (they stay as the index has them) and nested repositories (git would add
    them as gitlinks, or fail on one without commits); a gitlink that still got in (a repository made while git
    ran) is taken out again. Returns the nested repositories left out. Three git processes: both lists in one
    `ls-files`, the `add`, and the index's gitlinks after it."""
    links, nested = _listed(repo, work_tree, env)
    specs = [".", *(f":(exclude,glob){glob}" for glob in excludes)]
    specs += [f":(exclude,literal){path}" for path in [*links, *nested]]
    pathspecs = "\0".join(specs)
    repo.git("add", "--all", "--pathspec-from-file=-", "--pathspec-file-nul", cwd=work_tree, env=env, input=pathspecs)
    known = set(links)
    strays = [path for path in _gitlinks(repo, work_tree, env) if path not in known]
    if strays:
        repo.git("update-index", "--force-remove", "-z", "--stdin", cwd=work_tree, env=env, input="\0".join(strays))
    return sorted({*nested, *strays})


def git_dir(repo: Repo, work_tree: Path) -> Path:
    """The git directory of `work_tree`: the main work tree's own, or a worktree's as recorded in the shared `.git`."""
    target = os.path.realpath(work_tree)
    if target == os.path.realpath(repo.root):
        return Path(repo.git("rev-parse", "--absolute-git-dir").strip())
    records = repo.common_dir / "worktrees"
    for entry in sorted(records.iterdir()) if records.is_dir() else []:
        try:
            recorded = (entry / "gitdir").read_text(errors="surrogateescape").strip()
        except OSError:
            continue
        if recorded and os.path.realpath(Path(recorded).parent) == target:
            return entry
    raise GitError("worktree list", f"{work_tree} is not a worktree of {repo.root}")


def _write_attributes(repo: Repo, commit: str, into: Path) -> None:
    """The `.gitattributes` files of `commit`, written under `into` (regular files at plain paths only)."""
    listing = repo.git("ls-tree", "-r", "-z", commit, "--", ".gitattributes", "*/.gitattributes")
    for entry in filter(None, listing.split("\0")):
        info, name = entry.split("\t", 1)
        mode, _, oid = info.split()
        parts = PurePosixPath(name).parts
        if mode not in ("100644", "100755") or ".." in parts or name.startswith("/"):
            continue
        target = into.joinpath(*parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(repo.git("cat-file", "blob", oid), errors="surrogateescape")


def merge_trees(repo: Repo, ours: str, theirs: str) -> tuple[str, list[str]]:
    """merge-tree run in a scratch work tree that holds only `ours`' `.gitattributes`: (tree, conflicted paths)."""
    with tempfile.TemporaryDirectory(prefix="plait-merge-") as tmp:
        work = Path(tmp) / "tree"
        work.mkdir()
        _write_attributes(repo, ours, work)
        env = {"GIT_DIR": str(repo.common_dir), "GIT_WORK_TREE": str(work), "GIT_INDEX_FILE": f"{tmp}/index"}
        args = ("merge-tree", "--write-tree", "--name-only", "--no-messages", "-z", ours, theirs)
        done = run(args, work, env)
    if done.returncode not in (0, 1):
        raise GitError(f"merge-tree {ours[:12]} {theirs[:12]}", first_line(done.stderr, "merge-tree failed"))
    fields = done.stdout.split("\0")
    end = fields.index("", 1) if "" in fields[1:] else len(fields)
    return fields[0].strip(), sorted(set(fields[1:end]))
