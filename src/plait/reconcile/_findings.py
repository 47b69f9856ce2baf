"""The semantic check run on git's merge before its conflicts are resolved, for the `llm` rung.

git's tree holds marked files, which do not parse; so the check runs twice, on the tree with ours' side of
every conflict and with theirs', and keeps what neither parent already had: uses that git's clean merge broke.
"""

from __future__ import annotations

from plait.reconcile._gitio import git_bytes
from plait.reconcile._trees import read_blobs
from plait.reconcile.semantic import find_breakage
from plait.reconcile.textmerge import PathConflict, TreeMerge, merge_file, write_tree
from plait.reconcile.types import FileConflict, Finding, Resolution
from plait.workspace import GitError, Repo

__all__ = ["merge_findings"]


def _side_tree(repo: Repo, merge: TreeMerge, loaded: list[tuple[PathConflict, FileConflict, bool]], side: str) -> str:
    resolutions = []
    for pc, c, binary in loaded:
        if binary:
            continue
        if c.ours is None or c.theirs is None:
            text = c.ours if side == "ours" else c.theirs
        else:
            text = merge_file(c.base or "", c.ours, c.theirs, style="ours" if side == "ours" else "theirs")[0]
        resolutions.append(Resolution(pc.path, text, "git", f"{side}' side"))
    return write_tree(repo, merge.tree, resolutions, {pc.path: pc.mode for pc, _, _ in loaded})


def merge_findings(
    repo: Repo, ours: str, theirs: str, merge: TreeMerge, loaded: list[tuple[PathConflict, FileConflict, bool]]
) -> list[Finding]:
    """Uses, in git's merge of `ours` and `theirs`, of names one side removed; none when git cannot tell."""
    try:
        _, out = git_bytes(repo, "merge-base", ours, theirs, ok=(0, 1))
        base = out.decode().strip()
        if not base:
            return []
        known = {(b.path, b.message) for c in (ours, theirs) for b in find_breakage(repo, base, c)}
        found: dict[tuple[str, str], Finding] = {}
        for side in ("ours", "theirs"):
            tree = _side_tree(repo, merge, loaded, side)
            for b in find_breakage(repo, base, tree):
                if (b.path, b.message) in known or (b.path, b.message) in found:
                    continue
                lines = (read_blobs(repo, tree, [b.path]).get(b.path) or "").splitlines()
                text = lines[b.line - 1] if 0 < b.line <= len(lines) else ""
                message = f"{b.message} (when {side}' side of each conflict is kept)"
                found[(b.path, b.message)] = Finding(b.path, b.line, text, message, b.files)
    except GitError:
        return []
    return list(found.values())
