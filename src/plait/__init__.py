"""plait: run LLM coding agents in parallel git worktrees and weave their work into one result."""

__version__ = "0.1.0"
__all__ = ["__version__"]
