"""Configuration files through the merge ladder on a real repository: git conflicts, the structured rung merges."""

from __future__ import annotations

from pathlib import Path

import pytest
from gitrepo import Sandbox, sandbox

from plait.reconcile.ladder import merge_commits_sync

SETUP_CFG = """[metadata]
name = pkg

[options]
python_requires = >= 3.7
install_requires =
    click>=8.0
    # pinned for the old API
    itsdangerous==2.0.1

[mypy]
python_version = 3.7
"""


@pytest.fixture
def box(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Sandbox:
    return sandbox(tmp_path, monkeypatch)


def test_setup_cfg_edited_on_neighbouring_lines_is_merged_by_key(box: Sandbox) -> None:
    base = box.start({"setup.cfg": SETUP_CFG})
    ours_cfg = SETUP_CFG.replace("3.7", "3.8").replace("click>=8.0\n", "click>=8.0\n    markupsafe>=2.0\n")
    theirs_cfg = SETUP_CFG.replace("old API", "new API").replace(
        "python_version = 3.7\n", "python_version = 3.7\nstrict = True\n"
    )
    ours = box.branch("ours", {"setup.cfg": ours_cfg}, parent=base)
    theirs = box.branch("theirs", {"setup.cfg": theirs_cfg}, parent=base)
    assert box.repo is not None

    outcome = merge_commits_sync(box.repo, ours, theirs)

    assert outcome.commit and not outcome.clean and outcome.unresolved == []
    (resolution,) = outcome.resolutions
    assert resolution.rung == "structured" and resolution.confidence == "high"
    assert box.show(outcome.commit, "setup.cfg") + "\n" == (
        SETUP_CFG.replace("3.7", "3.8")
        .replace("click>=8.0\n", "click>=8.0\n    markupsafe>=2.0\n")
        .replace("old API", "new API")
        .replace("python_version = 3.8\n", "python_version = 3.8\nstrict = True\n")
    )


def test_a_pin_bumped_on_both_branches_takes_the_newer_in_a_low_confidence_resolution(box: Sandbox) -> None:
    pins = "# command line\nclick==8.1.3\n# web\nflask==2.0.1\n"
    base = box.start({"requirements/dev.txt": pins})
    ours_pins = pins.replace("click==8.1.3", "colorama==0.4.6\nclick==8.1.7")
    theirs_pins = pins.replace("8.1.3", "8.1.5").replace("# web", "# web framework")
    ours = box.branch("ours", {"requirements/dev.txt": ours_pins}, parent=base)
    theirs = box.branch("theirs", {"requirements/dev.txt": theirs_pins}, parent=base)
    assert box.repo is not None

    outcome = merge_commits_sync(box.repo, ours, theirs)

    assert outcome.commit and outcome.unresolved == []
    (resolution,) = outcome.resolutions
    assert resolution.rung == "structured" and resolution.confidence == "low"
    assert resolution.reason.endswith("; took the newer pin of click: 8.1.7 over 8.1.5")
    assert box.show(outcome.commit, "requirements/dev.txt") + "\n" == (
        "# command line\ncolorama==0.4.6\nclick==8.1.7\n# web framework\nflask==2.0.1\n"
    )


WORKFLOW = """name: publish
on:
  push:
    tags: ['*']
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@692973e3d937129bcbf40652eb9f2f61becf3332  # v4.1.7
      - uses: actions/upload-artifact@a8a3f3ad30e3422c9c7b888a15615d19a852ae32  # v3.1.3
        with:
          path: ./dist
"""


def test_a_workflow_with_one_action_bumped_on_both_branches_takes_the_newer_action(box: Sandbox) -> None:
    base = box.start({".github/workflows/publish.yaml": WORKFLOW})
    old = "a8a3f3ad30e3422c9c7b888a15615d19a852ae32  # v3.1.3"
    ours_flow = WORKFLOW.replace(old, "0b2256b8c012f0828dc542b3febcab082c67f72b  # v4.3.4").replace(
        "    runs-on: ubuntu-latest\n", "    runs-on: ubuntu-latest\n    environment: release\n"
    )
    theirs_flow = WORKFLOW.replace(old, "834a144ee995460fba8ed112a2fc961b36a5ec5a  # v4.3.6").replace(
        "    tags: ['*']\n", "    tags: ['*']\n  workflow_dispatch:\n"
    )
    ours = box.branch("ours", {".github/workflows/publish.yaml": ours_flow}, parent=base)
    theirs = box.branch("theirs", {".github/workflows/publish.yaml": theirs_flow}, parent=base)
    assert box.repo is not None

    outcome = merge_commits_sync(box.repo, ours, theirs)

    assert outcome.commit and outcome.unresolved == []
    (resolution,) = outcome.resolutions
    assert resolution.rung == "structured" and resolution.confidence == "low"
    assert resolution.reason.endswith("; took the newer version of actions/upload-artifact: v4.3.6 over v4.3.4")
    assert box.show(outcome.commit, ".github/workflows/publish.yaml") + "\n" == theirs_flow.replace(
        "    runs-on: ubuntu-latest\n", "    runs-on: ubuntu-latest\n    environment: release\n"
    )
