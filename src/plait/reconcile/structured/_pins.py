"""Requirement lines (`name[extras] spec ; marker  # comment`) and the rule that takes the newer of two pins."""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Requirement", "VersionKey", "newer_pin", "requirement", "version_key"]

_LINE = re.compile(
    r"^(?P<name>[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*(?P<extras>\[[^\]]*\])?\s*"
    r"(?P<spec>(?:[<>=!~]=?=?\s*[^\s,;#]+\s*,?\s*)*)(?P<rest>(?:;[^#]*)?(?:#.*)?)$"
)
_QUOTED = re.compile(r"""^(?:"([^"\\]*)"|'([^']*)'),?$""")
_CLAUSE = re.compile(r"\s*(===|==|>=|<=|~=|!=|>|<)\s*([^\s,]+)\s*")
_VERSION = re.compile(
    r"^v?(\d+(?:\.\d+)*)(?:[-_.]?(a|b|c|rc|alpha|beta|pre|preview)[-_.]?(\d*))?"
    r"(?:[-_.]?(post|rev|r)[-_.]?(\d*))?(?:[-_.]?dev[-_.]?(\d*))?$",
    re.IGNORECASE,
)
_PHASE = {"a": 0, "alpha": 0, "b": 1, "beta": 1, "c": 2, "rc": 2, "pre": 2, "preview": 2}

VersionKey = tuple[tuple[int, ...], tuple[int, int], int, float]


@dataclass(frozen=True)
class Requirement:
    """One requirement line cut into its parts; `spec` is a tuple of (operator, version) clauses."""

    name: str
    extras: str
    spec: tuple[tuple[str, str], ...]
    rest: str


def requirement(line: str) -> Requirement | None:
    """The requirement a line states (no options, URLs or continuation; quoted as an array item is read), or None."""
    quoted = _QUOTED.match(line.strip())
    match = _LINE.match((quoted[1] or quoted[2] or "") if quoted else line.strip())
    if match is None or line.rstrip().endswith("\\"):
        return None
    spec_text = match["spec"].strip().rstrip(",")
    clauses = [_CLAUSE.fullmatch(part) for part in spec_text.split(",")] if spec_text else []
    if any(c is None for c in clauses):
        return None
    spec = tuple((c[1], c[2]) for c in clauses if c is not None)
    name = re.sub(r"[-_.]+", "-", match["name"]).lower()
    return Requirement(name, (match["extras"] or "").replace(" ", ""), spec, match["rest"].strip())


def version_key(version: str) -> VersionKey | None:
    """A sort key for a PEP 440 version (or a `v`-prefixed tag), None when it is not one."""
    match = _VERSION.match(version)
    if match is None:
        return None
    release = tuple(int(part) for part in match[1].split("."))
    while len(release) > 1 and release[-1] == 0:
        release = release[:-1]
    pre_phase, pre_n, post, dev = match[2], match[3], match[4], match[6]
    if pre_phase:
        pre = (_PHASE[pre_phase.lower()], int(pre_n or 0))
    elif match[0].lower().find("dev") >= 0 and not post:
        pre = (-1, 0)
    else:
        pre = (3, 0)
    post_n = int(match[5] or 0) if post else -1
    dev_n = float(int(dev or 0)) if "dev" in match[0].lower() else float("inf")
    return release, pre, post_n, dev_n


def _compare(a: Requirement, b: Requirement) -> int | None:
    """-1, 0 or 1 when every clause of `a` is older, equal or newer than `b`'s; None when mixed or not alike."""
    if len(a.spec) != len(b.spec) or any(x[0] != y[0] for x, y in zip(a.spec, b.spec, strict=True)):
        return None
    signs = set()
    for (_, x), (_, y) in zip(a.spec, b.spec, strict=True):
        kx, ky = version_key(x), version_key(y)
        if kx is None or ky is None:
            return None
        signs.add((kx > ky) - (kx < ky))
    signs.discard(0)
    return signs.pop() if len(signs) == 1 else (0 if not signs else None)


def newer_pin(base: str, ours: str, theirs: str) -> tuple[str, str] | None:
    """The newer of two bumps of one requirement line and a note saying so, or None.

    Both sides must state the same package, extras, marker and comment with the same operators, and both must
    have moved every version forward from the base: then the side whose versions are all newer wins.
    """
    b, o, t = requirement(base), requirement(ours), requirement(theirs)
    if b is None or o is None or t is None or not o.spec:
        return None
    if not (b.name == o.name == t.name and b.extras == o.extras == t.extras and o.rest == t.rest):
        return None
    if _compare(o, b) != 1 or _compare(t, b) != 1:
        return None
    order = _compare(o, t)
    if order is None or order == 0:
        return None
    newer, older = (o, t) if order > 0 else (t, o)
    shown = ",".join(v for _, v in newer.spec), ",".join(v for _, v in older.spec)
    return (ours if order > 0 else theirs), f"took the newer pin of {newer.name}: {shown[0]} over {shown[1]}"
