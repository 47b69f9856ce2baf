"""The triage's prompt: short, the repository's size in a line (the project's own directories first)."""

from __future__ import annotations

from plait.plan.triage import repo_size, triage_system


def test_the_size_line_puts_the_project_s_own_directories_before_hidden_ones_and_stops_at_twelve() -> None:
    files = [f".github/w{i}.yml" for i in range(9)] + [f"src/m{i}.py" for i in range(3)] + ["README.md"]
    files += [f"d{k}/f.py" for k in range(20)]
    line = repo_size(files)
    assert line.startswith("33 tracked files (src/ 3, (root) 1, d0/ 1,")
    assert ".github/" not in line and line.endswith(", 11 more).")


def test_the_prompt_stays_under_what_a_provider_caches_for_a_large_repository() -> None:
    files = [f"pkg{k}/sub/module_{i}.py" for k in range(200) for i in range(50)]
    assert len(triage_system(files)) < 1024 * 3  # ~4 characters a token: well under 1,024 tokens
