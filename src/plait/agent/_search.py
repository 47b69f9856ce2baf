"""The finding tools: list_files and search, which leave out `.git` and what git ignores."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterable, Iterator
from pathlib import Path

from plait.agent._files import ToolFailure
from plait.errors import EnvironmentProblem
from plait.workspace import gitcall

__all__ = ["glob_regex", "list_files", "search"]

_SNIFF = 8192
_MAX_TEXT = 300
_ESCAPE_HINT = "Escape characters such as ( [ . * + ? with a backslash to match them literally."


def _translate(pattern: str) -> str:
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        close = pattern.find("]", i + 2) if c == "[" else pattern.find("}", i + 1) if c == "{" else -1
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[" and close != -1:
            body = pattern[i + 1 : close]
            body = "^" + body[1:] if body.startswith("!") else body
            out.append("[" + body.replace("\\", "\\\\") + "]")
            i = close
        elif c == "{" and close != -1:
            out.append("(?:" + "|".join(_translate(alt) for alt in pattern[i + 1 : close].split(",")) + ")")
            i = close
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def glob_regex(pattern: str) -> re.Pattern[str]:
    """A regex matching '/'-separated relative paths; a pattern without '/' matches file names at any depth."""
    pattern = pattern.strip().removeprefix("./").lstrip("/") or "**"
    prefix = "" if "/" in pattern else "(?:.*/)?"
    try:
        return re.compile(prefix + _translate(pattern))
    except re.error as exc:
        raise ToolFailure(f"invalid glob {pattern!r}: {exc}") from exc


def _git_files(root: Path, base: Path) -> list[str] | None:
    """Files under `base`, relative to `root`, as git lists them; None when `root` is not a git work tree."""
    if not (root / ".git").exists():
        return None
    # From the worktree's top, never from inside a repository an agent nested in it, with plait's safe options.
    spec = os.path.relpath(base, root)
    args = ("ls-files", "-z", "--cached", "--others", "--exclude-standard", "--full-name", "--", spec)
    try:
        done = gitcall.run_bytes(args, root)
    except (EnvironmentProblem, gitcall.GitError):
        return None
    if done.returncode != 0:
        return None
    names = {os.fsdecode(n) for n in done.stdout.split(b"\0") if n}
    return [n for n in names if os.path.lexists(root / n) and not (root / n).is_dir()]


def _walk_files(root: Path, base: Path) -> list[str]:
    found: list[str] = []
    for top, dirs, files in os.walk(base):
        dirs[:] = [d for d in dirs if d.casefold() != ".git"]
        rel = Path(top).relative_to(root)
        found.extend((rel / name).as_posix() for name in files)
    return found


def _files(root: Path, base: Path, pattern: str) -> list[str]:
    """Sorted files under `base` (relative to `root`) whose path below `base` matches the glob."""
    if not base.exists():
        raise ToolFailure(f"directory not found: {base.relative_to(root).as_posix()}. Use list_files to look around.")
    rel_base = base.relative_to(root).as_posix()
    if base.is_file():
        return [rel_base]
    names = _git_files(root, base)
    names = _walk_files(root, base) if names is None else names
    skip = 0 if rel_base == "." else len(rel_base) + 1
    regex = glob_regex(pattern)
    # The glob is matched below `base`, or from the root, since models write it either way.
    return sorted(
        n
        for n in names
        if ".git" not in n.casefold().split("/") and (regex.fullmatch(n[skip:]) or (skip and regex.fullmatch(n)))
    )


def _where(shown: str) -> str:
    return "the repository" if shown.strip() in ("", ".", "./") else shown


def _capped(lines: Iterable[str], limit: int, what: str) -> tuple[str, int]:
    """Join lines up to `limit` characters; return the text and how many lines there were in all."""
    kept: list[str] = []
    size = total = 0
    for total, line in enumerate(lines, start=1):
        if size + len(line) + 1 <= limit - 120 and len(kept) == total - 1:
            kept.append(line)
            size += len(line) + 1
    if total > len(kept):
        kept.append(f"[... {total - len(kept)} more {what} not shown: narrow the pattern or the path]")
    return "\n".join(kept), total


def list_files(root: Path, base: Path, shown: str, pattern: str, limit: int) -> str:
    """The files under `base` matching `pattern`, one a line, relative to the root."""
    if base.is_file():
        raise ToolFailure(f"{shown} is a file, not a directory: use read_file to read it.")
    text, total = _capped(_files(root, base, pattern), limit, "files")
    return text if total else f"no files match {pattern!r} in {_where(shown)}."


def _text_lines(path: Path) -> Iterator[tuple[int, str]]:
    """Numbered lines of a text file, nothing for a binary file or a symlink (which may lead outside)."""
    if path.is_symlink():
        return
    try:
        with path.open("rb") as fh:
            if b"\0" in fh.read(_SNIFF):
                return
        with path.open(encoding="utf-8", errors="replace") as fh:
            yield from enumerate((line.rstrip("\n") for line in fh), start=1)
    except OSError:
        return


def _python_search(root: Path, base: Path, regex: re.Pattern[str], glob: str | None) -> Iterator[str]:
    for name in _files(root, base, glob or "**"):
        for number, line in _text_lines(root / name):
            if regex.search(line):
                yield f"{name}:{number}: {line[:_MAX_TEXT]}"


def _ripgrep(rg: str, root: Path, base: Path, pattern: str, glob: str | None, ignore_case: bool) -> Iterator[str]:
    args = [rg, "--line-number", "--no-heading", "--color", "never", "--with-filename", "--null", "--hidden"]
    args += ["--sort", "path", "--max-columns", str(_MAX_TEXT), "--max-columns-preview"]
    args += (["--ignore-case"] if ignore_case else []) + (["--glob", glob] if glob else []) + ["--glob", "!.git"]
    args += ["--regexp", pattern, "--", base.relative_to(root).as_posix()]
    with subprocess.Popen(args, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        assert proc.stdout is not None
        assert proc.stderr is not None
        matched = False
        for raw in proc.stdout:
            name, _, rest = os.fsdecode(raw.rstrip(b"\n")).partition("\0")
            number, _, text = rest.partition(":")
            matched = True
            yield f"{name.removeprefix('./')}:{number}: {text}"
        error = proc.stderr.read().decode(errors="replace").strip()
        if proc.wait() == 2 and not matched:
            if "regex parse error" in error:
                reason = error.splitlines()[-1].removeprefix("error: ")
                raise ToolFailure(f"invalid regular expression {pattern!r}: {reason}. {_ESCAPE_HINT}")
            raise ToolFailure(f"search failed: {' '.join(error.split())[:500] or 'ripgrep exit status 2'}")


def search(
    root: Path,
    base: Path,
    shown: str,
    pattern: str,
    glob: str | None,
    ignore_case: bool,
    limit: int,
    rg: str | None,
) -> str:
    """Lines matching `pattern` under `base`, as `path:line: text`, with ripgrep at `rg` or in Python."""
    if not base.exists():
        raise ToolFailure(f"not found: {shown}. Use list_files to look around.")
    if rg:
        lines = _ripgrep(rg, root, base, pattern, glob, ignore_case)
    else:
        try:
            regex = re.compile(pattern, re.IGNORECASE if ignore_case else 0)
        except re.error as exc:
            raise ToolFailure(f"invalid regular expression {pattern!r}: {exc}. {_ESCAPE_HINT}") from exc
        lines = _python_search(root, base, regex, glob)
    text, total = _capped(lines, limit, "matches")
    return text if total else f"no matches for {pattern!r} in {_where(shown)}."
