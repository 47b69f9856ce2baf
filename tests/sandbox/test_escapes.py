"""Escapes through files, git, the network and secrets, tried by real commands under every layer this machine has.

Each command hides its target behind a shell variable or a link so that the policy's parser cannot see it: what
is tested here is the OS layer. Under limits only (no OS layer) an escape that succeeds is an expected failure.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from sandbox_box import FAKE_KEY, SSH_MARKER, MakeBox, found, layer_params

NO_FS = "no OS layer stops a write outside the worktree"


def untouched(box_outside: Path) -> bool:
    return (box_outside / "victim.txt").read_text() == "original\n" and not (box_outside / "new.txt").exists()


@pytest.mark.parametrize("layer", layer_params(NO_FS))
def test_write_by_absolute_path(make_box: MakeBox, layer: str) -> None:
    box = make_box(layer)
    box.run(f't={box.outside}; echo pwned > "$t/new.txt"; echo pwned > "$t/victim.txt"')
    assert untouched(box.outside)


@pytest.mark.parametrize("layer", layer_params(NO_FS))
def test_write_through_dotdot(make_box: MakeBox, layer: str) -> None:
    box = make_box(layer)
    up = os.path.relpath(box.outside, box.worktree)
    assert up.startswith("..")
    box.run(f'p={up}; echo pwned > "$p/new.txt"')
    assert untouched(box.outside)


@pytest.mark.parametrize("layer", layer_params(NO_FS))
def test_write_through_a_symlink(make_box: MakeBox, layer: str) -> None:
    box = make_box(layer)
    box.run(f"ln -s {box.outside} link; echo pwned > link/new.txt; echo pwned >> link/victim.txt")
    assert untouched(box.outside)


@pytest.mark.parametrize("layer", layer_params(NO_FS))
def test_write_through_proc_self_cwd(make_box: MakeBox, layer: str) -> None:
    box = make_box(layer)
    up = os.path.relpath(box.outside, box.worktree)
    box.run(f'p=/proc/self/cwd/{up}; echo pwned > "$p/new.txt"')
    assert untouched(box.outside)


@pytest.mark.parametrize("layer", layer_params(NO_FS))
def test_write_through_a_hard_link(make_box: MakeBox, layer: str) -> None:
    box = make_box(layer)
    box.run(f"ln {box.outside}/victim.txt hard; echo pwned >> hard")
    assert untouched(box.outside)


@pytest.mark.parametrize("layer", layer_params("no OS layer keeps the shared .git read-only"))
def test_shared_git_hooks_config_and_refs_stay_unchanged(make_box: MakeBox, layer: str) -> None:
    box = make_box(layer)
    common = box.repo.common_dir
    config = (common / "config").read_text()
    admin = next((common / "worktrees").iterdir())
    head = (admin / "HEAD").read_text()
    for attempt in (
        f'g={common}; echo "touch $g/../PWNED" > "$g/hooks/pre-commit"; chmod +x "$g/hooks/pre-commit"',
        "git config --local core.hooksPath /tmp",
        "c=update-ref; git $c refs/heads/evil HEAD",
        f'g={common}; echo 0000000000000000000000000000000000000000 > "$g/refs/heads/planted"',
        f'a={admin}; echo "ref: refs/heads/evil" > "$a/HEAD"',
    ):
        assert box.run(attempt).exit_code != 126, attempt  # the policy let it through: the OS layer is tested
    assert not (common / "hooks" / "pre-commit").exists()
    assert (common / "config").read_text() == config
    assert not (common / "refs" / "heads" / "evil").exists()
    assert not (common / "refs" / "heads" / "planted").exists()
    assert (admin / "HEAD").read_text() == head


@pytest.mark.parametrize("layer", layer_params())
def test_the_worktree_git_link_cannot_be_redirected(make_box: MakeBox, layer: str) -> None:
    box = make_box(layer)
    link = box.worktree / ".git"
    before = link.read_text()
    result = box.run('f=.git; echo "gitdir: /tmp/evil" > "$f"; cat "$f"')
    assert link.read_text() == before
    if layer != "bwrap":  # bwrap mounts it read-only; elsewhere plait puts it back and says so
        assert "restored" in result.output
        assert any(d.rule == "git-link" and d.verdict == "deny" for d in box.decisions())
    assert box.run("git status --short").exit_code == 0


@pytest.fixture
def listeners() -> Iterator[tuple[socket.socket, socket.socket]]:
    tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    tcp.bind(("127.0.0.1", 0))
    tcp.listen(8)
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    for sock in (tcp, udp):
        sock.setblocking(False)
    yield tcp, udp
    tcp.close()
    udp.close()


def nothing_arrived(tcp: socket.socket, udp: socket.socket) -> bool:
    """A finished connect sits in the backlog and a sent datagram in the buffer, so an empty check is final."""
    try:
        conn, _ = tcp.accept()
        conn.close()
        return False
    except BlockingIOError:
        pass
    try:
        udp.recvfrom(4096)
        return False
    except BlockingIOError:
        return True


# A DNS query for example.com, type A.
_DNS_QUERY = "bytes.fromhex('123401000001000000000000076578616d706c6503636f6d0000010001')"
NO_NET = "no OS layer keeps the network off"


def client(kind: str, port: int) -> str:
    """A Python one-liner reaching the host's loopback: a TCP connect, a UDP datagram, or a DNS query over UDP."""
    if kind == "tcp":
        body = f"s=socket.create_connection(('127.0.0.1',{port}),timeout=3); s.sendall(b'leak')"
    elif kind == "udp":
        body = f"socket.socket(socket.AF_INET,socket.SOCK_DGRAM).sendto(b'leak',('127.0.0.1',{port}))"
    else:
        body = f"socket.socket(socket.AF_INET,socket.SOCK_DGRAM).sendto({_DNS_QUERY},('127.0.0.1',{port}))"
    return f'{sys.executable} -c "import socket; {body}"'


@pytest.mark.parametrize("kind", ["tcp", "udp", "dns"])
@pytest.mark.parametrize("layer", layer_params(NO_NET))
def test_network_is_off_even_to_loopback(
    make_box: MakeBox, layer: str, kind: str, listeners: tuple[socket.socket, socket.socket]
) -> None:
    tcp, udp = listeners
    box = make_box(layer)
    port = (tcp if kind == "tcp" else udp).getsockname()[1]
    box.run(client(kind, port))
    assert nothing_arrived(tcp, udp)


@pytest.mark.parametrize("layer", layer_params())
def test_name_resolution_fails(make_box: MakeBox, layer: str) -> None:
    box = make_box(layer)
    result = box.run("getent hosts example.com || echo unresolved")
    assert "unresolved" in result.output


@pytest.mark.parametrize("layer", layer_params("no OS layer hides ~/.ssh"))
def test_ssh_keys_cannot_be_read(make_box: MakeBox, layer: str) -> None:
    box = make_box(layer)
    ssh = box.home / ".ssh"  # by the real path: HOME itself is the agent's own empty one
    result = box.run(f"cat {ssh}/config {ssh}/id_ed25519 ~/.ssh/config > stolen.txt; cat {ssh}/config")
    assert SSH_MARKER not in (box.worktree / "stolen.txt").read_text()
    assert SSH_MARKER not in result.output


@pytest.mark.parametrize("layer", layer_params())
def test_credentials_are_not_in_the_environment(make_box: MakeBox, layer: str) -> None:
    box = make_box(layer)
    result = box.run("env > env.txt; env | grep -c FAKE_SERVICE_API_KEY || true")
    assert FAKE_KEY not in (box.worktree / "env.txt").read_text()
    assert result.output.strip().splitlines()[0] == "0"


_AS_PLAIT = """
import asyncio, os, sys
from pathlib import Path
from plait.settings import Settings
from plait.sandbox_settings import SandboxSettings
from plait.workspace.sandbox import sandboxed_shell
layer, worktree, common = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
settings = Settings(sandbox=SandboxSettings(layer=layer, allow_unsandboxed=True))
runner = sandboxed_shell(
    settings, worktree=worktree, common_dir=common, log=None, agent="a", interactive=False
)
command = f"cat /proc/{os.getpid()}/environ > parent.txt; cat /proc/$PPID/environ >> parent.txt; cat parent.txt"
print(asyncio.run(runner.run(command, cwd=worktree, timeout=30, output_limit=100000)).output)
runner.close()
"""


# As root, limits-only commands lose their capabilities, and the kernel then refuses them a more privileged
# process's environ; an ordinary user's command reads plait's.
@pytest.mark.parametrize(
    "layer", layer_params(None if found().root else "nothing stops reading plait's own /proc/PID/environ")
)
def test_the_parents_environment_cannot_be_read(make_box: MakeBox, layer: str) -> None:
    """plait runs in its own process here, started with the key in its environment as a user's shell would."""
    box = make_box(layer)
    args = [sys.executable, "-c", _AS_PLAIT, layer, str(box.worktree), str(box.repo.common_dir)]
    done = subprocess.run(args, capture_output=True, text=True, env=os.environ, timeout=60, check=True)
    assert FAKE_KEY not in done.stdout  # redacted from the record whatever the layer
    assert FAKE_KEY not in (box.worktree / "parent.txt").read_text(errors="replace")


@pytest.mark.parametrize("layer", layer_params())
def test_secrets_that_get_out_are_redacted_from_the_record(make_box: MakeBox, layer: str) -> None:
    box = make_box(layer)
    (box.worktree / "leak.txt").write_text(f"key={FAKE_KEY}\n")
    result = box.run(f"cat leak.txt; tr '\\0' '\\n' < /proc/{os.getpid()}/environ | grep FAKE_SERVICE || true")
    assert FAKE_KEY not in result.output
    assert "key=[REDACTED]" in result.output
    assert all(FAKE_KEY not in d.subject for d in box.decisions())
