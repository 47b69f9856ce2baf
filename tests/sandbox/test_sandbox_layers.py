"""The layers' parts on their own: the probe and its report, bwrap's mount order, the Seatbelt profile's text,
the seccomp program, Landlock's read rules, and the two commands of the CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from sandbox_box import found

from plait.errors import EnvironmentProblem
from plait.sandbox_settings import Limits
from plait.workspace.sandbox import Confinement, Probe, seatbelt_argv, seatbelt_profile
from plait.workspace.sandbox._bwrap import bwrap_argv
from plait.workspace.sandbox._landlock import _readable
from plait.workspace.sandbox._seccomp import SocketFilter, _assemble, supported


def confinement(tmp_path: Path) -> Confinement:
    common = tmp_path / "repo" / ".git"
    worktree = common / "plait" / "worktrees" / "r" / "t"
    worktree.mkdir(parents=True)
    (worktree / ".git").write_text(f"gitdir: {common}/worktrees/t\n")
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".netrc").write_text("machine x\n")
    return Confinement(
        worktree=worktree,
        common_dir=common,
        tmp=tmp_path / "tmp",
        home=home,
        hidden=(home / ".ssh", home / ".netrc"),
        regions=(home, common.parent, common / "plait"),
        visible=(common,),
    )


def test_the_probe_reports_each_layer_plainly() -> None:
    none = Probe(platform="linux", root=False, bwrap_problem="bwrap is not installed", landlock_problem="old kernel")
    assert none.usable() == ["none"]
    assert none.choose("auto") == "none"
    line = none.report("none")
    assert line.startswith("sandbox: NO OS sandbox")
    assert "bwrap: bwrap is not installed" in line and "landlock: old kernel" in line
    assert "unattended commands are refused" in line
    assert "run anyway" in none.report("none", allow_unsandboxed=True)
    with pytest.raises(EnvironmentProblem, match="landlock cannot run here"):
        none.choose("landlock")
    both = Probe(platform="linux", root=True, bwrap="/usr/bin/bwrap", landlock_abi=3, seccomp=False, cgroup="/x")
    assert both.usable() == ["bwrap", "landlock", "none"]
    assert "network NOT contained" in both.describe("landlock")
    assert "UDP and Unix sockets NOT contained" in both.model_copy(update={"landlock_abi": 4}).describe("landlock")
    assert "no sockets at all" in both.model_copy(update={"seccomp": True}).describe("landlock")
    assert "(pids cgroup)" in both.report("bwrap", Limits())
    assert "(watchdog)" in both.report("bwrap", Limits(cgroup=False))


def test_this_machine_is_probed() -> None:
    probe = found()
    assert probe.usable()[-1] == "none"
    for layer in probe.usable():
        assert probe.report(layer).startswith("sandbox: ")


def test_bwrap_mounts_go_from_shallow_to_deep_and_hide_secrets(tmp_path: Path) -> None:
    c = confinement(tmp_path)
    argv = bwrap_argv("bwrap", c, ["bash", "-c", "true"], cwd=c.worktree, network=False, root=True)
    text = " ".join(argv)
    assert "--unshare-net" in argv and "--unshare-pid" in argv and "--die-with-parent" in argv
    assert "--cap-drop ALL" in text
    assert f"--bind {c.tmp} /tmp" in text
    checkout = text.index(f"--tmpfs {c.common_dir.parent.resolve()} ")
    ro_common = text.index(f"--ro-bind {c.common_dir.resolve()} ")
    state = text.index(f"--tmpfs {(c.common_dir / 'plait').resolve()} ")
    rw_worktree = text.index(f"--bind {c.worktree.resolve()} ")
    ro_link = text.index(f"--ro-bind {c.worktree.resolve()}/.git ")
    assert checkout < ro_common < state < rw_worktree < ro_link
    home = text.index(f"--tmpfs {c.home.resolve()} ")
    ssh = text.index(f"--tmpfs {(c.home / '.ssh').resolve()} ")
    assert home < ssh < text.index(f"--remount-ro {(c.home / '.ssh').resolve()}")
    assert text.index(f"--remount-ro {c.home.resolve()} ") > ro_link  # after the mount points made inside it
    assert f"--ro-bind /dev/null {(c.home / '.netrc').resolve()}" in text
    assert argv[-4:] == ["--", "bash", "-c", "true"]
    assert "--seccomp" not in argv
    filtered = bwrap_argv("bwrap", c, ["true"], cwd=c.worktree, network=False, root=False, seccomp_fd=7)
    assert filtered[filtered.index("--seccomp") + 1] == "7"
    online = bwrap_argv("bwrap", c, ["true"], cwd=c.worktree, network=True, root=False)
    assert "--unshare-net" not in online and "--cap-drop" not in online


def test_the_seatbelt_profile_allows_writes_only_in_the_worktree_and_tmp(tmp_path: Path) -> None:
    c = confinement(tmp_path)
    profile, params = seatbelt_profile(c, network=False)
    assert profile.startswith("(version 1)\n(deny default)")
    assert "(allow file-read*)" in profile
    assert '(deny file-read* (subpath (param "HIDDEN_0")))' in profile
    region = profile.index('(deny file-read* (subpath (param "REGION_0")))')
    shown = profile.index('(allow file-read* (subpath (param "VISIBLE_0")))')
    assert region < shown < profile.index('(param "HIDDEN_0")')  # later rules win: hidden inside visible stays so
    assert params["REGION_0"] == str(c.home.resolve()) and params["VISIBLE_0"] == str(c.common_dir.resolve())
    assert '(allow file-write* (subpath (param "WRITABLE_0")) (subpath (param "WRITABLE_1")))' in profile
    assert '(deny file-write* (literal (param "GITLINK_0")))' in profile
    assert "network-outbound" not in profile
    assert params["WRITABLE_0"] == str(c.worktree.resolve())
    assert params["GITLINK_0"] == str((c.worktree / ".git").resolve())
    assert str(tmp_path) not in profile  # paths only ever go in as parameters
    assert "(allow network-outbound" in seatbelt_profile(c, network=True)[0]
    argv = seatbelt_argv(c, ["bash", "-c", "true"], network=False)
    assert argv[:3] == ["sandbox-exec", "-p", profile]
    assert f"WRITABLE_0={c.worktree.resolve()}" in argv


def test_the_seccomp_program_jumps_only_forward_within_itself() -> None:
    program = [("ld", 4), ("jeq", 1, "b", "a"), ("label", "a"), ("ret", 0), ("label", "b"), ("ret", 1)]
    assert _assemble(program) == [(0x20, 0, 0, 4), (0x15, 1, 0, 1), (0x06, 0, 0, 0), (0x06, 0, 0, 1)]
    if supported():
        assert 10 < len(SocketFilter()) < 40


def test_landlock_read_rules_cover_everything_but_the_hidden(tmp_path: Path) -> None:
    secret = tmp_path / "home" / ".ssh"
    secret.mkdir(parents=True)
    (tmp_path / "home" / "code").mkdir()
    (tmp_path / "home" / "link").symlink_to(secret)
    readable, listable = _readable([secret])
    assert secret not in readable
    assert tmp_path / "home" / "code" in readable
    assert tmp_path / "home" / "link" not in readable  # a symlink would grant its target
    assert tmp_path / "home" in listable and Path("/") in listable
    assert _readable([]) == ([Path("/")], [])


def plait(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(cwd), "XDG_CONFIG_HOME": str(cwd / ".config")}
    return subprocess.run(
        [sys.executable, "-m", "plait", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60
    )


def test_policy_check_explains_the_matching_rules(tmp_path: Path) -> None:
    done = plait("policy", "check", "cd src && git -C .. push; pip install x", cwd=tmp_path)
    assert done.returncode == 1, done.stderr  # deny exits 1, as a check that fails
    assert "judged as: git push" in done.stdout
    assert "deny  git-state" in done.stdout and "deny  install:pip" in done.stdout
    assert "verdict deny by rule git-state" in done.stdout
    assert "instead: edit the files" in done.stdout
    asked = plait("policy", "check", "curl https://x", "--preset", "standard", "--json", cwd=tmp_path)
    data = json.loads(asked.stdout)
    assert (data["verdict"], data["rule"], data["preset"]) == ("ask", "network-tool", "standard")
    assert data["commands"] == [["curl", "https://x"]]
    bad = plait("policy", "check", "ls", "--preset", "lax", cwd=tmp_path)
    assert bad.returncode == 2
    assert "unknown preset" in bad.stderr


def test_sandbox_prints_the_probe_report(tmp_path: Path) -> None:
    done = plait("sandbox", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("sandbox: ")
    data = json.loads(plait("sandbox", "--json", cwd=tmp_path).stdout)
    assert data["layer"] == found().usable()[0]
    assert data["probe"]["platform"] == sys.platform
