"""What the LLM rung sends: the conflict hunks of related files with the code around them, and why each side
changed them."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass, field

from plait.agent.instructions import ProjectInstructions
from plait.messages import ToolSpec
from plait.reconcile._intent import (
    Commit,
    clean_message,
    region_commits,
    relevant_notes,
    words,
)
from plait.reconcile._locate import Located, Section
from plait.reconcile._mergefile import split_lines
from plait.reconcile._moved import def_lines, moved
from plait.reconcile._whole_prompt import fence as _fence
from plait.reconcile.types import Finding, MergeContext, MergeSite

__all__ = [
    "RESOLVE_CONFLICTS",
    "SYSTEM",
    "Facts",
    "gather",
    "hunk_prompt",
    "relevant_findings",
    "settled",
    "with_instructions",
]

SYSTEM = """You resolve git merge conflicts. Two sides changed the same code from a common base: "ours" is \
already integrated, "theirs" is being merged in. Each conflict is shown where it sits, as a block

<<<<<<< H<n> ours
(ours' lines)
||||||| base
(the base's lines)
=======
(theirs' lines)
>>>>>>> H<n> theirs

inside the code around it as git merged it. That code stays as it is. A long side that mostly keeps the \
base's lines is shown as its diff against them (a line saying so, then `@@`, `-` and `+` lines).
For each block, write the lines that replace the whole block, markers included. Keep what each side meant to \
do (their commits and tasks say why): when the changes are compatible, combine them; when they contradict, \
choose what fits the code around it and both intents. Keep the file's indentation and style, and do not \
repeat the lines above or below the block.
Answer by calling `resolve_conflicts` once, with a text for every block. Use `edits` only when code outside \
the blocks must change for the result to work (a name the other side renamed, an import a resolved block \
needs), and only in the code shown or at the places listed as needing a change."""

RESOLVE_CONFLICTS = ToolSpec(
    name="resolve_conflicts",
    description="Give the lines that replace each conflict block, and any edit needed outside the blocks.",
    parameters={
        "type": "object",
        "properties": {
            "hunks": {
                "type": "array",
                "description": "One entry per conflict block.",
                "items": {
                    "type": "object",
                    "properties": {
                        "id": {"type": "string", "description": "The block's id: H1, H2, ..."},
                        "text": {
                            "type": "string",
                            "description": "The lines replacing the whole block (may be empty).",
                        },
                    },
                    "required": ["id", "text"],
                },
            },
            "edits": {
                "type": "array",
                "description": "Changes outside the blocks, only in the code shown or at the places listed.",
                "items": {
                    "type": "object",
                    "properties": {
                        "path": {"type": "string"},
                        "find": {"type": "string", "description": "Exact lines to change; must occur once."},
                        "replace": {"type": "string"},
                    },
                    "required": ["path", "find", "replace"],
                },
            },
        },
        "required": ["hunks"],
    },
)

_LANG = {"py": "python", "pyi": "python", "md": "markdown", "rst": "rst", "yml": "yaml", "yaml": "yaml"}
_LANG |= {"toml": "toml", "cfg": "ini", "ini": "ini", "js": "javascript", "ts": "typescript", "json": "json"}
_TASK, _SUMMARY, _DIFF, _FINDINGS, _COMPACT, _EARLIER = 800, 400, 30, 10, 20, 12


@dataclass
class Facts:
    """What git's history says about each section: its commits per side, and where deleted code went."""

    commits: dict[tuple[str, int, str], list[Commit]] = field(default_factory=dict)
    """(path, section index, side) -> commits."""
    moved: dict[tuple[str, int], list[str]] = field(default_factory=dict)
    places: dict[str, list[tuple[int, int, str]]] = field(default_factory=dict)
    """path -> ours-view lines (start, end, name) of a def or class a side moved out of a hunk within the file."""


def gather(site: MergeSite | None, located: Sequence[Located]) -> Facts:
    """Read the history behind every section (git; run it in a thread)."""
    facts = Facts()
    for loc in located:
        path = loc.conflict.path
        real = def_lines(loc.conflict.base or "") if loc.python else None
        for k, section in enumerate(loc.sections):
            facts.moved[(path, k)] = [s for p in section.pieces for s in moved(site, loc, p, facts.places, real)]
            if site is None:
                continue
            hunk_words = words(
                line for p in section.pieces for s in ("ours", "base", "theirs") for line in getattr(p.hunk, s)
            )
            for side in ("ours", "theirs"):
                found: dict[str, Commit] = {}
                size = len(split_lines(getattr(loc.conflict, side) or ""))
                for piece in section.pieces:
                    for commit in region_commits(site, side, path, piece.spans[side], hunk_words, size):
                        found.setdefault(commit.sha, commit)
                facts.commits[(path, k, side)] = list(found.values())[:5]
    return facts


def _line(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"


def _side(lines: Sequence[str], base: Sequence[str], where: str) -> list[str]:
    """A side's lines in a block; a long one that mostly keeps the base's lines as its diff against them."""
    if len(lines) >= _COMPACT and len(base) >= _COMPACT:
        a, b = [_line(x) for x in base], [_line(x) for x in lines]
        diff = [x if x.endswith("\n") else x + "\n" for x in difflib.unified_diff(a, b, n=1)][2:]
        if len(diff) * 3 <= len(lines):
            return [f"(the base's {len(base)} lines {where}, with these changes; a diff, not the text)\n", *diff]
    return [_line(x) for x in lines]


def _block(loc: Located, section: Section) -> list[str]:
    out: list[str] = []
    pos = section.start
    for piece in section.pieces:
        hunk = piece.hunk
        out.extend(loc.view[pos : piece.start])
        out.append(f"<<<<<<< {piece.id} ours\n")
        out.extend(_side(hunk.ours, hunk.base, "below"))
        out.append("||||||| base\n")
        out.extend(_line(x) for x in hunk.base)
        out.append("=======\n")
        out.extend(_side(hunk.theirs, hunk.base, "above"))
        out.append(f">>>>>>> {piece.id} theirs\n")
        pos = piece.end
    out.extend(loc.view[pos : section.end])
    if out and not out[-1].endswith("\n"):
        out[-1] += "\n"
    return out


def _touches(a: int, b: int, spans: Sequence[tuple[int, int]]) -> bool:
    return any(max(a, s) < min(b, e) or (a == b and s <= a <= e) or (s == e and a <= s <= b) for s, e in spans)


_Opcodes = Sequence[tuple[str, int, int, int, int]]


def _opcodes(loc: Located, side: str) -> _Opcodes:
    base, mine = split_lines(loc.conflict.base or ""), split_lines(getattr(loc.conflict, side) or "")
    return difflib.SequenceMatcher(None, base, mine, autojunk=False).get_opcodes()


def _clean_changes(loc: Located, section: Section, side: str, opcodes: _Opcodes) -> list[str]:
    """What `side` changed in the section outside the conflicts (git merged it), as -/+ lines."""
    b0, b1 = loc.maps["base"].span(section.start, section.end)
    s0, s1 = loc.maps[side].span(section.start, section.end)
    base = split_lines(loc.conflict.base or "")
    mine = split_lines(getattr(loc.conflict, side) or "")
    in_base = [p.spans["base"] for p in section.pieces]
    in_side = [p.spans[side] for p in section.pieces]
    out: list[str] = []
    for tag, i1, i2, j1, j2 in opcodes:
        inside = b0 <= i1 and i2 <= b1 and s0 <= j1 and j2 <= s1
        if tag == "equal" or not inside or _touches(i1, i2, in_base) or _touches(j1, j2, in_side):
            continue
        out += [_line("-" + x) for x in base[i1:i2]] + [_line("+" + x) for x in mine[j1:j2]]
    return out if len(out) <= _DIFF else [*out[:_DIFF], "…\n"]


def _commits(found: Sequence[Commit], seen: set[str]) -> list[str]:
    out = []
    for c in found:
        body = "" if c.sha in seen or not c.body else " — " + "; ".join(c.body)
        out.append(f"- {c.sha} {c.subject}{body}")
        seen.add(c.sha)
    return out


def _section(
    loc: Located,
    k: int,
    section: Section,
    facts: Facts,
    seen: set[str],
    opcodes: dict[str, _Opcodes],
) -> list[str]:
    ids = ", ".join(p.id for p in section.pieces)
    where = f", in `{section.scope}`" if section.scope else ""
    lang = _LANG.get(loc.conflict.path.rsplit(".", 1)[-1], "")
    code = "".join(_block(loc, section))
    fence = _fence(code)
    parts = [f"### {ids}{where} (near line {section.start + 1})", f"{fence}{lang}\n{code}{fence}"]
    for side in ("ours", "theirs"):
        changes = _clean_changes(loc, section, side, opcodes[side])
        if changes:
            fence = _fence("".join(changes))
            parts.append(
                f"{side.capitalize()} also changed, outside the blocks (merged cleanly, already in the code above):\n"
                f"{fence}diff\n{''.join(changes)}{fence}"
            )
    for side in ("ours", "theirs"):
        found = facts.commits.get((loc.conflict.path, k, side), [])
        if found:
            parts.append(f"Why {side} changed these lines (its commits):\n" + "\n".join(_commits(found, seen)))
    parts.extend(facts.moved.get((loc.conflict.path, k), []))
    return parts


def _finding(f: Finding, by_path: dict[str, Located]) -> str:
    loc = by_path.get(f.path)
    head = f"- `{f.path}` line {f.line}: {f.message}"
    if loc is None:
        return head + f" (`{f.text.strip()}`; that file merged cleanly and is not changed here)"
    hits = [i for i, line in enumerate(loc.view) if line.strip() == f.text.strip() and line.strip()]
    if not hits:
        return head + f" (`{f.text.strip()}`)"
    at = min(hits, key=lambda i: abs(i + 1 - f.line))
    snippet = "".join(loc.view[max(0, at - 2) : at + 3])
    fence = _fence(snippet)
    return f"{head}\n{fence}\n{snippet}{'' if snippet.endswith(chr(10)) else chr(10)}{fence}"


def _tasks(context: MergeContext) -> list[str]:
    lines = []
    for side, task, summary in (
        ("ours (already integrated)", context.ours_task, context.ours_intent),
        ("theirs (being merged in)", context.theirs_task, context.theirs_intent),
    ):
        brief, done = clean_message(task, _TASK), clean_message(summary, _SUMMARY)
        if brief or done:
            lines.append(f"{side}:\n{brief}" + (f"\nWhat it did: {done}" if done else ""))
    return ["## The tasks behind each side", *lines] if lines else []


def relevant_findings(findings: Sequence[Finding], paths: Sequence[str]) -> list[Finding]:
    """The findings in these files, or about a name defined in one of them."""
    return [f for f in findings if f.path in paths or set(f.files) & set(paths)][:_FINDINGS]


def settled(loc: Located, texts: dict[str, str]) -> list[str]:
    """One line per block of a file already resolved in this merge: the first lines that replace it."""
    out = []
    for piece in loc.pieces:
        lines = [x.strip() for x in texts.get(piece.id, "").splitlines() if x.strip()]
        shown = " / ".join(lines[:3]) + (" / …" if len(lines) > 3 else "") if lines else "(removed: no lines)"
        out.append(f"- `{loc.conflict.path}` {piece.id}: {shown[:200]}")
    return out


def hunk_prompt(located: Sequence[Located], context: MergeContext, facts: Facts, earlier: Sequence[str] = ()) -> str:
    """The conflict blocks of `located` (one call), with their code, history, notes and findings, and the
    blocks of this merge resolved by earlier calls (`earlier`)."""
    paths = [loc.conflict.path for loc in located]
    ids = [p.id for loc in located for p in loc.pieces]
    parts = [f"# Conflicts to resolve: {len(ids)} block(s) in {len(paths)} file(s)", *_tasks(context)]
    seen: set[str] = set()
    hunk_words: set[str] = set()
    for loc in located:
        lang = _LANG.get(loc.conflict.path.rsplit(".", 1)[-1], "")
        parts.append(f"## `{loc.conflict.path}`")
        if not loc.conflict.base:
            parts.append("Both sides added this file (there is no base): each block is a place where they differ.")
        if loc.imports:
            imports = "".join(loc.imports)
            fence = _fence(imports)
            parts.append(f"Its imports, as merged:\n{fence}{lang}\n{imports}{fence}")
        opcodes = {side: _opcodes(loc, side) for side in ("ours", "theirs")} if loc.conflict.base else {}
        opcodes = opcodes or {"ours": [], "theirs": []}
        for k, section in enumerate(loc.sections):
            parts.extend(_section(loc, k, section, facts, seen, opcodes))
        places = sorted(set(facts.places.get(loc.conflict.path, [])))
        for start, end, name in [
            p for p in places if not any(q[0] <= p[0] and p[1] <= q[1] and q != p for q in places)
        ]:
            code = "".join(loc.view[start:end])
            fence = _fence(code)
            parts.append(
                f"### `{name}` where it is now (near line {start + 1}; merged cleanly)\n{fence}{lang}\n{code}{fence}"
            )
            hunk_words |= words(x for p in section.pieces for x in (*p.hunk.ours, *p.hunk.theirs))
    notes = relevant_notes(context.notes, paths, hunk_words)
    if notes:
        parts.append("## Notes posted about this code\n" + "\n".join(f"- {n}" for n in notes))
    by_path = {loc.conflict.path: loc for loc in located}
    findings = relevant_findings(context.findings, paths)
    if findings:
        parts.append(
            "## Places that may need a change\nplait's cross-branch check found these in git's merge (code it "
            "merged cleanly that uses a name one side removed or renamed). Change them with `edits` if the "
            "resolution calls for it:\n" + "\n".join(_finding(f, by_path) for f in findings)
        )
    if earlier:
        parts.append(
            "## Resolved earlier in this merge\nThe merge's other conflicts, as already settled (their first lines); "
            "keep to the same choices where they bear on these blocks:\n" + "\n".join(earlier[:_EARLIER])
        )
    parts.append(f"Call `resolve_conflicts` once, with a text for each of {', '.join(ids)}.")
    return "\n\n".join(parts) + "\n"


def with_instructions(
    system: str, site: MergeSite | None, paths: Sequence[str], known: dict[str, ProjectInstructions]
) -> str:
    """`system`, then the project instructions (AGENTS.md) of the root and of the directories of `paths`.

    They are read from the merge's base, the commit both sides started from; `known` keeps them by commit.
    """
    if site is None:
        return system
    base = site.repo.git("merge-base", site.ours, site.theirs, check=False).strip()
    if not base:
        return system
    if base not in known:
        known[base] = ProjectInstructions(site.repo.root, base)
    text = known[base].section(paths)
    return f"{system}\n\n{text}" if text else system
