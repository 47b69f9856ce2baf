"""reStructuredText and Markdown documents merged section by section, block by block.

Sections are known by their heading path (the chain of headings above them), blocks (paragraphs, list items)
by their text. A code block, a table or any other block both sides edited is an atom: None. A `toctree`
directive both sides edited is merged as a list of its lines.
"""

from __future__ import annotations

from collections.abc import Hashable

from plait.reconcile.structured._docmerge import Clash, OrderKey, Rules, merge_document, merge_lines
from plait.reconcile.structured._sections import Node, item_key
from plait.reconcile.structured.base import EntityMerge

__all__ = ["DocsMerger"]


def _order(parent: Node | None) -> OrderKey | None:
    return None if parent is None else item_key


def _entry(line: Node) -> Hashable | None:
    """A toctree entry (an indented line that is not an option), case folded."""
    text = line.body.strip()
    return text.casefold() if text and line.body[:1].isspace() and not text.startswith(":") else None


class DocsMerger:
    """Documents as sections of blocks, merged section by section and block by block."""

    extensions: tuple[str, ...] = (".rst", ".md")
    file_names: tuple[str, ...] = ()

    def merge(self, base: str, ours: str, theirs: str) -> EntityMerge | None:
        """The merged document, or None when both sides changed one block or heading differently."""
        rules = Rules(order=_order)

        def toctree(old: Node, one: Node, two: Node) -> str | None:
            if not all(n.body.startswith(".. toctree::") for n in (old, one, two)) or one.lead != two.lead:
                return None
            try:
                return one.lead + merge_lines(old.body, one.body, two.body, rules, _entry)
            except Clash:
                return None

        rules.leaf = toctree
        return merge_document(base, ours, theirs, rules)
