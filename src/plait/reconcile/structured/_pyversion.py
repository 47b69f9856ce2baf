"""A project's own version both sides set: the newer stands (a maintenance line merged forward keeps the mainline's).

Both sides of such a merge bumped `__version__` (or a Sphinx `conf.py`'s `version`/`release`): the older line to
its next patch, the newer one to its next release. The developer keeps the newer: the merge goes forward. The
choice is a rule, not a certainty, so it is named in the reason and marked low confidence; anything that is not
one plain assignment of a version string on every side is left alone.
"""

from __future__ import annotations

import ast

from plait.reconcile.structured._pins import version_key

__all__ = ["newer_version"]

_NAMES = frozenset({"__version__", "VERSION", "version", "release"})


def _assigned(text: str) -> tuple[str, str] | None:
    """(name, version string) of a text that is one assignment of a version string to a version's name."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    if len(tree.body) != 1 or not isinstance(node := tree.body[0], ast.Assign) or len(node.targets) != 1:
        return None
    target, value = node.targets[0], node.value
    if not isinstance(target, ast.Name) or target.id not in _NAMES:
        return None
    if not isinstance(value, ast.Constant) or not isinstance(value.value, str):
        return None
    return target.id, value.value


def newer_version(base: str, ours: str, theirs: str) -> tuple[str, str] | None:
    """The side whose version is the newer, and why, when both sides set one version differently; else None."""
    found = [_assigned(text) for text in (base, ours, theirs)]
    if found[0] is None or found[1] is None or found[2] is None or len({f[0] for f in found if f}) != 1:
        return None
    (name, was), (_, mine), (_, other) = found[0], found[1], found[2]
    keys = [version_key(v) for v in (was, mine, other)]
    if keys[0] is None or keys[1] is None or keys[2] is None or keys[1] == keys[2]:
        return None
    if not (keys[1] > keys[0] or keys[2] > keys[0]):
        return None  # neither side moved it forward: no release line to follow
    newer, older, text = (mine, other, ours) if keys[1] > keys[2] else (other, mine, theirs)
    return text, f"{name}: both sides set it: kept the newer, {newer} over {older}"
