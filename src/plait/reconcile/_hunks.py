"""Rules that settle one diff3 conflict hunk without judgement: each says whether it applies, or what to keep."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

__all__ = [
    "contains_other",
    "higher_version",
    "import_union",
    "is_import_block",
    "loose_equal",
    "opens_paren_import",
    "union_order",
]

Lines = Sequence[str]

_PY_IMPORT = re.compile(
    r"^\s*(?:import [\w.]+(?: as \w+)?(?:, *[\w.]+(?: as \w+)?)*"
    r"|from [\w.]+ import (?:\*|\w+(?: as \w+)?(?:, *\w+(?: as \w+)?)*,?))\s*(?:#.*)?$"
)
_PY_IMPORT_OPEN = re.compile(r"^\s*from [\w.]+ import \(\s*(?:#.*)?$")
_PY_IMPORT_ITEM = re.compile(r"^\s+\w+(?: as \w+)?,\s*(?:#.*)?$")
_JS_IMPORT = re.compile(
    r"^\s*(?:import\s.+\sfrom\s+['\"][^'\"]+['\"]|import\s+['\"][^'\"]+['\"]|export\s.+\sfrom\s+['\"][^'\"]+['\"]"
    r"|(?:const|let|var)\s+[\w{},\s]+=\s*require\(['\"][^'\"]+['\"]\))\s*;?\s*(?://.*)?$"
)
_VERSION = re.compile(r"0x[0-9a-fA-F]+|(\d+(?:\.\d+)+)(?:[.-]?(dev|alpha|beta|a|b|rc|c|post)(\d*))?", re.IGNORECASE)
_STAGES = {"dev": 0, "alpha": 1, "a": 1, "beta": 2, "b": 2, "rc": 3, "c": 3, "": 4, "post": 5}


def loose_equal(a: Lines, b: Lines, *, keep_indent: bool = False) -> bool:
    """Equal but for whitespace: anywhere, or (when indentation matters) trailing spaces and blank lines."""
    if keep_indent:
        return [line.rstrip() for line in a if line.strip()] == [line.rstrip() for line in b if line.strip()]
    return " ".join("".join(a).split()) == " ".join("".join(b).split())


def _is_subsequence(short: Lines, long: Lines) -> bool:
    it = iter(long)
    return all(any(line == other for other in it) for line in short)


def contains_other(side: Lines, other: Lines, base: Lines) -> bool:
    """Whether `other` already holds `side`'s whole change: its added lines, in order, and none it removed."""
    added = Counter(side) - Counter(base)
    if not added or not _is_subsequence(side, other):
        return False
    removed = Counter(base) - Counter(side)
    kept = Counter(other)
    return all(kept[line] <= Counter(base)[line] - count for line, count in removed.items())


def _version(match: re.Match[str]) -> tuple[int, ...]:
    if match.group(1) is None:
        return (int(match.group(0), 16),)
    numbers = [int(p) for p in match.group(1).split(".")]
    numbers += [0] * (6 - len(numbers))
    stage = (match.group(2) or "").lower()
    return (*numbers, _STAGES[stage], int(match.group(3) or 0))


def _version_key(lines: Lines) -> tuple[str, list[tuple[int, ...]]]:
    text = "".join(lines)
    shape = "".join(_VERSION.sub("#", text).replace("'", '"').split())
    return shape, [_version(m) for m in _VERSION.finditer(text)]


def higher_version(ours: Lines, base: Lines, theirs: Lines) -> str | None:
    """ "ours" or "theirs" when both sides changed only version numbers and one side's are higher throughout."""
    (o_shape, o_nums), (b_shape, _), (t_shape, t_nums) = map(_version_key, (ours, base, theirs))
    if not (o_shape == b_shape == t_shape) or o_nums == t_nums:
        return None
    signs = {(o > t) - (o < t) for o, t in zip(o_nums, t_nums, strict=True) if o != t}
    if signs == {1}:
        return "ours"
    if signs == {-1}:
        return "theirs"
    return None


def is_import_block(lines: Lines, language: str, *, in_paren_import: bool) -> bool:
    """Whether every non-blank line is an import (or, inside `from x import (`, one imported name)."""
    for line in lines:
        if not line.strip():
            continue
        if language == "python":
            if not (_PY_IMPORT.match(line) or (in_paren_import and _PY_IMPORT_ITEM.match(line))):
                return False
        elif language == "javascript":
            if not _JS_IMPORT.match(line):
                return False
        else:
            return False
    return True


def opens_paren_import(before: Lines) -> bool:
    """Whether the lines just above a hunk sit inside an open `from x import (` list."""
    for line in reversed(before):
        if _PY_IMPORT_OPEN.match(line):
            return True
        if not (_PY_IMPORT_ITEM.match(line) or not line.strip()):
            return False
    return False


def _sort_key(line: str) -> str:
    return line.strip().rstrip(",").lower()


def union_order(ours: Lines, base: Lines, theirs: Lines) -> list[str]:
    """Ours' lines less what theirs removed, plus theirs' new lines: in sorted place when ours' block is sorted,
    else after their predecessor in theirs."""
    base_set, theirs_set, ours_set = set(base), set(theirs), set(ours)
    result = [line for line in ours if not (line in base_set and line.strip() and line not in theirs_set)]
    code = [_sort_key(line) for line in result if line.strip()]
    is_sorted = len(code) > 1 and code == sorted(code)
    one_block = is_sorted and all(line.strip() for line in result)
    blank = ""
    """A blank line of theirs, put in only just above the next line theirs added (never between ours' lines)."""
    for i, line in enumerate(theirs):
        if line in ours_set or line in base_set or (not line.strip() and i == 0):
            continue
        if not line.strip():
            blank = line
            continue
        if one_block:
            result.insert(next((k for k, r in enumerate(result) if _sort_key(r) > _sort_key(line)), len(result)), line)
            blank = ""
            continue
        pos = 0
        for j in range(i - 1, -1, -1):
            if theirs[j] in result and theirs[j].strip():
                pos = result.index(theirs[j]) + 1
                break
        while pos < len(result) and result[pos] not in theirs_set and result[pos] not in base_set:
            if is_sorted and _sort_key(result[pos]) > _sort_key(line):
                break
            pos += 1
        if blank and pos and result[pos - 1].strip():
            result.insert(pos, blank)
            pos += 1
        blank = ""
        result.insert(pos, line)
    return result


def _bound(line: str) -> list[str]:
    """The names a Python import line (or one imported name) binds."""
    text = line.split("#", 1)[0].strip().rstrip(",")
    if text.startswith("from "):
        text = text.split(" import ", 1)[1] if " import " in text else ""
    elif text.startswith("import "):
        text = text[len("import ") :]
    names = []
    for part in text.strip("()").split(","):
        words = part.split()
        if words and words[0] != "*":
            names.append(words[-1] if len(words) == 3 and words[1] == "as" else words[0].split(".")[0])
    return names


def import_union(ours: Lines, base: Lines, theirs: Lines, *, python: bool = False) -> list[str] | None:
    """The union of two import blocks, deduplicated, in the file's own order.

    None for Python when two different lines would bind one name: a side changed where a name comes from.
    """
    merged = union_order(ours, base, theirs)
    seen: set[str] = set()
    bound: set[str] = set()
    out = []
    for line in merged:
        key = line.strip().rstrip(",")
        if key and key in seen:
            continue
        seen.add(key)
        if python:
            names = _bound(line)
            if bound & set(names):
                return None
            bound.update(names)
        out.append(line)
    return _tidy_blanks(out, ours)


def _tidy_blanks(lines: list[str], ours: Lines) -> list[str]:
    """No blank line the union made up: none doubled, none at an end of the block where ours has none."""
    out = [line for i, line in enumerate(lines) if line.strip() or i == 0 or lines[i - 1].strip()]
    if out and not out[-1].strip() and not (ours and not ours[-1].strip()):
        out.pop()
    if out and not out[0].strip() and not (ours and not ours[0].strip()):
        out.pop(0)
    return out


_KEYWORDS = "return|yield|raise|assert|del|pass|import|from|def|class|if|elif|else|for|while|with|try|except|finally"
_ITEM = re.compile(rf"^\s*(?![#/])(?!(?:{_KEYWORDS}|lambda)\b)[^=;{{}}]*?(?::[^=;{{}}]+)?,\s*(?:#.*|//.*)?$")
"""One item of a collection literal on its own line, ending in a comma: `"name",`, `key: value,`, `f(x),`."""
_OPENS = re.compile(r"[\[({,]\s*(?:#.*|//.*)?$")


def items_added_both(ours: Lines, base: Lines, theirs: Lines, before: Lines) -> list[str] | None:
    """Both sides only added items to the same collection literal (a registry's list, an `__all__`, a dict of
    handlers): every added line one item ending in a comma, just after an opening bracket or another item.
    Ours first, then theirs' items that ours does not hold already."""
    if base or not ours or not theirs:
        return None
    above = next((line for line in reversed(before) if line.strip()), "")
    if not _OPENS.search(above):
        return None
    added = [line for line in (*ours, *theirs) if line.strip()]
    if not added or not all(_ITEM.match(line) for line in added):
        return None
    mine = {line.strip() for line in ours}
    return [*ours, *(line for line in theirs if line.strip() not in mine)]
