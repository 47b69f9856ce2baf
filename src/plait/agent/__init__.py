"""The coding agent: its tool loop, tools and prompts."""
