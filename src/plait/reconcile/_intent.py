"""Why a side changed a conflicted region: the commits that touched it, cleaned and bounded; where deleted code went.

Commit messages are read as text for a prompt: VCS boilerplate (sign-offs, merge and bump lines, dependency
bot tables) is dropped, code fences are removed so that none is left open, and every part is bounded.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from plait.events.types import NotePosted
from plait.reconcile._gitio import decode, git_bytes
from plait.reconcile.types import MergeSite
from plait.workspace import GitError

__all__ = ["Commit", "board_notes", "clean_message", "region_commits", "relevant_notes", "where_defined"]

_BOILERPLATE = re.compile(
    r"^\s*(?:-\s*)?(?:(?:signed-off-by|co-authored-by|reviewed-by|acked-by|tested-by|reported-by|suggested-by|helped-by"
    r"|change-id|cc|git-svn-id|updated-dependencies|dependency-name|dependency-type|dependency-group|update-type"
    r"|depends-on)\s*:|updates:\s*$"
    r"|\(cherry picked from|this reverts commit|merge (?:branch|pull request|remote-tracking|tag|commit)\b"
    r"|#\s*conflicts:|[-=*_~`]{3,}\s*$|\.\.\.\s*$|bumps |updates? `|\||- \[(?:release notes|changelog|commits)\]"
    r"|\[skip ci\]|\[pre-commit\.ci\]|for more information, see https://pre-commit\.ci|<!--|-->"
    r"|- \[?(?:https://)?github\.com/[^\s:]+:? *\S* *→)",
    re.IGNORECASE,
)
_FENCE = re.compile(r"^\s*(?:`{3,}|~{3,})")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{3,}")
_STOP = frozenset(
    "self this that with from into none true false return import class else elif while pass none args kwargs".split()
)


@dataclass(frozen=True)
class Commit:
    """One commit that touched a region: short id, subject, and the body lines that explain it."""

    sha: str
    subject: str
    body: tuple[str, ...]


def _cut(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _keep(line: str) -> bool:
    return bool(line.strip()) and not _BOILERPLATE.match(line) and not _FENCE.match(line)


def clean_message(text: str, limit: int) -> str:
    """Text of commit messages or task briefs without boilerplate or fences, at most `limit` characters."""
    lines, size = [], 0
    for line in text.splitlines():
        if not _keep(line):
            continue
        line = line.rstrip()[:300]
        if size + len(line) + 1 > limit:
            lines.append("…")
            break
        lines.append(line)
        size += len(line) + 1
    return "\n".join(lines)


def words(lines: Iterable[str]) -> set[str]:
    """The identifiers (4 letters or more, common words left out) of some lines of code."""
    return {w for line in lines for w in _WORD.findall(line) if w.lower() not in _STOP}


_ITEM = re.compile(r"^\s*(?:[-*•+]|\d+[.)])\s")


def _paragraphs(body: str) -> list[str]:
    """A message body's kept lines, a paragraph (or list item) wrapped over several lines made one line again."""
    out: list[str] = []
    joining = False
    for line in body.splitlines():
        if not _keep(line):
            joining = False
            continue
        if joining and not _ITEM.match(line):
            out[-1] += " " + line.strip()
        else:
            out.append(line.strip())
        joining = True
    return out


def region_commits(
    site: MergeSite, side: str, path: str, span: tuple[int, int], hunk_words: set[str], size: int = 0, limit: int = 4
) -> list[Commit]:
    """Commits of one side (not the other) that touched lines [start, end) of `path` (a file of `size` lines),
    newest first."""
    mine, other = (site.ours, site.theirs) if side == "ours" else (site.theirs, site.ours)
    start, end = span
    # an empty span (the side deleted the lines) is looked up by the lines either side of the gap
    first, last = (start + 1, end) if end > start else (max(1, start), max(1, start) + 1)
    last = min(last, size) if size else last
    try:
        _, out = git_bytes(
            site.repo,
            "log",
            "--no-merges",
            "-s",
            f"-n{limit}",
            "--format=%h%x00%s%x00%b%x1e",
            f"-L{first},{last}:{path}",
            f"{other}..{mine}",
            "--",
        )
    except GitError:
        return []
    commits = []
    for record in decode(out).split("\x1e"):
        parts = record.strip("\n").split("\0")
        if len(parts) < 3 or not parts[0].strip():
            continue
        sha, subject, body = parts[0].strip(), parts[1], parts[2]
        kept = _paragraphs(body)
        useful = [line for line in kept if words([line]) & hunk_words] or kept
        commits.append(Commit(sha, _cut(subject, 120), tuple(_cut(x, 160) for x in useful[:2])))
    return commits


def relevant_notes(notes: Sequence[str], paths: Sequence[str], hunk_words: set[str], limit: int = 8) -> list[str]:
    """The notes that mention one of `paths` (or its file name) or a name in the conflicted code."""
    names = {p for path in paths for p in (path, path.rsplit("/", 1)[-1], path.rsplit("/", 1)[-1].split(".")[0])}
    found = []
    for note in notes:
        text = " ".join(note.split())
        if any(n and len(n) > 2 and n in text for n in names) or words([text]) & hunk_words:
            found.append(_cut(text, 300))
    return found[:limit]


_NOTICES = frozenset({"radar", "merge-queue"})
"""Authors whose notes are plait's own notices (two tasks edit one file, a branch was integrated), not intent."""


def _covers(where: str, path: str) -> bool:
    where = where.strip("/")
    return bool(where) and (path == where or path.startswith(where + "/"))


def board_notes(notes: Iterable[NotePosted], paths: Sequence[str]) -> list[str]:
    """The notes of a run's board that may explain `paths`: those posted about one of them (or a folder holding
    one), named by it, first; then those posted about no path. Notes about other files are left out."""
    about, loose = [], []
    for note in notes:
        if note.agent in _NOTICES:
            continue
        hit = [p for p in paths if any(_covers(w, p) for w in note.paths)]
        if hit:
            about.append(f"[{note.topic}] from {note.agent} about {', '.join(hit)}: {note.text}")
        elif not note.paths:
            loose.append(f"[{note.topic}] from {note.agent}: {note.text}")
    return [*about, *loose]


def defined_names(lines: Iterable[str]) -> list[str]:
    """Names of the functions and classes defined on some lines."""
    pattern = re.compile(r"^\s*(?:async\s+def|def|class)\s+(\w+)")
    return [m.group(1) for line in lines if (m := pattern.match(line))]


def where_defined(site: MergeSite, side: str, names: Sequence[str]) -> dict[str, list[str]]:
    """`path:line` of each def or class of `names` in a side's tree (Python files), at most three per name."""
    commit = site.ours if side == "ours" else site.theirs
    wanted = list(dict.fromkeys(names))[:60]
    if not wanted:
        return {}
    pattern = rf"^\s*(async\s+def|def|class)\s+({'|'.join(map(re.escape, wanted))})\b"
    try:
        _, out = git_bytes(site.repo, "grep", "-n", "-I", "-E", "-e", pattern, commit, "--", "*.py", ok=(0, 1))
    except GitError:
        return {}
    found: dict[str, list[str]] = {}
    header = re.compile(pattern)
    for line in decode(out).splitlines():
        parts = line.removeprefix(f"{commit}:").split(":", 2)
        match = header.match(parts[2]) if len(parts) == 3 else None
        if match and len(found.setdefault(match.group(2), [])) < 3:
            found[match.group(2)].append(f"{parts[0]}:{parts[1]}")
    return found
