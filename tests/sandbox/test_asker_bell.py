"""A command waiting for the user's approval rings the terminal's bell, and only on a terminal."""

from __future__ import annotations

import os
import pty
import subprocess
import sys

ASK = (
    "from plait.workspace.policy import ConsoleAsker, Decision\n"
    "d = Decision(action='command', subject='rm -rf build', verdict='ask')\n"
    "print('approved' if ConsoleAsker()(d, 'alpha') else 'refused')\n"
)


def test_a_question_on_a_terminal_rings_the_bell_before_it_asks() -> None:
    leader, follower = pty.openpty()
    try:
        done = subprocess.run(
            [sys.executable, "-c", ASK], input="y\n", stdout=subprocess.PIPE, stderr=follower, text=True, timeout=60
        )
        os.close(follower)
        follower = -1
        said = os.read(leader, 65536).decode()
    finally:
        os.close(leader)
        if follower >= 0:
            os.close(follower)
    assert done.stdout.strip() == "approved"
    assert said.startswith("\a") and "wants to command: rm -rf build" in said


def test_a_question_without_a_terminal_rings_nothing() -> None:
    done = subprocess.run([sys.executable, "-c", ASK], input="n\n", capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "refused" and "\a" not in done.stderr and "wants to command" in done.stderr
