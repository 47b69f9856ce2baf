"""Configuration files merged key by key: INI-style (setup.cfg, tox.ini), TOML, YAML and JSON.

Each file is read line by line into sections (or tables, or nested mappings) of keys, every key carrying the
comment and blank lines above it, so that what neither side changed is kept byte for byte. A value written on
several lines (a list of dependencies, of commands) is merged item by item; a requirement pin both sides bumped
takes the newer one. Anything the reader cannot place with certainty, or a result that does not parse, is None.
"""

from __future__ import annotations

from plait.reconcile.structured._ini import IniMerger
from plait.reconcile.structured._json import JsonMerger
from plait.reconcile.structured._toml import TomlMerger
from plait.reconcile.structured._yaml import YamlMerger

__all__ = ["IniMerger", "JsonMerger", "TomlMerger", "YamlMerger"]
