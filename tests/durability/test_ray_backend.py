"""`--backend ray`: attempts run as tasks on a real two-node Ray cluster, the log in PostgreSQL.

The run ends with the same verified tree as the same run on this machine alone; a node killed while its attempt
works costs no model call paid again (the attempt is run again on the other node, replaying its log and
restoring its last checkpoint from the store); `plait status` names the node each agent ran on.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from keyed_model import KeyedModel
from test_crash import MARK, _env, _finish, _kill, _plait

from pg_cluster import PostgresServer
from plait.events import AttemptPlaced, ModelCallFinished, NotesDelivered, PostgresEventStore, TaskFinished
from wire_server import WireServer

# Ray's nodes talk over this machine's own address, not 127.0.0.1 (a driver started later finds its node by it)
pytestmark = [pytest.mark.xdist_group("ray"), pytest.mark.allow_network, pytest.mark.timeout(600)]

TASK = "Add the alpha, beta and gamma modules"
PLAN = """
tasks:
  - {id: alpha, title: alpha says a, instructions: Add alpha.py with a() returning 'a'., writes: [alpha.py]}
  - {id: beta, title: beta says b, instructions: Add beta.py with b() returning 'b'., writes: [beta.py]}
  - {id: gamma, title: gamma says g, instructions: Add gamma.py with g() returning 'g'., writes: [gamma.py]}
experts:
  - {name: keeper, area: [base.py], brief: Knows base.py.}
"""
EXPERT = """
  - name: keeper
    match: "You are `keeper`"
    turns:
      - tool_calls: [{name: answer, arguments: {answer: "NAME is 'base', at base.py:1"}}]
"""


NOTE = "alpha.a() returns the string 'a', never None"
KEY = "sk-ray-test-6f1d2c"
SHOW_KEY = 'os.environ.get(\\"OPENAI_API_KEY\\", \\"no key here\\")'
"""What an agent's command prints of the key: the worker process has it, the agent's commands must not."""


def _conversation(name: str, body: str, delay: float) -> str:
    post = f'{{name: post_note, arguments: {{topic: warning, text: "{NOTE}", to: [gamma]}}}}'
    ask = '{name: ask_expert, arguments: {expert: keeper, question: "What is NAME in base.py?"}}'
    tell = f", {post}" if name == "alpha" else f", {ask}" if name == "beta" else ""
    return f"""
  - name: {name}
    match: "Your task is `{name}`"
    turns:
      - text: Looking first.
        delay: {delay}
        tool_calls: [{{name: read_file, arguments: {{path: base.py}}}}{tell}]
      - text: Writing it.
        delay: {delay}
        tool_calls:
          - name: write_file
            arguments: {{path: {name}.py, content: "{body}"}}
      - text: Checking it.
        delay: {delay}
        tool_calls: [{{name: run, arguments: {{command: "python3 -c 'import {name}, os; print({SHOW_KEY})'"}}}}]
      - delay: {delay}
        tool_calls: [{{name: finish, arguments: {{summary: {name} is there}}}}]
"""


def _script(slow: float) -> str:
    bodies = {"alpha": "def a():\\n    return 'a'\\n", "beta": "def b():\\n    return 'b'\\n"}
    bodies["gamma"] = "def g():\\n    return 'g'\\n"
    tasks = "".join(_conversation(n, b, slow if n == "gamma" else 0.2) for n, b in bodies.items())
    return "conversations:" + tasks + EXPERT


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    """A Ray cluster of a head that runs nothing and two nodes of one CPU each, all on this machine."""
    try:
        from ray.cluster_utils import Cluster
    except ImportError:
        pytest.skip("ray is not installed (the ray extra)")
    config = {"health_check_period_ms": 500, "health_check_failure_threshold": 4}
    head = {"num_cpus": 0, "include_dashboard": False, "_system_config": config}  # its port 8265 is fixed
    made = Cluster(initialize_head=True, head_node_args=head)
    try:
        for _ in range(2):
            made.add_node(num_cpus=1)
        made.wait_for_nodes()
    except Exception as exc:
        made.shutdown()
        pytest.skip(f"a Ray cluster cannot start here: {exc}")
    yield made
    made.shutdown()


def _repo(where: Path, env: dict[str, str]) -> Path:
    where.mkdir()
    (where / "base.py").write_text("NAME = 'base'\n")
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "base"]):
        subprocess.run(["git", *args], cwd=where, env=env, check=True, capture_output=True)
    return where


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout.strip()


def _cli(args: list[str], repo: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "plait", *args, "-C", str(repo)]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=120, check=False)


def _flags(spec: str, plan: Path) -> list[str]:
    return ["run", TASK, "--plan", str(plan), "--model", spec, "--yes", "--json", "--no-tui"]


def _setup(tmp: Path, name: str, env: dict[str, str]) -> tuple[Path, Path]:
    repo = _repo(tmp / name, env)
    plan = tmp / f"{name}-plan.yaml"
    plan.write_text(PLAN)
    return repo, plan


def _placed(url: str) -> list[AttemptPlaced]:
    store = PostgresEventStore(url)
    try:
        runs = store.run_ids()
        events = store.events(runs[-1], kinds=["placed"]) if runs else []
    finally:
        store.close()
    return [e for e in events if isinstance(e, AttemptPlaced)]


def _failures(url: str) -> list[str]:
    """Why attempts failed, for an assertion's message."""
    store = PostgresEventStore(url)
    try:
        finished = store.events(store.run_ids()[-1], kinds=["task_finished"])
    finally:
        store.close()
    return [f"{e.agent}: {e.reason}" for e in finished if isinstance(e, TaskFinished) and e.status != "done"]


def test_a_run_on_the_ray_cluster_ends_with_the_local_runs_verified_tree(
    tmp_path: Path, postgres: PostgresServer, cluster: Any
) -> None:
    script = tmp_path / "script.yaml"
    script.write_text(_script(0.2))
    env = {**_env(tmp_path), "PLAIT_CONCURRENCY": "3", "PLAIT_VERIFY_COMMAND": "python3 -m compileall -q ."}
    local_repo, local_plan = _setup(tmp_path, "local", env)
    ray_repo, ray_plan = _setup(tmp_path, "ray", env)
    url = postgres.database()
    ray_env = {**env, "PLAIT_STORE": url, "OPENAI_API_KEY": KEY}
    with WireServer(KeyedModel(script)) as server:
        spec = f"openai-compatible:demo@{server.openai_url}"
        local = _finish(_plait(_flags(spec, local_plan), local_repo, env))
        on_ray = [*_flags(spec, ray_plan), "--backend", "ray", "--ray-address", cluster.address]
        before = len(server.requests)
        remote = _finish(_plait(on_ray, ray_repo, ray_env))
        keyed = [r for r in server.requests[before:] if r.headers.get("authorization") == f"Bearer {KEY}"]
    assert local[0] == 0, local[2][-2000:]
    assert remote[0] == 0, remote[2][-2000:]
    mine, theirs = json.loads(local[1]), json.loads(remote[1])
    assert theirs["status"] == "done" and mine["status"] == "done"
    assert _git(ray_repo, "rev-parse", f"{theirs['branch']}^{{tree}}") == _git(
        local_repo, "rev-parse", f"{mine['branch']}^{{tree}}"
    )
    assert _git(ray_repo, "show", f"{theirs['branch']}:gamma.py").startswith("def g():")
    placed = _placed(url)
    assert {p.agent for p in placed} == {"alpha", "beta", "gamma"}
    assert len({p.node for p in placed}) == 2  # one CPU per node: three attempts use both
    assert not (ray_repo / ".git" / "plait" / "worktrees" / theirs["run_id"]).exists()  # no local worktree made
    store = PostgresEventStore(url)
    delivered = store.events(theirs["run_id"], agent="gamma", kinds=["notes_delivered"])
    store.close()  # the note alpha posted on one node reached gamma's agent, wherever it ran
    assert any(isinstance(e, NotesDelivered) and NOTE in str(e.notes) for e in delivered)
    store = PostgresEventStore(url)  # beta asked the expert, an actor on the cluster; its answer came back
    answered = store.events(theirs["run_id"], agent="beta", kinds=["tool_result"])
    store.close()
    assert any(
        "expert `keeper` answers" in e.model_dump_json() and "base.py:1" in e.model_dump_json() for e in answered
    )

    store = PostgresEventStore(url)  # the key reached every worker and actor process, and no agent's command
    results = [e for e in store.events(theirs["run_id"], kinds=["tool_result"]) if "no key here" in str(e)]
    calls = store.events(theirs["run_id"], kinds=["model_response"])
    store.close()
    assert len(keyed) == len(calls) == 13 and len(results) == 3

    status = _cli(["status", theirs["run_id"], "--json"], ray_repo, ray_env)
    assert status.returncode == 0, status.stderr[-1000:]
    nodes = {a["id"]: a["node"] for a in json.loads(status.stdout)["agents"]}
    assert {nodes[p.agent] for p in placed} == {p.node for p in placed}
    plain = _cli(["status", theirs["run_id"], "--plain"], ray_repo, ray_env)
    assert "placed: alpha on " in plain.stdout, plain.stdout


def _wait_for(proc: subprocess.Popen[str], ready: Callable[[], bool]) -> None:
    """Wait until `ready()`, failing the test if the run ends first or two minutes pass."""
    deadline = time.monotonic() + 120
    while not ready():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"gamma did not get to work: {proc.communicate()[1][-2000:]}")
        time.sleep(0.1)


def _assert_gamma_paid_once(url: str, model: KeyedModel) -> None:
    """gamma's four turns were each logged once, and none was answered again after its answer was logged."""
    store = PostgresEventStore(url)
    events = store.events(store.run_ids()[-1], agent="gamma")
    store.close()
    answers = [e.response.text for e in events if isinstance(e, ModelCallFinished)]
    logged = [int(m.group(1)) for text in answers if (m := MARK.search(text))]
    assert len(logged) == 4 and len(set(logged)) == 4  # each of its four turns logged once
    served = {turn: given for (name, turn), given in model.answers.items() if name == "gamma"}
    for turn, given in served.items():  # the answer kept is the last served: none was bought again once logged
        assert given[-1] in logged, f"turn {turn} was answered again after its answer was logged"
    assert sum(len(a) - 1 for a in served.values()) <= 1  # only the call in flight when the worker died


def test_a_node_killed_mid_attempt_costs_no_model_call_paid_again(
    tmp_path: Path, postgres: PostgresServer, cluster: Any
) -> None:
    script = tmp_path / "script.yaml"
    script.write_text(_script(1.5))
    url = postgres.database()
    env = {**_env(tmp_path), "PLAIT_CONCURRENCY": "3", "PLAIT_STORE": url}
    repo, plan = _setup(tmp_path, "repo", env)
    model = KeyedModel(script)
    with WireServer(model) as server:
        spec = f"openai-compatible:demo@{server.openai_url}"
        proc = _plait([*_flags(spec, plan), "--backend", "ray", "--ray-address", cluster.address], repo, env)
        _wait_for(
            proc, lambda: bool(model.answers.get(("gamma", 2)) and [p for p in _placed(url) if p.agent == "gamma"])
        )
        node = next(p for p in _placed(url) if p.agent == "gamma").node
        (victim,) = [n for n in cluster.list_all_nodes() if n.node_id == node]
        cluster.remove_node(victim, allow_graceful=False)
        code, out, err = _finish(proc)
        cluster.add_node(num_cpus=1)  # the next test has two nodes again
    assert code == 0, err[-3000:]
    result = json.loads(out)
    assert result["status"] == "done" and _git(repo, "show", f"{result['branch']}:gamma.py").startswith("def g():")
    gamma = [p for p in _placed(url) if p.agent == "gamma"]
    assert len(gamma) == 2, _failures(url)
    assert gamma[0].node == node and gamma[1].node != node
    _assert_gamma_paid_once(url, model)


def _integrated(url: str) -> int:
    store = PostgresEventStore(url)
    try:
        runs = store.run_ids()
        return len([e for e in store.events(runs[-1], kinds=["integrated"])]) if runs else 0
    finally:
        store.close()


def test_the_driver_killed_mid_run_resumes_on_another_clone_without_paying_again(
    tmp_path: Path, postgres: PostgresServer, cluster: Any
) -> None:
    script = tmp_path / "script.yaml"
    script.write_text(_script(1.5))
    url = postgres.database()
    env = {**_env(tmp_path), "PLAIT_CONCURRENCY": "3", "PLAIT_STORE": url}
    repo, plan = _setup(tmp_path, "repo", env)
    other = tmp_path / "other"  # another machine's clone: the base, none of the run's branches or commits
    subprocess.run(["git", "clone", "-q", "--no-local", str(repo), str(other)], env=env, check=True)
    subprocess.run(["git", "-C", str(other), "remote", "remove", "origin"], env=env, check=True)
    model = KeyedModel(script)
    with WireServer(model) as server:
        spec = f"openai-compatible:demo@{server.openai_url}"
        proc = _plait([*_flags(spec, plan), "--backend", "ray", "--ray-address", cluster.address], repo, env)
        _wait_for(proc, lambda: bool(model.answers.get(("gamma", 2)) and _integrated(url) >= 2))
        _kill(proc)  # the driver, with kill -9: Ray stops the attempts it owned
        code, out, err = _finish(_plait(["resume", "last", "--json"], other, env))
    assert code == 0, err[-3000:]
    result = json.loads(out)
    assert result["status"] == "done"
    for name in ("alpha", "beta", "gamma"):  # alpha and beta were integrated on the first machine
        assert _git(other, "show", f"{result['branch']}:{name}.py").startswith("def ")
    assert len([p for p in _placed(url) if p.agent == "gamma"]) == 2, _failures(url)  # placed again on resume
    _assert_gamma_paid_once(url, model)


def test_ctrl_c_stops_the_attempts_on_the_cluster_and_the_run_resumes(
    tmp_path: Path, postgres: PostgresServer, cluster: Any
) -> None:
    script = tmp_path / "script.yaml"
    script.write_text(_script(1.5))
    url = postgres.database()
    env = {**_env(tmp_path), "PLAIT_CONCURRENCY": "3", "PLAIT_STORE": url}
    repo, plan = _setup(tmp_path, "repo", env)
    model = KeyedModel(script)
    with WireServer(model) as server:
        spec = f"openai-compatible:demo@{server.openai_url}"
        proc = _plait([*_flags(spec, plan), "--backend", "ray", "--ray-address", cluster.address], repo, env)
        _wait_for(proc, lambda: bool(model.answers.get(("gamma", 1))))
        proc.send_signal(signal.SIGINT)
        code, _, err = _finish(proc)
        # requests as the server received them: an answer to one sent before the stop may be served after it
        asked = len(server.requests)
        time.sleep(4)  # more than two of gamma's turns: an attempt still running on the cluster would ask again
        after = len(server.requests)
        resumed = _finish(_plait(["resume", "last", "--json"], repo, env))
    assert code == 130 and "plait resume" in err, err[-2000:]
    assert after == asked, "an attempt went on working on the cluster after Ctrl-C"
    assert resumed[0] == 0, resumed[2][-2000:]
    result = json.loads(resumed[1])
    assert result["status"] == "done" and _git(repo, "show", f"{result['branch']}:gamma.py").startswith("def g():")
