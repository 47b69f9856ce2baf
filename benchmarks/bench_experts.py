"""Do experts pay for themselves? Tokens of workers who read an area themselves against workers who ask an expert.

W workers each need to know one area of a real repository (the files matched by --area) before they
go on with T more turns of their own work. Two ways, with the same scripted policy:

- baseline, "read it yourself": each worker reads every file of the area (two files a turn), then
  works T turns, then finishes. What it read stays in its context, so it is sent again with every
  later call.
- experts: each worker asks the area's expert one question (`ask_expert`), then works T turns. The
  expert (one persistent conversation, plait's `Expert`) reads the area once, for the first question,
  and answers the others from its context.

Every request is built by plait's real agent loop and tools over the real files, and counted as the
scripted models count it: characters / 4 of the whole request (system prompt, tools, messages) and of
the reply. "Input with caching" prices the part of each request that repeats the agent's previous
request at 0.1 (the usual prompt-cache discount), the rest at 1. No language model runs, so what is
measured is the context plait builds, not the quality of an answer.

Run: .venv/bin/python benchmarks/bench_experts.py [--repo PATH] [--area GLOB ...] [--turns T] [--workers 1 2 4 8]
"""

from __future__ import annotations

import argparse
import asyncio
import fnmatch
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from plait.agent.loop import Agent, AgentLimits
from plait.agent.tools import Toolbox
from plait.coord.asking import asking_tools
from plait.coord.experts import Expert, Experts, ExpertSpec
from plait.events import ModelCallFinished, SQLiteEventStore
from plait.events.runlog import RunLog
from plait.models.pricing import PriceTable
from plait.models.scripted import ScriptedModel
from plait.workspace import LocalShell

_ANSWER = (
    "The session interface is SessionInterface in src/flask/sessions.py: open_session(app, request) returns "
    "a SessionMixin or None; save_session(app, session, response) writes the cookie. SecureCookieSessionInterface "
    "signs with itsdangerous (salt 'cookie-session', key derivation 'hmac'); null sessions come from "
    "make_null_session. Cookie name, domain, path, httponly, secure and samesite come from app.config."
)


@dataclass
class Tally:
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cached_input: float = 0.0
    """Input tokens with the repeated prefix priced at 0.1."""


def _count(store: SQLiteEventStore) -> Tally:
    """The logged usage of every model call of the run; per agent, a request repeats its previous one."""
    tally, last = Tally(), dict[str, int]()
    for event in store.events("bench", kinds=["model_response"]):
        assert isinstance(event, ModelCallFinished)
        size = event.response.usage.input_tokens
        repeated = min(last.get(event.agent, 0), size)
        tally.calls += 1
        tally.input_tokens += size
        tally.output_tokens += event.response.usage.output_tokens
        tally.cached_input += (size - repeated) + 0.1 * repeated
        last[event.agent] = size
    return tally


def _files(root: Path, patterns: list[str]) -> list[str]:
    tracked = subprocess.run(["git", "ls-files"], cwd=root, check=True, capture_output=True, text=True).stdout.split()
    return [f for f in tracked if any(fnmatch.fnmatch(f, p) for p in patterns)]


def _reading_turns(files: list[str]) -> list[dict[str, object]]:
    turns: list[dict[str, object]] = []
    for i in range(0, len(files), 2):
        calls = [{"name": "read_file", "arguments": {"path": f}} for f in files[i : i + 2]]
        turns.append({"tool_calls": calls})
    return turns


def _work_turns(turns: int) -> list[dict[str, object]]:
    work: dict[str, object] = {"tool_calls": [{"name": "list_files", "arguments": {"pattern": "*.md"}}]}
    done: dict[str, object] = {"tool_calls": [{"name": "finish", "arguments": {"summary": "done"}}]}
    return [*[work] * turns, done]


async def _workers(root: Path, db: Path, workers: int, files: list[str], turns: int, with_expert: bool) -> Tally:
    conversations: list[dict[str, object]] = []
    for w in range(workers):
        first = (
            [{"tool_calls": [{"name": "ask_expert", "arguments": {"expert": "area", "question": f"Q{w}: how?"}}]}]
            if with_expert
            else _reading_turns(files)
        )
        conversations.append({"match": f"Worker {w}:", "turns": first + _work_turns(turns)})
    answer: dict[str, object] = {"tool_calls": [{"name": "answer", "arguments": {"answer": _ANSWER}}]}
    expert_turns = [*_reading_turns(files), *[answer] * workers]
    conversations.append({"match": "You are `area`", "turns": expert_turns})
    model = ScriptedModel(conversations=conversations)
    store = SQLiteEventStore(db)
    prices = PriceTable()
    experts = Experts()
    if with_expert:
        spec = ExpertSpec(name="area", area=files, brief="The area every worker needs.")
        experts.add(Expert(spec, log=RunLog(store, "bench"), model=model, prices=prices, root=root))
    runner = LocalShell()
    agents = []
    for w in range(workers):
        box = Toolbox(root, runner, read_only=True)
        agents.append(
            Agent(
                log=RunLog(store, "bench"),
                agent_id=f"w{w}",
                model=model,
                toolbox=box | asking_tools(f"w{w}", experts),
                prices=prices,
                system="You are a coding agent.",
                limits=AgentLimits(max_steps=500),
            )
        )
    results = await asyncio.gather(
        *(a.run(f"Worker {w}: learn the area, then do your part.") for w, a in enumerate(agents))
    )
    assert all(r.ok for r in results), [r.summary for r in results if not r.ok]
    tally = _count(store)
    store.close()
    return tally


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, default=Path("/work/.mirror/pallets+flask/repo"))
    parser.add_argument(
        "--area", nargs="+", default=["src/flask/sessions.py", "src/flask/ctx.py", "src/flask/globals.py"]
    )
    parser.add_argument("--turns", type=int, default=10, help="turns of its own work each worker does after learning")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4, 8])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "checkout"
        subprocess.run(["git", "clone", "-q", "--shared", str(args.repo), str(root)], check=True)
        files = _files(root, args.area)
        size = sum((root / f).stat().st_size for f in files)
        print(f"area: {len(files)} file(s), {size:,} bytes ({size // 4:,} tokens); {args.turns} work turns per worker")
        print()
        head = (
            f"{'workers':>7} | {'way':<14} | {'calls':>5} | {'input tok':>10} | {'output tok':>10} | "
            f"{'÷ baseline':>10} | {'input w/ cache':>14} | {'÷ baseline':>10}"
        )
        print(head)
        print("-" * len(head))
        for n, workers in enumerate(args.workers):
            base = asyncio.run(_workers(root, Path(tmp) / f"b{n}.db", workers, files, args.turns, False))
            mine = asyncio.run(_workers(root, Path(tmp) / f"e{n}.db", workers, files, args.turns, True))
            for way, t in (("read it", base), ("ask an expert", mine)):
                ratio = (t.input_tokens + t.output_tokens) / (base.input_tokens + base.output_tokens)
                cached = (t.cached_input + t.output_tokens) / (base.cached_input + base.output_tokens)
                print(
                    f"{workers:>7} | {way:<14} | {t.calls:>5} | {t.input_tokens:>10,} | {t.output_tokens:>10,} | "
                    f"{ratio:>10.2f} | {t.cached_input:>14,.0f} | {cached:>10.2f}"
                )


if __name__ == "__main__":
    main()
