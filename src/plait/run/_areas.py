"""The areas of an investigation: what each investigator looks into, what it found there, and where.

An investigator gives the places its finding rests on as `path:line` references of their own. They
are checked against the files git tracks: a bare name (`app.py:12`) that names exactly one tracked
file, or one inside the investigator's area, becomes that file's path; one that names several files,
or none, is kept as given and said to be unclear.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import Field, field_validator

from plait.agent.arguments import TEXT_LIMIT, ToolArgs
from plait.globs import matches, normalize
from plait.plan_model import NAME, slugify

__all__ = ["MOST_AREAS", "Area", "Finding", "Located", "locate", "references", "split_areas"]

_REF = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w.-]+\.[A-Za-z0-9]+):(\d+)(?:-\d+)?")
_LOCATION = re.compile(r"^(?P<path>.+?)(?P<lines>:\d+(?:-\d+)?)?:?$")
_GITHUB_LINES = re.compile(r"#L(\d+)(?:-L?(\d+))?$")
MOST_AREAS = 6
"""Areas of a split made by directory, when the lead names none (more are merged into `other`)."""


def references(text: str) -> list[str]:
    """The `path:line` references in `text`, in order, each once (for answers that give none of their own)."""
    return list(dict.fromkeys(m.group(0) for m in _REF.finditer(text)))


@dataclass(frozen=True)
class Located:
    """References checked against the tracked files."""

    refs: tuple[str, ...] = ()
    """Each reference once, in order, its path made whole where it named one file."""
    paths: tuple[str, ...] = ()
    """The tracked files they point at, each once."""
    unclear: tuple[str, ...] = ()
    """The references that name several tracked files or none, each with why."""


def _clean(ref: str, root: str) -> str:
    """The reference's `path:line` part: its first word, unquoted, relative, in `:` form (not GitHub's `#L`)."""
    words = ref.strip().strip("`'\"").split()
    ref = words[0].rstrip(",;)").strip("`'\"") if words else ""
    ref = _GITHUB_LINES.sub(lambda m: f":{m[1]}" + (f"-{m[2]}" if m[2] else ""), ref)
    if root and ref.startswith(root.rstrip("/") + "/"):
        ref = ref[len(root.rstrip("/")) + 1 :]
    return normalize(ref)


def locate(refs: Sequence[str], files: Sequence[str], area: Sequence[str] = (), root: str = "") -> Located:
    """Check `refs` (`path`, `path:line`, `path:start-end`) against `files`, the tracked files.

    A path that is not a tracked file is taken as the end of one (`app.py`, `flask/app.py`): when it
    ends exactly one tracked file, or exactly one inside `area`, it becomes that file's path.
    `root`, the checkout's absolute path, is taken off paths that start with it.
    """
    tracked = set(files)
    by_name: dict[str, list[str]] = {}
    for path in files:
        by_name.setdefault(path.rsplit("/", 1)[-1], []).append(path)
    found: dict[str, None] = {}
    paths: dict[str, None] = {}
    unclear: dict[str, None] = {}
    for given in refs:
        ref = _clean(given, root)
        m = _LOCATION.match(ref)
        if m is None:
            continue
        path, lines = m.group("path"), m.group("lines") or ""
        if path not in tracked:
            ends = [f for f in by_name.get(path.rsplit("/", 1)[-1], []) if f.endswith("/" + path)]
            inside = [f for f in ends if area and matches(area, f)]
            if len(ends) == 1 or len(inside) == 1:
                path = ends[0] if len(ends) == 1 else inside[0]
            elif ends:
                shown = ", ".join(ends[:3]) + (", ..." if len(ends) > 3 else "")
                unclear[f"{ref}: {len(ends)} files match ({shown})"] = None
            else:
                unclear[f"{ref}: no such file in the repository"] = None
        found[path + lines] = None
        if path in tracked:
            paths[path] = None
    return Located(tuple(found), tuple(paths), tuple(unclear))


class Area(ToolArgs):
    """One part of the code an investigator looks into."""

    name: str = Field(min_length=1, max_length=40, description="A short id such as 'db' or 'frontend'.")
    paths: list[str] = Field([], description="Globs of the files of the area, such as 'src/db/**'.")
    question: str = Field(
        "", max_length=TEXT_LIMIT, description="What to find out in this area; the whole question when empty."
    )

    @field_validator("name")
    @classmethod
    def _slug(cls, value: str) -> str:
        if not NAME.fullmatch(value):
            raise ValueError("an area's name is letters, digits, '_', '.' and '-', such as 'db'")
        return value

    @field_validator("paths", mode="before")
    @classmethod
    def _list(cls, value: object) -> object:
        return [value] if isinstance(value, str) else value


@dataclass(frozen=True)
class Finding:
    """What one investigator (or helper) answered to one question."""

    investigator: str
    question: str
    text: str
    ok: bool = True
    area: tuple[str, ...] = ()
    refs: tuple[str, ...] = ()
    reads: int = 0
    not_checked: str = ""
    unclear: tuple[str, ...] = ()
    """References that name several tracked files or none, each with why."""
    paths: tuple[str, ...] = ()
    """The tracked files its references point at."""

    def as_json(self) -> dict[str, object]:
        return {
            "investigator": self.investigator,
            "area": list(self.area),
            "question": self.question,
            "answer": self.text,
            "ok": self.ok,
            "references": list(self.refs),
            "unclear_references": list(self.unclear),
            "not_checked": self.not_checked,
            "reads": self.reads,
        }


def _by_directory(files: Sequence[str], prefix: str) -> dict[str, list[str]]:
    groups: dict[str, list[str]] = {}
    for path in files:
        head, sep, _ = path[len(prefix) :].partition("/")
        groups.setdefault(prefix + head + "/" if sep else "", []).append(path)
    return groups


def split_areas(files: Sequence[str], question: str, most: int) -> list[Area]:
    """A split of the repository by directory into at most `most` areas, when the lead gives none."""
    prefix = ""
    groups = _by_directory(files, prefix)
    while len(groups) == 1 and "" not in groups:  # one directory holds everything: look inside it
        prefix = next(iter(groups))
        groups = _by_directory(files, prefix)
    ranked = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0] == "", kv[0]))
    most = max(1, most)
    kept, rest = (ranked, []) if len(ranked) <= most else (ranked[: most - 1], ranked[most - 1 :])
    areas: list[Area] = []
    names: set[str] = set()

    def add(name: str, paths: list[str]) -> None:
        unique, n = name, 2
        while unique in names:
            unique, n = f"{name}-{n}", n + 1
        names.add(unique)
        areas.append(Area(name=unique, paths=paths, question=question))

    for key, members in kept:
        if key:
            add(slugify(key.rstrip("/").rsplit("/", 1)[-1]), [key + "**"])
        else:
            add(slugify(prefix.rstrip("/").rsplit("/", 1)[-1] + " top") if prefix else "top", list(members))
    if rest:
        paths: list[str] = []
        for key, members in rest:
            paths.extend([key + "**"] if key else members)
        add("other", paths)
    return areas
