"""The structured rung: merge a file entity by entity where a merger for its language exists.

A language plugs in by implementing `LanguageMerger` (usually: cut the file into `Entity`s and call
`merge_entities`) and being passed to `StructuredResolver`; `DEFAULT_MERGERS` holds the built-in ones.
"""

from __future__ import annotations

import asyncio
import fnmatch
from collections.abc import Sequence
from pathlib import PurePosixPath

from plait.reconcile.structured.base import Entity, EntityMerge, LanguageMerger, LeafMerge, merge_entities
from plait.reconcile.structured.changelog import ChangelogMerger
from plait.reconcile.structured.config import IniMerger, JsonMerger, TomlMerger, YamlMerger
from plait.reconcile.structured.docs import DocsMerger
from plait.reconcile.structured.python import PythonMerger, python_entities
from plait.reconcile.structured.requirements import RequirementsMerger
from plait.reconcile.structured.treesitter import TREE_SITTER_MERGERS
from plait.reconcile.types import Confidence, FileConflict, MergeContext, Resolution, Rung

__all__ = [
    "DEFAULT_MERGERS",
    "ChangelogMerger",
    "DocsMerger",
    "Entity",
    "EntityMerge",
    "IniMerger",
    "JsonMerger",
    "LanguageMerger",
    "LeafMerge",
    "PythonMerger",
    "RequirementsMerger",
    "StructuredResolver",
    "TomlMerger",
    "YamlMerger",
    "merge_entities",
    "python_entities",
]

DEFAULT_MERGERS: tuple[LanguageMerger, ...] = (
    PythonMerger(),
    ChangelogMerger(),
    DocsMerger(),
    IniMerger(),
    RequirementsMerger(),
    TomlMerger(),
    YamlMerger(),
    JsonMerger(),
    *TREE_SITTER_MERGERS,
)
"""The built-in mergers, one per line; a file's name patterns are tried in this order, then its extension."""


def _names(names: Sequence[str]) -> str:
    shown = ", ".join(names[:4])
    return shown + (f" and {len(names) - 4} more" if len(names) > 4 else "") if names else "nothing"


class StructuredResolver:
    """Merges definitions independently when the two sides changed different ones; the registry is by extension."""

    rung: Rung = "structured"

    def __init__(self, mergers: Sequence[LanguageMerger] = DEFAULT_MERGERS) -> None:
        self._by_name = [(pattern, merger) for merger in mergers for pattern in merger.file_names]
        self._by_extension = {ext: merger for merger in mergers for ext in merger.extensions}

    def merger_for(self, path: str) -> LanguageMerger | None:
        """The merger whose name pattern the file's name matches first, else the one for its extension, if any.

        A pattern with a slash (`requirements/*.txt`) is matched against as many trailing parts of the path.
        """
        parts = PurePosixPath(path).parts
        for pattern, merger in self._by_name:
            if fnmatch.fnmatchcase("/".join(parts[-pattern.count("/") - 1 :]).lower(), pattern.lower()):
                return merger
        return self._by_extension.get(PurePosixPath(path).suffix.lower())

    def resolve_now(self, conflict: FileConflict) -> Resolution | None:
        """The entity-level merge of `conflict`, or None (no merger, a side missing, or one entity changed twice)."""
        merger = self.merger_for(conflict.path)
        if merger is None or conflict.base is None or conflict.ours is None or conflict.theirs is None:
            return None
        merged = merger.merge(conflict.base, conflict.ours, conflict.theirs)
        if merged is None:
            return None
        reason = (
            f"entity merge: ours changed {_names(merged.ours_changed)}; theirs changed {_names(merged.theirs_changed)}"
        )
        reason += "".join(f"; {note}" for note in merged.notes)
        confidence: Confidence = "low" if merged.low_confidence else "high"
        return Resolution(path=conflict.path, text=merged.text, rung="structured", reason=reason, confidence=confidence)

    async def resolve(self, conflict: FileConflict, context: MergeContext) -> Resolution | None:
        """Merge entity by entity, off the event loop."""
        return await asyncio.to_thread(self.resolve_now, conflict)
