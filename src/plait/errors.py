"""Every error plait raises on purpose, rooted in `PlaitError`.

    PlaitError                      exit_code
    ├── UsageError                  2   bad flags, a malformed config file or script
    │   └── ConfigError                 a setting that cannot work here: a verify command that cannot run
    ├── EnvironmentProblem          3   not a git repo, no commits, a dirty checkout
    ├── ModelError                  4   a provider failed for good
    │   ├── MissingApiKey
    │   ├── BadApiKey
    │   ├── UnknownModel
    │   ├── BadReplyBody            a reply that is not one (`plait.messages`); retried, then this
    │   └── ScriptError             a scripted model was driven off its script
    ├── StateError                  5   a corrupt log, a run held by another process
    └── AgentFailed                 1   the agent stopped without finishing its task

Control-flow signals that end an agent's turn live in `plait.agent` and are not
errors. Every message is one line that says what happened and what to do.
"""

from __future__ import annotations

__all__ = [
    "AgentFailed",
    "BadApiKey",
    "ConfigError",
    "EnvironmentProblem",
    "MissingApiKey",
    "ModelError",
    "PlaitError",
    "ScriptError",
    "StateError",
    "UnknownModel",
    "UsageError",
]


class PlaitError(Exception):
    """Root of every error plait reports to a user."""

    exit_code = 1


class UsageError(PlaitError):
    exit_code = 2


class ConfigError(UsageError):
    """Found before anything is spent: the run stops, and the message says which setting to change."""


class EnvironmentProblem(PlaitError):
    exit_code = 3


class ModelError(PlaitError):
    exit_code = 4


class MissingApiKey(ModelError):
    pass


class BadApiKey(ModelError):
    pass


class UnknownModel(ModelError):
    pass


class ScriptError(ModelError):
    pass


class StateError(PlaitError):
    exit_code = 5


class AgentFailed(PlaitError):
    exit_code = 1
