"""Agents that talk: the shared board of notes, leases on files, and the tools that offer both."""

from plait.coord.board import EVERYONE, Board, Note
from plait.coord.leases import Claim, Leases, Refusal
from plait.coord.tools import coord_tools

__all__ = ["EVERYONE", "Board", "Claim", "Leases", "Note", "Refusal", "coord_tools"]
