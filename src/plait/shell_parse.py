"""Split a shell command line into the simple commands a policy judges, and the files it redirects into."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import PurePath

__all__ = ["Parsed", "parse"]

_SEPARATORS = frozenset({";", "&", "&&", "|", "||", "|&", "(", ")", "\n", ";;", ")|", ")|&", ");", ")&", ");;"})
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_HEREDOC = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1([^\n]*)\n.*?\n\s*\2[ \t]*(?=\n|$)", re.S)
_SHELLS = frozenset({"bash", "sh", "dash", "zsh", "ksh"})
_WRAPPERS = frozenset({"command", "exec", "nohup", "time", "builtin", "stdbuf", "setsid", "ionice", "chrt"})
_GIT_VALUED = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--config-env"})
_MAX_DEPTH = 4


@dataclass
class Parsed:
    """The simple commands of a command line (argv lists, wrappers unwrapped too) and its redirection targets."""

    commands: list[tuple[str, ...]] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)
    """Files written by `>`, `>>` or `&>`, as written (relative to the working directory when not absolute)."""
    exact: bool = True
    """False when the line could not be tokenized (unbalanced quotes): the commands are a whitespace split."""


def _is_separator(token: str) -> bool:
    return token in _SEPARATORS or (bool(token) and set(token) <= set(";&|()\n"))


def _unwrap(argv: tuple[str, ...]) -> tuple[str, ...] | None:
    """The command a wrapper such as `env`, `nohup`, `timeout` or `sudo` runs, or None if `argv` is no wrapper."""
    head, rest = PurePath(argv[0]).name, list(argv[1:])
    if head in _WRAPPERS or head in ("sudo", "doas", "nice", "env", "timeout", "xargs"):
        while rest and (rest[0].startswith("-") or _ASSIGNMENT.match(rest[0])):
            flag = rest.pop(0)
            if head in ("nice", "timeout", "sudo") and flag in ("-n", "-s", "-k", "-u", "-g") and rest:
                rest.pop(0)
        if head == "timeout" and rest:
            rest.pop(0)
        return tuple(rest) or None
    return None


def _normalize(argv: tuple[str, ...]) -> tuple[str, ...]:
    """argv with leading assignments dropped, the program by its base name, and git's global options removed."""
    words = list(argv)
    while words and _ASSIGNMENT.match(words[0]):
        words.pop(0)
    if not words:
        return ()
    words[0] = PurePath(words[0]).name or words[0]
    if words[0] == "git":
        rest = words[1:]
        while rest and rest[0].startswith("-"):
            flag = rest.pop(0)
            if flag in _GIT_VALUED and rest:
                rest.pop(0)
        words = ["git", *rest]
    return tuple(words)


def _tokens(line: str) -> tuple[list[str], bool]:
    lexer = shlex.shlex(_HEREDOC.sub(r"\3", line), posix=True, punctuation_chars=";&|()<>\n")
    lexer.whitespace_split = True
    lexer.whitespace = " \t\r"
    try:
        return list(lexer), True
    except ValueError:
        return line.split(), False


def _split(tokens: list[str], parsed: Parsed) -> list[tuple[str, ...]]:
    """Simple commands between separators; redirections and their targets are taken out."""
    out: list[tuple[str, ...]] = []
    current: list[str] = []
    redirect = ""
    for token in tokens:
        if redirect:
            if ">" in redirect and not redirect.endswith("&") and token not in ("-",):
                parsed.writes.append(token)
            redirect = ""
        elif _is_separator(token):
            if current:
                out.append(tuple(current))
            current = []
        elif set(token) <= set("<>&") and ("<" in token or ">" in token):
            redirect = token
            if current and current[-1].isdigit():
                current.pop()
        elif token != "$":
            current.append(token)
    if current:
        out.append(tuple(current))
    return out


def _collect(line: str, parsed: Parsed, depth: int) -> None:
    tokens, exact = _tokens(line)
    parsed.exact = parsed.exact and exact
    for argv in _split(tokens, parsed):
        _add(argv, parsed, depth)


def _add(argv: tuple[str, ...], parsed: Parsed, depth: int) -> None:
    argv = _normalize(argv)
    if not argv:
        return
    parsed.commands.append(argv)
    if depth >= _MAX_DEPTH:
        return
    if argv[0] in _SHELLS and "-c" in argv[1:-1]:
        _collect(argv[argv.index("-c") + 1], parsed, depth + 1)
    elif argv[0] == "eval" and len(argv) > 1:
        _collect(" ".join(argv[1:]), parsed, depth + 1)
    elif (inner := _unwrap(argv)) is not None:
        _add(inner, parsed, depth + 1)


def parse(line: str) -> Parsed:
    """The simple commands in `line`, including those run through `bash -c`, `eval` and wrappers like `env`."""
    parsed = Parsed()
    _collect(line, parsed, 0)
    return parsed
