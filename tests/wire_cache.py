"""Prompt caching as the providers bill it, for the wire server: a request's usage from what earlier ones cached.

    anthropic  explicit breakpoints (`cache_control` on a tool, a system block or a content block, at most
               4): each breakpoint reads the longest prefix an earlier request wrote at that block or at one
               of the 19 blocks before it, then writes its own prefix; `input_tokens` is what follows.
    openai     automatic: the longest run of leading 128-token chunks an earlier request with the same
               `prompt_cache_key` sent, from 1,024 tokens on (`min_tokens`); `prompt_tokens` counts it all.

Tokens are estimated at 4 characters each, piece by piece (a tool, a system block, a content block, a message).
Hits are certain and entries never expire: a request whose marks miss here misses at the provider too.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
from dataclasses import dataclass, field
from typing import Any

__all__ = ["CacheUsage", "PromptCache", "prompt_tokens"]

_LOOKBACK = 20
_CHUNK = 128


@dataclass(frozen=True)
class CacheUsage:
    """Tokens of one request: all of it, read from the cache, written to it."""

    total: int
    read: int = 0
    written: int = 0


def _tokens(piece: Any) -> int:
    return math.ceil(len(json.dumps(piece, sort_keys=True)) / 4)


def _plain(piece: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in piece.items() if k != "cache_control"}


def prompt_tokens(piece: dict[str, Any]) -> int:
    """The tokens this cache counts for one piece of an Anthropic prompt (a tool, a system block)."""
    return _tokens(_plain(piece))


def _chain(pieces: list[Any]) -> tuple[list[str], list[int]]:
    """The hash of every prefix ending at each piece, and the tokens up to and including it."""
    digest, hashes, ends, total = "", [], [], 0
    for piece in pieces:
        digest = hashlib.sha256((digest + json.dumps(piece, sort_keys=True)).encode()).hexdigest()
        total += _tokens(piece)
        hashes.append(digest)
        ends.append(total)
    return hashes, ends


def _anthropic_pieces(body: dict[str, Any]) -> list[dict[str, Any]]:
    """Tools, system blocks, then each content block with its role, in the order Anthropic caches them."""
    system = body.get("system") or []
    blocks = [{"type": "text", "text": system}] if isinstance(system, str) else list(system)
    pieces = [*body.get("tools", []), *blocks]
    for message in body.get("messages", []):
        content = message["content"]
        content = [{"type": "text", "text": content}] if isinstance(content, str) else content
        pieces += [{"role": message["role"], **block} for block in content]
    return pieces


@dataclass
class PromptCache:
    """The cache of one server, shared by all its requests; `min_tokens` is the shortest prefix cached."""

    min_tokens: int = 1024
    entries: set[str] = field(default_factory=set)
    breakpoints: list[int] = field(default_factory=list)
    """How many breakpoints each Anthropic request carried."""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def anthropic(self, body: dict[str, Any]) -> CacheUsage:
        pieces = _anthropic_pieces(body)
        marks = [i for i, piece in enumerate(pieces) if "cache_control" in piece]
        hashes, ends = _chain([_plain(p) for p in pieces])
        total = ends[-1] if ends else 0
        marks = [i for i in marks if ends[i] >= self.min_tokens]
        with self.lock:
            self.breakpoints.append(len([p for p in pieces if "cache_control" in p]))
            read = 0
            for mark in marks:
                for i in range(mark, max(mark - _LOOKBACK, -1), -1):
                    if hashes[i] in self.entries and ends[i] >= self.min_tokens:
                        read = max(read, ends[i])
                        break
            self.entries.update(hashes[i] for i in marks)
        written = max((ends[i] for i in marks), default=0) - read
        return CacheUsage(total, read, max(written, 0))

    def openai(self, body: dict[str, Any]) -> CacheUsage:
        text = json.dumps([body.get("tools", []), body.get("messages", [])], sort_keys=True)
        total = math.ceil(len(text) / 4)
        if total < self.min_tokens:
            return CacheUsage(total)
        key = str(body.get("prompt_cache_key") or "")
        step = _CHUNK * 4
        prefixes = [hashlib.sha256((key + text[:end]).encode()).hexdigest() for end in range(step, len(text), step)]
        with self.lock:
            hits = 0
            while hits < len(prefixes) and prefixes[hits] in self.entries:
                hits += 1
            self.entries.update(prefixes)
        read = hits * _CHUNK if hits * _CHUNK >= self.min_tokens else 0
        return CacheUsage(total, read, len(prefixes) * _CHUNK - read)
