"""Running tasks: orchestration of agents, worktrees and the event log."""
