"""Only files inside the checkout are copied into a worktree, whoever wrote the pattern."""

from __future__ import annotations

from pathlib import Path

from plait.workspace import Repo
from plait.workspace.bootstrap import Bootstrap


def test_patterns_and_symlinks_leading_out_of_the_checkout_copy_nothing(repo: Repo, tmp_path: Path) -> None:
    secrets = tmp_path / "home" / ".ssh"
    secrets.mkdir(parents=True)
    (secrets / "id_ed25519").write_text("PRIVATE KEY\n")
    (repo.root / ".env").write_text("TOKEN=local\n")
    (repo.root / "keys").symlink_to(secrets)
    (repo.root / "key.pem").symlink_to(secrets / "id_ed25519")
    patterns = (".env", "../home/.ssh/*", "keys/*", "*.pem", str(secrets / "*"))
    wt = repo.add_worktree(tmp_path / "worktrees" / "wt", "b", repo.head())

    copied = Bootstrap(repo.root, patterns).copy_includes(wt.path)

    assert copied == [".env"]
    assert not any("PRIVATE" in p.read_text() for p in wt.path.rglob("*") if p.is_file() and ".git" not in p.parts)


def test_a_copy_is_never_written_through_a_symlink_in_the_worktree(repo: Repo, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (repo.root / "conf").mkdir()
    (repo.root / "conf" / "local.json").write_text("{}")
    wt = repo.add_worktree(tmp_path / "wt", "b", repo.head())
    (wt.path / "conf").symlink_to(outside)

    assert Bootstrap(repo.root, ("conf/*.json",)).copy_includes(wt.path) == []
    assert list(outside.iterdir()) == []
