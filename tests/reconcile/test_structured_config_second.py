"""Configuration merges found on real history: one-line flow lists, values rewrapped by one side."""

from __future__ import annotations

import yaml

from plait.reconcile.structured import IniMerger, YamlMerger

PIPELINE = """trigger:
  branches:
    include: [dev]
jobs:
- template: job--tox.yml@templates
  parameters:
    toxenvs: [lint, py27, py34, py35, py36, docs]
    os: linux
"""


def test_yaml_flow_list_both_sides_pruned_merges_item_by_item() -> None:
    ours = PIPELINE.replace("[lint, py27, py34, py35, py36, docs]", "[lint, py35, py36, py37, docs]")
    theirs = PIPELINE.replace("[lint, py27, py34, py35, py36, docs]", "[lint, py27, py35, py36, docs]")

    merged = YamlMerger().merge(PIPELINE, ours, theirs)

    assert merged is not None and merged.text == ours and not merged.low_confidence
    assert yaml.safe_load(merged.text)["jobs"][0]["parameters"]["toxenvs"] == ["lint", "py35", "py36", "py37", "docs"]


def test_yaml_flow_list_refuses_one_item_replaced_two_ways_and_other_spacing() -> None:
    base = "envs: [a, b, c]\n"

    assert YamlMerger().merge(base, "envs: [a, x, c]\n", "envs: [a, y, c]\n") is None
    assert YamlMerger().merge(base, "envs: [a,b,c,d]\n", "envs: [a, b]\n") is None


TOX = """[tox]
envlist = lint,py27,py35,docs

[testenv:watch-docs]
deps =
    -rdocs/requirements.txt
    sphinx-autobuild
extras =
commands = sphinx-autobuild docs/ docs/_build
"""


def test_ini_value_one_side_put_on_one_line_takes_the_items_both_kept() -> None:
    ours = TOX.replace("py27,py35,docs", "py35,py36,docs").replace(
        "deps =\n    -rdocs/requirements.txt\n    sphinx-autobuild\n", "deps = sphinx-autobuild\n"
    )
    theirs = TOX.replace("py27,py35,docs", "py27,py35,py36,docs").replace("    -rdocs/requirements.txt\n", "")

    merged = IniMerger().merge(TOX, ours, theirs)

    assert merged is not None and merged.text == ours


def test_ini_rewrapped_value_refused_when_the_other_side_added_an_item() -> None:
    ours = TOX.replace("deps =\n    -rdocs/requirements.txt\n    sphinx-autobuild\n", "deps = sphinx-autobuild\n")
    theirs = TOX.replace("    sphinx-autobuild\n", "    sphinx-autobuild\n    furo\n")

    assert IniMerger().merge(TOX, ours, theirs) is None
