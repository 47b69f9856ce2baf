"""The shared board: notes agents post for each other, delivered each turn to the agents they concern.

The board is a view of the event log: every `NotePosted` of the run is on it, whoever appended it
(an agent through `post_note`, the radar, the planner, the merge queue). Each turn an agent gets the
notes new to it that concern it (addressed to it, touching its files, naming its contracts, or for
`all`), newest and addressed first, within a character budget; the rest wait for its next turn. Its
files are its write-set, its read-set, its contracts' files and the files it holds a claim on (the
log's `LeaseChanged` events).

Delivery is linear in the notes: a note is sorted once, as the board reads it from the log, to the
tasks it concerns (by address, by topic, by path: each path is matched once against every task's files)
or to everyone, and each agent reads on from where its last turn stopped. A claim is the only thing
that makes an older note concern a task, so a new claim looks its path up in the board's notes by path.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from plait.events.runlog import RunLog
from plait.events.types import LeaseChanged, NotePosted, NotesDelivered
from plait.globs import _matcher, is_glob, matches, normalize
from plait.plan_model import Plan, PlanTask

__all__ = ["EVERYONE", "Board", "Note"]

EVERYONE = "all"
"""The topic of a note every agent receives."""

_NoteSource = Callable[[], Sequence[str]]


@dataclass(frozen=True)
class Note:
    """One note on the board, as the log holds it."""

    seq: int
    author: str
    topic: str
    text: str
    paths: tuple[str, ...] = ()
    to: tuple[str, ...] = ()

    def render(self) -> str:
        """The note as an agent reads it."""
        where = f" about {', '.join(self.paths)}" if self.paths else ""
        return f"[{self.topic}] from {self.author}{where}:\n{self.text}"


def _interest(plan: Plan, task: PlanTask) -> list[str]:
    """The paths a task cares about: its write-set, read-set and the files of its contracts."""
    names = set(task.provides) | set(task.consumes)
    contract_paths = [c.path for c in plan.contracts if c.name in names and c.path]
    return [*task.writes, *task.reads, *contract_paths]


@dataclass
class _Inbox:
    """Where one agent stands: how far it has read the notes sorted to it and those for everyone, and what waits."""

    mine: int = 0
    everyone: int = 0
    claims: set[str] = field(default_factory=set)
    """The claims whose notes have been looked up for it."""
    waiting: dict[int, Note] = field(default_factory=dict)


def _touches(patterns: list[str], paths: Iterable[str]) -> bool:
    literals = [p for p in patterns if not p.startswith("!") and not is_glob(p)]
    for path in paths:
        if matches(patterns, path) or any(matches([path], lit) for lit in literals):
            return True
    return False


class Board:
    """The notes of the run of `log`, and what each task of `plan` has been given of them."""

    def __init__(self, log: RunLog, plan: Plan, *, budget: int = 4000) -> None:
        self.log, self.plan, self.budget = log, plan, budget
        self.notes: list[Note] = []
        self._claimed: dict[str, set[str]] = {}
        self._given: dict[str, set[int]] = {}
        self._inboxes: dict[str, _Inbox] = {}
        self._interest: dict[str, list[str]] = {}
        self._topics: dict[str, frozenset[str]] = {}
        for task in plan.tasks:  # the first of a repeated id, as `Plan.task` finds it
            self._interest.setdefault(task.id, _interest(plan, task))
            self._topics.setdefault(task.id, frozenset([*task.provides, *task.consumes]))
        self._by_topic: dict[str, list[str]] = {}
        for task_id, topics in self._topics.items():
            for topic in topics:
                self._by_topic.setdefault(topic, []).append(task_id)
        self._covers = {
            task: (_matcher(patterns), [normalize(p) for p in patterns if not p.startswith("!") and not is_glob(p)])
            for task, patterns in self._interest.items()
        }
        """Each task's `_touches` of its own files, compiled once: its patterns, and its literal paths."""
        self._reach: dict[str, frozenset[str]] = {}
        self._by_path: dict[str, list[Note]] = {}
        """The notes a claim can make someone's, by path: those with paths, addressed to nobody, not for `all`."""
        self._sorted: dict[str, list[Note]] = {}
        """The notes sorted to each task: addressed to it, or on its contracts or files (claims aside)."""
        self._everyone: list[Note] = []
        self._cursor = 0
        self._lock = threading.Lock()

    @classmethod
    def from_log(cls, log: RunLog, plan: Plan, *, budget: int = 4000) -> Board:
        """The board of a run being resumed: every note posted, and which ones each agent was already given."""
        board = cls(log, plan, budget=budget)
        board._sync()
        rendered: dict[str, int] = {}
        for note in board.notes:
            rendered.setdefault(note.render(), note.seq)
        for event in log.events(kinds=["notes_delivered"]):
            if isinstance(event, NotesDelivered):
                given = board._given.setdefault(event.agent, set())
                given.update(rendered[text] for text in event.notes if text in rendered)
        return board

    def post(self, author: str, topic: str, text: str, paths: Sequence[str] = (), to: Sequence[str] = ()) -> Note:
        """Put a note on the board; it reaches the agents it concerns at their next turn."""
        clean = [normalize(p).rstrip("/") for p in paths if normalize(p)]
        topic = topic.strip() or "note"
        event = NotePosted(run_id=self.log.run_id, agent=author, topic=topic, text=text, paths=clean, to=list(to))
        seq = self.log.append(event).seq
        self._sync()
        return Note(seq, author, topic, text, tuple(clean), tuple(to))

    def concerns(self, note: Note, task_id: str) -> bool:
        """Whether `note` is for `task_id`: addressed to it, or (when addressed to nobody) touching its work."""
        if note.author == task_id:
            return False
        if note.to:
            return task_id in note.to
        if note.topic == EVERYONE:
            return True
        topics = self._topics.get(task_id)
        if topics is None:  # not a task of the plan
            return False
        if note.topic in topics:
            return True
        claimed = self._claimed.get(task_id)
        if claimed:
            return _touches([*self._interest[task_id], *sorted(claimed)], note.paths)
        return any(task_id in self._reached(path) for path in note.paths)

    def _reached(self, path: str) -> frozenset[str]:
        """The tasks whose own files (claims aside) a note on `path` touches, worked out once per path."""
        found = self._reach.get(path)
        if found is None:
            covered_by_note = _matcher([path])
            found = frozenset(
                task
                for task, (covers, literals) in self._covers.items()
                if covers(normalize(path)) or any(covered_by_note(lit) for lit in literals)
            )
            self._reach[path] = found
        return found

    def audience(self, note: Note) -> list[str]:
        """The tasks of the plan `note` concerns."""
        return [t.id for t in self.plan.tasks if self.concerns(note, t.id)]

    def notes_for(self, task_id: str) -> _NoteSource:
        """A `NoteSource` for the agent of `task_id`: each call returns what is new and relevant to it."""

        def take() -> list[str]:
            return self.take(task_id)

        return take

    def take(self, task_id: str) -> list[str]:
        """The notes new to `task_id` that concern it, within the budget; the rest wait for the next call."""
        self._sync()
        with self._lock:
            given = self._given.setdefault(task_id, set())
            inbox = self._inbox(task_id, given)
            # a claim let go since a note was judged may have taken it away; a new one was looked up
            waiting = [n for n in inbox.waiting.values() if self.concerns(n, task_id)]
            waiting.sort(key=lambda n: (task_id not in n.to, -n.seq))
            out: list[str] = []
            used = 0
            for note in waiting:
                text = note.render()
                if used + len(text) > self.budget:
                    if out:
                        break
                    text = text[: self.budget] + "... (cut: the note is longer than a turn's notes may be)"
                out.append(text)
                used += len(text)
                given.add(note.seq)
                del inbox.waiting[note.seq]
            left = len(waiting) - len(out)
        if left:
            out.append(
                f"({left} more note(s) wait for your next turn: this turn's notes reached {self.budget} characters.)"
            )
        return out

    def _inbox(self, task_id: str, given: set[int]) -> _Inbox:
        """`task_id`'s inbox, brought up to date with the notes posted and the claims it made since its last turn."""
        inbox = self._inboxes.setdefault(task_id, _Inbox())
        claims = self._claimed.get(task_id, set())
        for claim in claims - inbox.claims:
            for path, notes in self._by_path.items():
                if _touches([claim], [path]):
                    self._wait(inbox, [n for n in notes if self.concerns(n, task_id)], given)
        inbox.claims = set(claims)
        mine = self._sorted.get(task_id, [])
        self._wait(inbox, mine[inbox.mine :], given)
        self._wait(inbox, [n for n in self._everyone[inbox.everyone :] if n.author != task_id], given)
        inbox.mine, inbox.everyone = len(mine), len(self._everyone)
        return inbox

    @staticmethod
    def _wait(inbox: _Inbox, notes: list[Note], given: set[int]) -> None:
        for note in notes:
            if note.seq not in given:
                inbox.waiting[note.seq] = note

    def _sort(self, note: Note) -> None:
        """Send `note` to the tasks it concerns now, or to everyone; index it by path for claims made later."""
        if note.to:
            tasks: Iterable[str] = note.to
        elif note.topic == EVERYONE:
            self._everyone.append(note)
            return
        else:
            for path in dict.fromkeys(note.paths):
                self._by_path.setdefault(path, []).append(note)
            reached = [t for path in note.paths for t in self._reached(path)]
            holders = [t for t, claimed in self._claimed.items() if claimed and self.concerns(note, t)]
            tasks = [*self._by_topic.get(note.topic, []), *reached, *holders]
        for task in dict.fromkeys(tasks):
            if task != note.author:
                self._sorted.setdefault(task, []).append(note)

    def _sync(self) -> None:
        with self._lock:
            for event in self.log.events(kinds=["note", "lease"], after=self._cursor):
                if isinstance(event, NotePosted):
                    note = self._note(event)
                    self.notes.append(note)
                    self._sort(note)
                elif isinstance(event, LeaseChanged):
                    self._lease(event)
                self._cursor = max(self._cursor, event.seq)

    def _lease(self, event: LeaseChanged) -> None:
        """Follow the claims: a claimed path is one of its task's files until it is released or expires."""
        if event.action == "claim":
            self._claimed.setdefault(event.task, set()).add(event.path)
        elif event.action in ("release", "expire"):
            self._claimed.get(event.task, set()).discard(event.path)

    @staticmethod
    def _note(event: NotePosted) -> Note:
        return Note(event.seq, event.agent, event.topic, event.text, tuple(event.paths), tuple(event.to))
