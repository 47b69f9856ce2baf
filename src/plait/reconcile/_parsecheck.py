"""The gate's parse stage: files that do not parse, held against a commit only when it made them so.

A file that did not parse at the base is nobody's new problem; in a merge, one that does not parse at
every parent is not the merge's doing; one that does not parse at one parent (and did at the base) is
that branch's own, reported as such with the command that shows it. Python is judged with this
interpreter's grammar, which cannot read Python 2: in a project that declares Python 2 (classifiers,
`requires-python`, `python_requires`, tox envs), a Python file the branches already had that way is
noted, not held, when its error is one Python 2 code may give (`_python2`; a broken indentation is not).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from plait.reconcile._python2 import python2_may_parse
from plait.reconcile._sources import Sources
from plait.reconcile._syntax import CHECKED_SUFFIXES, conflict_markers, syntax_error
from plait.reconcile._trees import changed_paths
from plait.workspace import Repo

__all__ = ["DECLARING", "ParseFindings", "parse_findings", "shown_by", "targets_python2"]

DECLARING = ("pyproject.toml", "setup.cfg", "setup.py", "tox.ini")
"""The files that declare which Python a project runs on (what `targets_python2` reads)."""
_CLASSIFIER_2 = re.compile(r"Programming Language :: Python :: 2(?:\.\d+)?\s*['\"]")
_REQUIRES_2 = re.compile(r"(?:requires[-_]python|python_requires)\s*=\s*['\"]?([^'\"\n]*)")
_ALLOWS_2 = re.compile(r"(?:^|,)\s*(?:>=?|==|~=)\s*2(?:\.|\s*(?:,|$))")
_TOX_2 = re.compile(r"^\s*envlist\s*=.*\b(?:py2\d?|pypy)\b(?!3)", re.MULTILINE)
_CHECKS = {
    ".py": "python3 -c 'import ast, sys; ast.parse(sys.stdin.read())'",
    ".pyi": "python3 -c 'import ast, sys; ast.parse(sys.stdin.read())'",
    ".json": "python3 -m json.tool > /dev/null",
    ".toml": "python3 -c 'import sys, tomllib; tomllib.loads(sys.stdin.read())'",
    ".yaml": "python3 -c 'import sys, yaml; list(yaml.safe_load_all(sys.stdin))'",
    ".yml": "python3 -c 'import sys, yaml; list(yaml.safe_load_all(sys.stdin))'",
}


def targets_python2(read: Callable[[str], str | None]) -> bool:
    """Whether the project (its packaging and tox files, read by `read`) declares support for Python 2."""
    for name in DECLARING:
        text = read(name) or ""
        if _CLASSIFIER_2.search(text) or (name == "tox.ini" and _TOX_2.search(text)):
            return True
        if any(_ALLOWS_2.search(m.group(1)) for m in _REQUIRES_2.finditer(text)):
            return True
    return False


def shown_by(commit: str, path: str) -> str:
    """The command that shows `path` failing to parse at `commit`."""
    check = _CHECKS.get(PurePosixPath(path).suffix.lower(), "cat")
    return f"git show {shlex.quote(f'{commit}:{path}')} | {check}"


@dataclass
class ParseFindings:
    """What the parse stage found: the problems held against the commit, and notes on those that are not."""

    problems: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    """The files of the problems held."""
    notes: list[str] = field(default_factory=list)


def _parents(repo: Repo, commit: str) -> list[str]:
    return repo.git("rev-parse", f"{commit}^@").split()


def parse_findings(
    repo: Repo,
    base: str,
    commit: str,
    changes: Mapping[str, str] | None = None,
    sources: Sources | None = None,
) -> ParseFindings:
    """The parse problems of the files `commit` changed since `base`, each held or noted as told above.

    `changes`: the paths that differ between the two (`changed_paths`), when the caller has them already;
    `sources`: what was read of the repository's blobs before (the gate's), so that nothing is read or compiled twice.
    """
    every = changed_paths(repo, base, commit) if changes is None else changes
    changed = [p for p, status in every.items() if status != "D"]
    sources = sources or Sources(repo)
    now = sources.read(commit, changed)
    found = ParseFindings()
    errors: dict[str, str] = {}
    for path in changed:
        oid = now[path]
        text = None if oid is None else sources.source(oid)
        if oid is None or text is None or "\0" in text:
            continue
        if PurePosixPath(path).suffix.lower() in CHECKED_SUFFIXES:
            error = _syntax_error(sources, oid, path)
            if error:
                errors[path] = error
        if (
            path not in errors
            and conflict_markers(text)
            and conflict_markers(text, *_originals(sources, base, commit, path))
        ):
            found.problems.append(f"{path}: conflict markers left in the file")
            found.files.append(path)
    if errors:
        _judge(sources, base, commit, errors, found)
    return found


def _syntax_error(sources: Sources, oid: str, path: str) -> str | None:
    """`syntax_error` of the blob as the file at `path`, told once."""
    return sources.made(oid, ("syntax", path), lambda: syntax_error(path, sources.source(oid)))


def _originals(sources: Sources, base: str, commit: str, path: str) -> list[str | None]:
    return [sources.text(c, path) for c in (base, *_parents(sources.repo, commit))]


def _judge(sources: Sources, base: str, commit: str, errors: dict[str, str], found: ParseFindings) -> None:
    paths = list(errors)
    at_base = sources.read(base, paths)
    said = _parents(sources.repo, commit)
    parents = [p for p in said if p != base] if len(said) > 1 else []
    at_parents = {p: sources.read(p, paths) for p in parents}
    python2: bool | None = None
    for path, error in errors.items():
        old = at_base.get(path)
        if old is not None and _syntax_error(sources, old, path):
            continue  # it did not parse at the base either: not this commit's doing
        owners = [p for p in parents if (b := at_parents[p].get(path)) is not None and _syntax_error(sources, b, path)]
        if python2 is None and PurePosixPath(path).suffix.lower() in (".py", ".pyi"):
            python2 = targets_python2(sources.texts(commit, DECLARING).get)
        legacy = bool(python2) and PurePosixPath(path).suffix.lower() in (".py", ".pyi") and python2_may_parse(error)
        if parents and len(owners) == len(parents):
            found.notes.append(f"{error} (not the merge's doing: every branch merged has it on its own)")
        elif owners and legacy:
            found.notes.append(f"{error} (the project declares Python 2, which this interpreter cannot parse)")
        elif owners:
            found.problems.append(
                f"{error} (already in {owners[0][:10]} on its own, not made by the merge; "
                f"shown by: {shown_by(owners[0], path)})"
            )
            found.files.append(path)
        elif legacy and not parents:
            found.notes.append(f"{error} (the project declares Python 2, which this interpreter cannot parse)")
        else:
            found.problems.append(error)
            found.files.append(path)
