"""The merge ladder: git's merge first, then each resolver in turn (cheapest first) on each file left conflicted."""

from __future__ import annotations

import ast
import asyncio
import re
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace

from plait.reconcile._findings import merge_findings
from plait.reconcile._gitio import decode, git_bytes, read_blobs
from plait.reconcile.textmerge import (
    PathConflict,
    TreeMerge,
    both_changed,
    commit_merge,
    has_conflict_markers,
    load_conflicts,
    merge_attributes,
    merge_file,
    merge_tree,
    write_tree,
)
from plait.reconcile.types import FileConflict, MergeContext, MergeOutcome, MergeSite, Resolution, Resolver, Rung
from plait.workspace import Repo

__all__ = ["default_resolvers", "merge_commits", "merge_commits_sync"]

_KEEP_OURS = ("binary", "unset")
_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


class _OnFirstConflict:
    """A rung whose resolver (and its modules: the rules, the structured mergers) is made for the first conflict it
    is given, so that merges git makes alone never load them."""

    def __init__(self, rung: Rung, make: Callable[[], Resolver], *, defer_low: bool = False) -> None:
        self.rung, self.defer_low = rung, defer_low
        self._make = make
        self._made: Resolver | None = None

    async def resolve(self, conflict: FileConflict, context: MergeContext) -> Resolution | None:
        """What the resolver makes of `conflict`."""
        if self._made is None:
            self._made = self._make()
        return await self._made.resolve(conflict, context)


def _deterministic(defer_low: bool) -> Resolver:
    from plait.reconcile.deterministic import DeterministicResolver

    return DeterministicResolver(defer_low=defer_low)


def _structured() -> Resolver:
    from plait.reconcile.structured import StructuredResolver

    return StructuredResolver()


def default_resolvers(*, defer_low: bool = False) -> list[Resolver]:
    """The rungs that need no model: deterministic rules, then the structured (entity-level) merge, each made on its
    first conflict.

    `defer_low`: a deterministic resolution of low confidence goes to a later `llm` rung first.
    """
    return [
        _OnFirstConflict("deterministic", lambda: _deterministic(defer_low), defer_low=defer_low),
        _OnFirstConflict("structured", _structured),
    ]


@dataclass
class _Plan:
    """A merge-tree result with what plait adds: texts of each conflict, merge attributes, attribute-made conflicts."""

    merge: TreeMerge
    loaded: list[tuple[PathConflict, FileConflict, bool]] = field(default_factory=list)
    attributes: dict[str, str] = field(default_factory=dict)
    held: list[FileConflict] = field(default_factory=list)


def _uses_merge_attributes(repo: Repo, commit: str) -> bool:
    status, _ = git_bytes(
        repo, "grep", "-q", "-I", "-e", "merge", commit, "--", ".gitattributes", "*/.gitattributes", ok=(0, 1)
    )
    info = repo.common_dir / "info" / "attributes"
    return status == 0 or (info.is_file() and "merge" in info.read_text(errors="replace"))


def _blob_at(repo: Repo, commit: str, path: str) -> str | None:
    _, out = git_bytes(repo, "ls-tree", "-z", commit, "--", path)
    if not out:
        return None
    oid = out.split(b"\t", 1)[0].split()[2].decode()
    return decode(read_blobs(repo, [oid])[oid])


def _plan(repo: Repo, ours: str, theirs: str) -> _Plan:
    plan = _Plan(merge_tree(repo, ours, theirs))
    plan.loaded = load_conflicts(repo, plan.merge) if plan.merge.conflicts else []
    if not _uses_merge_attributes(repo, ours):
        return plan
    conflicted = {pc.path for pc, _, _ in plan.loaded}
    clean_both = [p for p in both_changed(repo, ours, theirs) if p not in conflicted]
    plan.attributes = merge_attributes(repo, ours, [*conflicted, *clean_both])
    bases = git_bytes(repo, "merge-base", ours, theirs, ok=(0, 1))[1].decode().split()
    for path in clean_both:
        if plan.attributes.get(path) in _KEEP_OURS:
            sides = [_blob_at(repo, c, path) if c else None for c in (bases[0] if bases else "", ours, theirs)]
            plan.held.append(FileConflict(path, sides[0], sides[1], sides[2], merged=sides[1] or ""))
    return plan


def _commit_id(repo: Repo, ref: str) -> str:
    return git_bytes(repo, "rev-parse", "--verify", "--end-of-options", f"{ref}^{{commit}}")[1].decode().strip()


def _commit_ids(repo: Repo, ours: str, theirs: str) -> tuple[str, str]:
    """Both commits, asked of git at once (one at a time when that fails, so that the error names the wrong one, or
    when a name looks like an option)."""
    if not ours.startswith("-") and not theirs.startswith("-"):
        status, out = git_bytes(repo, "rev-parse", f"{ours}^{{commit}}", f"{theirs}^{{commit}}", ok=range(256))
        found = out.decode().split()
        if status == 0 and len(found) == 2 and all(_SHA.fullmatch(sha) for sha in found):
            return found[0], found[1]
    return _commit_id(repo, ours), _commit_id(repo, theirs)


def _parses(text: str) -> bool:
    try:
        ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return True


def _acceptable(res: Resolution, conflict: FileConflict) -> str | None:
    """Why a resolution must be refused (markers or a parse error the sides did not have), or None."""
    if res.path != conflict.path:
        return f"a resolution for {res.path} was offered for {conflict.path}"
    if res.text is None:
        return None
    sides = [s for s in (conflict.ours, conflict.theirs) if s is not None]
    if has_conflict_markers(res.text) and not any(has_conflict_markers(s) for s in sides):
        return "it still holds conflict markers"
    if conflict.path.endswith((".py", ".pyi")) and all(_parses(s) for s in sides) and not _parses(res.text):
        return "it does not parse"
    return None


async def _climb(
    pending: Sequence[FileConflict],
    resolvers: Sequence[Resolver],
    context: MergeContext,
    refusals: list[str],
    llm_context: Callable[[], Awaitable[MergeContext]],
) -> dict[str, Resolution]:
    """Each rung in turn on the files still open; the `llm` rung also sees the merge, its other open files
    and the semantic check's findings (`llm_context`, computed once when that rung is reached). A rung that
    defers its low-confidence resolutions (`defer_low`) keeps them for when no later `llm` rung does better."""
    found: dict[str, Resolution] = {}
    held: dict[str, Resolution] = {}
    for at, resolver in enumerate(resolvers):
        left = [c for c in pending if c.path not in found]
        if not left:
            break
        shared = await llm_context() if resolver.rung == "llm" else context
        defer = getattr(resolver, "defer_low", False) and any(r.rung == "llm" for r in resolvers[at + 1 :])
        for conflict in left:
            mine = replace(shared, siblings=tuple(c for c in left if c is not conflict)) if shared.site else shared
            res = await resolver.resolve(conflict, mine)
            if res is None:
                continue
            problem = _acceptable(res, conflict)
            if problem is not None:
                refusals.append(f"{conflict.path}: {res.rung} refused, {problem}")
            elif defer and res.confidence == "low":
                held.setdefault(conflict.path, res)
            else:
                found[conflict.path] = res
    return held | found


class _LLMContext:
    """The `llm` rung's context: the merge itself and the semantic check's findings on git's merge, made once."""

    def __init__(self, repo: Repo, ours: str, theirs: str, plan: _Plan, context: MergeContext) -> None:
        self.repo, self.ours, self.theirs, self.plan, self.context = repo, ours, theirs, plan, context
        self._made: MergeContext | None = None

    async def __call__(self) -> MergeContext:
        if self._made is None:
            findings = await asyncio.to_thread(
                merge_findings, self.repo, self.ours, self.theirs, self.plan.merge, self.plan.loaded
            )
            site = MergeSite(self.repo, self.ours, self.theirs)
            self._made = replace(self.context, site=site, findings=tuple(findings))
        return self._made


def _by_attribute(pc: PathConflict, conflict: FileConflict, attribute: str) -> Resolution | None:
    if attribute != "union" or conflict.ours is None or conflict.theirs is None:
        return None
    text, _ = merge_file(conflict.base or "", conflict.ours, conflict.theirs, style="union")
    return Resolution(pc.path, text, "deterministic", "merge=union attribute: kept both sides' lines")


def _summary(plan: _Plan, resolutions: list[Resolution], unresolved: list[FileConflict], refusals: list[str]) -> str:
    if not plan.loaded and not plan.held:
        return "git merged it cleanly"
    rungs = Counter(r.rung for r in resolutions)
    parts = [f"{len(plan.loaded) + len(plan.held)} conflicted file(s)"]
    if rungs:
        parts.append("resolved: " + ", ".join(f"{n} by {rung}" for rung, n in rungs.items()))
    if unresolved:
        parts.append(
            "unresolved: " + ", ".join(c.path for c in unresolved[:5]) + (" ..." if len(unresolved) > 5 else "")
        )
    return "; ".join(parts + refusals[:3])


async def merge_commits(
    repo: Repo,
    ours: str,
    theirs: str,
    *,
    resolvers: Sequence[Resolver],
    context: MergeContext | Callable[[], MergeContext] = MergeContext(),  # noqa: B008 - frozen, never mutated
    message: str = "",
    new_to_ours: bool = False,
) -> MergeOutcome:
    """Merge commit `theirs` into `ours`: git's merge, then each resolver on each conflicted file.

    `context` is given to the resolvers; made by a function, it is made when a conflict first goes to them.

    Never touches a work tree, an index or a ref: the result is a merge commit (parents ours, theirs) when
    every file was resolved, else `commit` is None and `unresolved` lists what is left. When `theirs` is
    already in `ours`, the commit is `ours` itself (`new_to_ours`: the caller has found it is not; git is not
    asked again).
    """
    ours_sha, theirs_sha = await asyncio.to_thread(_commit_ids, repo, ours, theirs)
    merged_in = 1
    if not new_to_ours:
        merged_in, _ = await asyncio.to_thread(
            git_bytes, repo, "merge-base", "--is-ancestor", theirs_sha, ours_sha, ok=(0, 1)
        )
    if merged_in == 0:
        return MergeOutcome(ours_sha, theirs_sha, ours_sha, clean=True, detail="already merged")
    plan = await asyncio.to_thread(_plan, repo, ours_sha, theirs_sha)
    refusals: list[str] = []
    by_attribute: dict[str, Resolution] = {}
    pending: list[FileConflict] = []
    for pc, conflict, binary in plan.loaded:
        attribute = plan.attributes.get(pc.path, "unspecified")
        if pc.textual and not binary and attribute not in _KEEP_OURS:
            res = _by_attribute(pc, conflict, attribute)
            if res is None:
                pending.append(conflict)
            else:
                by_attribute[pc.path] = res
    found = dict(by_attribute)
    if pending:
        told = await asyncio.to_thread(context) if callable(context) else context
        llm_context = _LLMContext(repo, ours_sha, theirs_sha, plan, told)
        found |= await _climb(pending, resolvers, told, refusals, llm_context)
    resolutions = [found[pc.path] for pc, _, _ in plan.loaded if pc.path in found]
    unresolved = [*plan.held, *(c for pc, c, _ in plan.loaded if pc.path not in found)]
    outcome = MergeOutcome(ours_sha, theirs_sha, None, clean=not plan.loaded and not plan.held)
    outcome.resolutions, outcome.unresolved = resolutions, unresolved
    outcome.detail = _summary(plan, resolutions, unresolved, refusals)
    if not unresolved:
        modes = {pc.path: pc.mode for pc, _, _ in plan.loaded}
        tree = plan.merge.tree
        if resolutions:
            tree = await asyncio.to_thread(write_tree, repo, tree, resolutions, modes)
        message = _with_low_confidence(message, resolutions)
        outcome.commit = await asyncio.to_thread(commit_merge, repo, tree, ours_sha, theirs_sha, message)
    return outcome


def _with_low_confidence(message: str, resolutions: Sequence[Resolution]) -> str:
    """The commit message, with the resolutions of low confidence listed for a reader to check."""
    low = [r for r in resolutions if r.confidence == "low"]
    if not low or not message:
        return message
    lines = "".join(f"- {r.path}: {r.reason}\n" for r in low)
    return f"{message.rstrip(chr(10))}\n\nResolutions of low confidence (worth a look):\n{lines}"


def merge_commits_sync(
    repo: Repo, ours: str, theirs: str, *, resolvers: Sequence[Resolver] | None = None, message: str = ""
) -> MergeOutcome:
    """`merge_commits` for code without an event loop; the default (model-free) rungs unless told otherwise."""
    chosen = default_resolvers() if resolvers is None else resolvers
    return asyncio.run(merge_commits(repo, ours, theirs, resolvers=chosen, message=message))
