"""The paths out that a hostile command would try next: credentials under any name, host Unix sockets, shared
memory, another agent's tmp, secrets made mid-run, sibling worktrees, plait's log, the user's checkout; and what it
may see, it may not change.

Each check reads or writes by the real host path, hidden from the policy's parser behind a variable, so what is
tested is the OS layer; with limits only (no OS layer) what gets through is an expected failure.
"""

from __future__ import annotations

import os
import socket
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sandbox_box import MakeBox, found, layer_params

MARK = "secret-" + uuid.uuid4().hex


def leaked(box_worktree: Path, name: str = "out.txt") -> str:
    path = box_worktree / name
    return path.read_text(errors="replace") if path.exists() else ""


def test_only_allow_listed_variables_reach_commands(make_box: MakeBox, monkeypatch: pytest.MonkeyPatch) -> None:
    planted = {
        "API_KEY": f"k1{MARK}",
        "GH_PAT": f"k2{MARK}",
        "DATABASE_URL": f"postgres://app:pw{MARK}@db.internal/prod",
        "ACME_DEPLOY_CRED": f"k3{MARK}",
        "SSH_AUTH_SOCK": f"/tmp/agent-{MARK}",
        "KUBECONFIG": f"/root/{MARK}/config",
        "PLAIT_OPENAI_API_KEY": f"k4{MARK}",
    }
    for name, value in planted.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("LANG", "C.UTF-8")
    for layer in found().usable():
        box = make_box(layer)
        box.run('env > out.txt; echo "home=$HOME tmp=$TMPDIR" >> out.txt; touch "$HOME/ok" && echo home-writable')
        seen = leaked(box.worktree)
        assert MARK not in seen, layer
        names = {line.split("=", 1)[0] for line in seen.splitlines() if "=" in line}
        assert "PATH" in names and "LANG=C.UTF-8" in seen, layer
        assert not names & set(planted), layer
        home = next(line for line in seen.splitlines() if line.startswith("home="))
        assert f"home={box.home} " not in home, layer  # a throwaway home, not the user's


@pytest.fixture
def host_sockets(tmp_path: Path, home: Path) -> Iterator[list[tuple[str, socket.socket]]]:
    """Listening Unix sockets where host daemons keep theirs: /var/tmp, /tmp, /run, a home, any directory, and
    the abstract namespace."""
    made: list[tuple[str, socket.socket]] = []
    places = [Path("/var/tmp"), Path("/tmp"), tmp_path / "outside", home]
    if os.geteuid() == 0:
        places.append(Path("/run"))
    for place in places:
        place.mkdir(exist_ok=True)
        path = str(place / f"plait-test-{uuid.uuid4().hex[:8]}.sock")
        made.append((path, socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)))
        made[-1][1].bind(path)
    abstract = f"\0plait-test-{uuid.uuid4().hex}"
    made.append((abstract, socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)))
    made[-1][1].bind(abstract)
    for _, sock in made:
        sock.listen(8)
        sock.setblocking(False)
    yield made
    for path, sock in made:
        sock.close()
        if not path.startswith("\0"):
            Path(path).unlink(missing_ok=True)


def _connect_all(paths: list[str]) -> str:
    targets = ",".join(repr(p) for p in paths)
    body = (
        "import socket\n"
        f"for p in [{targets}]:\n"
        "    try:\n"
        "        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.settimeout(2); s.connect(p)\n"
        "        s.sendall(b'leak'); print('reached', repr(p))\n"
        "    except OSError as e:\n"
        "        print('refused', repr(p), e)\n"
    )
    return f"{sys.executable} -c \"$(cat <<'EOF'\n{body}EOF\n)\""


@pytest.mark.parametrize("layer", layer_params("no OS layer keeps a command from a host daemon's socket"))
def test_host_unix_sockets_cannot_be_reached(
    make_box: MakeBox, layer: str, host_sockets: list[tuple[str, socket.socket]]
) -> None:
    box = make_box(layer)
    result = box.run(_connect_all([p for p, _ in host_sockets]))
    reached = []
    for path, sock in host_sockets:
        try:
            conn, _ = sock.accept()
            conn.close()
            reached.append(path)
        except BlockingIOError:
            continue
    refused = [line for line in result.output.splitlines() if line.startswith("refused ")]
    assert len(refused) == len(host_sockets), result.output
    assert not reached


def test_a_unix_socket_of_the_commands_own_still_works(make_box: MakeBox) -> None:
    """socketpair reaches nothing outside the command, and tools rely on it (asyncio, multiprocessing pipes)."""
    box = make_box(found().usable()[0])
    body = "import socket; a, b = socket.socketpair(); a.sendall(b'ok'); print(b.recv(2).decode())"
    assert box.run(f'{sys.executable} -c "{body}"').output.strip() == "ok"


@pytest.mark.parametrize("layer", layer_params("no OS layer keeps the host's /dev/shm from a command"))
def test_host_shared_memory_is_neither_readable_nor_writable(make_box: MakeBox, layer: str) -> None:
    host = Path("/dev/shm")
    if not host.is_dir():
        pytest.skip("this machine has no /dev/shm")
    planted = host / f"plait-test-{uuid.uuid4().hex}"
    planted.write_text(MARK)
    new = host / f"plait-test-new-{uuid.uuid4().hex}"
    try:
        box = make_box(layer)
        box.run(f'd=/dev/shm; cat "$d/{planted.name}" > out.txt; echo pwned > "$d/{new.name}"')
        assert MARK not in leaked(box.worktree)
        assert not new.exists()
    finally:
        planted.unlink()
        new.unlink(missing_ok=True)


@pytest.mark.parametrize("layer", layer_params("no OS layer keeps one agent out of another's tmp"))
def test_one_agent_cannot_read_or_write_anothers_tmp(make_box: MakeBox, layer: str) -> None:
    first, second = make_box(layer), make_box(layer)
    first.run(f'echo {MARK} > "$TMPDIR/notes.txt"; echo {MARK} > "$HOME/.history"')
    theirs = first.runner.confinement.tmp
    assert MARK in (theirs / "notes.txt").read_text()  # the first agent could write its own
    second.run(f't={theirs}; cat "$t/notes.txt" "$t/home/.history" > out.txt; echo pwned > "$t/planted"')
    assert MARK not in leaked(second.worktree)
    assert not (theirs / "planted").exists()


@pytest.mark.parametrize("layer", layer_params("no OS layer hides the user's home"))
def test_secrets_made_after_the_agent_started_stay_hidden(make_box: MakeBox, layer: str) -> None:
    box = make_box(layer)
    box.run("true")  # the agent is at work
    kube = box.home / ".kube"
    kube.mkdir()
    (kube / "config").write_text(f"token: {MARK}\n")
    (box.home / ".brand-new-service-token").write_text(MARK)
    (box.home / "notes.txt").write_text(MARK)
    box.run(f'h={box.home}; cat "$h/.kube/config" "$h/.brand-new-service-token" "$h/notes.txt" > out.txt')
    assert MARK not in leaked(box.worktree)


@pytest.mark.parametrize("layer", layer_params("no OS layer hides other worktrees, the log or the checkout"))
def test_other_worktrees_the_log_and_the_users_checkout_are_hidden(make_box: MakeBox, layer: str) -> None:
    first, second = make_box(layer), make_box(layer)
    (first.worktree / "wip.py").write_text(f"# {MARK}\n")
    log = first.repo.common_dir / "plait" / "events.db"
    log.write_text(MARK) if not log.exists() else log.write_bytes(log.read_bytes() + MARK.encode())
    (first.repo.root / ".env").write_text(f"TOKEN={MARK}\n")
    targets = [first.worktree / "wip.py", log, first.repo.root / ".env"]
    command = "; ".join(f'f={t}; cat "$f" >> out.txt' for t in targets)
    result = second.run(command + "; git log --oneline -1 >> out.txt; git status --short > status.txt")
    assert MARK not in leaked(second.worktree), result.output
    assert "initial" in leaked(second.worktree)  # the shared history it needs is there, read-only
    assert "status.txt" in leaked(second.worktree, "status.txt")


@pytest.mark.parametrize("layer", layer_params("no OS layer makes anything read-only"))
def test_what_a_command_may_see_it_may_not_change(
    make_box: MakeBox, layer: str, monkeypatch: pytest.MonkeyPatch, home: Path
) -> None:
    """The boundary itself: the shared .git, plait's Python and a toolchain on PATH in the home are visible, and
    they are read-only."""
    tools = home / ".local" / "bin"
    tools.mkdir(parents=True)
    (tools / "greet").write_text("#!/bin/sh\necho hello-from-the-toolchain\n")
    (tools / "greet").chmod(0o755)
    monkeypatch.setenv("PATH", f"{tools}{os.pathsep}{os.environ['PATH']}")
    box = make_box(layer)
    objects = box.repo.common_dir / "objects"
    prefix = Path(sys.prefix)
    (prefix / "planted").unlink(missing_ok=True)  # what a run that got through left
    result = box.run(
        f"greet; {sys.executable} -c \"import plait; print('plait-importable')\"; git cat-file -t HEAD; "
        f'o={objects}; p={prefix}; t={tools}; echo x > "$o/planted"; echo x > "$p/planted"; echo x > "$t/planted"'
    )
    assert "hello-from-the-toolchain" in result.output and "plait-importable" in result.output
    assert "commit" in result.output
    try:
        for place in (objects, prefix, tools):
            assert not (place / "planted").exists(), place
    finally:
        (prefix / "planted").unlink(missing_ok=True)


@pytest.mark.parametrize("layer", [p for p in layer_params() if p.values[0] != "none"])
def test_git_still_works_after_the_shared_git_files_are_replaced_mid_run(make_box: MakeBox, layer: str) -> None:
    """git replaces `config` and `packed-refs` by renaming a new file over them; the agent's next command must
    still read them (under Landlock rights belong to the file that existed when the rules were made)."""
    box = make_box(layer)
    assert box.run("git status --short && git log --oneline -1").exit_code == 0
    box.repo.git("config", "--local", "plait.test", "changed")  # a new config file, renamed over the old
    box.repo.git("pack-refs", "--all")  # a new packed-refs
    result = box.run("git config plait.test && git log --oneline -1")
    assert result.exit_code == 0, result.output
    assert "changed" in result.output and "initial" in result.output
