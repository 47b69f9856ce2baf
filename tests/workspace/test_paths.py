"""confine() against real directories and symlinks."""

from __future__ import annotations

from pathlib import Path

import pytest

from plait.workspace import PathEscape, confine


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "wt"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "pkg" / "mod.py").write_text("x = 1\n")
    (root / ".git").write_text("gitdir: /somewhere/.git/worktrees/wt\n")
    (tmp_path / "secret.txt").write_text("secret\n")
    (tmp_path / "outside").mkdir()
    return root


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("src/pkg/mod.py", "src/pkg/mod.py"),
        ("./src//pkg/mod.py", "src/pkg/mod.py"),
        ("src/pkg/../pkg/mod.py", "src/pkg/mod.py"),
        ("new/dir/file.txt", "new/dir/file.txt"),
        (".", ""),
        (".gitignore", ".gitignore"),
        ("src/.github/workflow.yml", "src/.github/workflow.yml"),
    ],
)
def test_paths_inside_are_resolved(root: Path, given: str, expected: str) -> None:
    assert confine(root, given) == (root / expected).resolve()


def test_an_absolute_path_inside_is_allowed(root: Path) -> None:
    assert confine(root, str(root / "src" / "pkg" / "mod.py")) == (root / "src/pkg/mod.py").resolve()


@pytest.mark.parametrize("given", ["/etc/passwd", "/", "/tmp"])
def test_an_absolute_path_outside_is_refused(root: Path, given: str) -> None:
    with pytest.raises(PathEscape, match="outside the worktree"):
        confine(root, given)


def test_an_absolute_path_that_climbs_out_is_refused(root: Path) -> None:
    with pytest.raises(PathEscape, match=r"'\.\.'"):
        confine(root, f"{root}/../secret.txt")


@pytest.mark.parametrize("given", ["..", "../secret.txt", "src/../../secret.txt", "src/pkg/../../../outside/x"])
def test_dot_dot_escapes_are_refused(root: Path, given: str) -> None:
    with pytest.raises(PathEscape, match=r"leaves the worktree through '\.\.'"):
        confine(root, given)


def test_a_symlinked_file_pointing_outside_is_refused(root: Path) -> None:
    (root / "link.txt").symlink_to(root.parent / "secret.txt")
    with pytest.raises(PathEscape, match="symlink link.txt .* outside the worktree"):
        confine(root, "link.txt")


def test_a_symlinked_directory_pointing_outside_is_refused_for_new_files_too(root: Path) -> None:
    (root / "src" / "out").symlink_to(root.parent / "outside", target_is_directory=True)
    with pytest.raises(PathEscape, match="outside the worktree"):
        confine(root, "src/out/new_file.py")
    with pytest.raises(PathEscape, match="outside the worktree"):
        confine(root, "src/out")


def test_a_dangling_symlink_pointing_outside_is_refused(root: Path) -> None:
    (root / "dangling").symlink_to("/nonexistent/target")
    with pytest.raises(PathEscape, match="outside the worktree"):
        confine(root, "dangling")


def test_a_symlink_inside_is_followed(root: Path) -> None:
    (root / "alias").symlink_to("src/pkg", target_is_directory=True)
    (root / "mod_link.py").symlink_to("src/pkg/mod.py")
    assert confine(root, "alias/mod.py") == (root / "src/pkg/mod.py").resolve()
    assert confine(root, "mod_link.py") == (root / "src/pkg/mod.py").resolve()
    assert confine(root, "alias/../README.md") == (root / "src/README.md").resolve()


@pytest.mark.parametrize("given", [".git", ".git/config", "./.git", "src/.git/hooks/pre-commit", ".GIT/config"])
def test_git_internals_are_refused(root: Path, given: str) -> None:
    with pytest.raises(PathEscape, match=r"inside \.git"):
        confine(root, given)


def test_a_symlink_into_git_is_refused(root: Path) -> None:
    (root / "sub" / ".git").mkdir(parents=True)
    (root / "hooks").symlink_to("sub/.git", target_is_directory=True)
    with pytest.raises(PathEscape, match=r"into \.git"):
        confine(root, "hooks/pre-commit")


@pytest.mark.parametrize("given", ["", "   ", "~", "~/.bashrc", "a\0b"])
def test_empty_home_and_nul_paths_are_refused(root: Path, given: str) -> None:
    with pytest.raises(PathEscape):
        confine(root, given)


def test_a_symlink_loop_is_refused(root: Path) -> None:
    (root / "a").symlink_to("b")
    (root / "b").symlink_to("a")
    with pytest.raises(PathEscape):
        confine(root, "a/file")


def test_the_root_may_itself_be_reached_through_a_symlink(root: Path, tmp_path: Path) -> None:
    alias = tmp_path / "alias"
    alias.symlink_to(root, target_is_directory=True)
    assert confine(alias, "src/pkg/mod.py") == (root / "src/pkg/mod.py").resolve()
    assert confine(alias, str(alias / "src")) == (root / "src").resolve()
    with pytest.raises(PathEscape):
        confine(alias, "../secret.txt")


def test_messages_are_one_line(root: Path) -> None:
    for given in ("", "../x", "/etc", ".git"):
        with pytest.raises(PathEscape) as err:
            confine(root, given)
        assert "\n" not in str(err.value)
