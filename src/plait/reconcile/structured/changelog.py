"""Changelogs (CHANGES, CHANGELOG, HISTORY, NEWS in .rst, .md or no extension) merged release by release.

A release section one side added is kept where it added it; entries both sides added under one section are
both kept (sorted if the section is sorted, else ours first, low confidence); a header or entry both added is
held once; a renamed header (an "Unreleased" release given its version) takes the other side's new entries.
A section with entries that one side deleted is refused: its entries have usually moved, which no rule can tell.
"""

from __future__ import annotations

import re
from collections.abc import Hashable

from plait.reconcile.structured._docmerge import OrderKey, Rules, merge_document
from plait.reconcile.structured._sections import Node, is_item, item_key
from plait.reconcile.structured.base import EntityMerge

__all__ = ["ChangelogMerger"]

_VERSION = re.compile(r"\d+(?:\.\d+)+")
_STEMS = ("changes", "changelog", "history", "news")


def version(section: Node) -> Hashable | None:
    """A release section's version as a tuple of numbers, or None."""
    match = _VERSION.search(section.key[-1]) if section.kind == "section" and len(section.key) > 1 else None
    return tuple(int(part) for part in match.group().split(".")) if match else None


def _order(parent: Node | None) -> OrderKey | None:
    return version if parent is None else item_key


def _may_delete(node: Node) -> bool:
    return node.kind != "section" or not any(is_item(child) for child in node.children)


class ChangelogMerger:
    """A changelog as release sections of entries, merged section by section and entry by entry."""

    extensions: tuple[str, ...] = ()
    file_names: tuple[str, ...] = tuple(f"{stem}{tail}" for stem in _STEMS for tail in ("", "*.rst", "*.md"))

    def merge(self, base: str, ours: str, theirs: str) -> EntityMerge | None:
        """The merged changelog, or None when both sides changed one entry or header differently."""
        return merge_document(base, ours, theirs, Rules(may_delete=_may_delete, order=_order))
