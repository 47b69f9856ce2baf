"""Configuration merges found on real history: one-line flow lists, values rewrapped by one side."""

from __future__ import annotations

import yaml

from plait.reconcile.structured import IniMerger, RequirementsMerger, YamlMerger

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


DEV_REQUIREMENTS = """# Tasks
invoke==0.21.0

# Distribution
wheel
twine

# Testing
pytest==3.0.2
"""


def test_requirement_removed_by_one_side_and_only_pinned_by_the_other_is_removed() -> None:
    ours = DEV_REQUIREMENTS.replace("invoke==0.21.0", "invoke==0.22.0").replace("wheel\ntwine", "wheel==0.30.0\ntwine")
    theirs = DEV_REQUIREMENTS.replace("# Distribution\nwheel\ntwine\n\n", "")

    merged = RequirementsMerger().merge(DEV_REQUIREMENTS, ours, theirs)

    assert merged is not None and merged.low_confidence
    assert merged.text == "# Tasks\ninvoke==0.22.0\n\n# Testing\npytest==3.0.2\n"
    assert "wheel: removed by one side, only its version changed by the other: removed" in merged.notes


def test_requirement_removed_by_one_side_and_edited_otherwise_by_the_other_stays_a_conflict() -> None:
    theirs = DEV_REQUIREMENTS.replace("# Distribution\nwheel\ntwine\n\n", "")

    assert RequirementsMerger().merge(DEV_REQUIREMENTS, DEV_REQUIREMENTS.replace("wheel", "wheel[x]"), theirs) is None
    replaced = DEV_REQUIREMENTS.replace("pytest==3.0.2", "pytest==3.0.3")
    assert RequirementsMerger().merge(DEV_REQUIREMENTS, replaced, DEV_REQUIREMENTS.replace("pytest", "nose")) is None


HOOKS = """repos:
  - repo: https://example.invalid/pyupgrade
    rev: v3.10.1
    hooks:
      - id: pyupgrade
  - repo: https://example.invalid/hooks
    rev: v4.4.0
    hooks:
      - id: trailing-whitespace
"""


def test_yaml_item_removed_by_one_side_and_only_bumped_by_the_other_is_removed() -> None:
    ours = HOOKS.replace(
        "  - repo: https://example.invalid/pyupgrade\n    rev: v3.10.1\n    hooks:\n      - id: pyupgrade\n", ""
    )
    theirs = HOOKS.replace("v3.10.1", "v3.15.0")

    merged = YamlMerger().merge(HOOKS, ours, theirs + "ci:\n  autoupdate_schedule: monthly\n")

    assert merged is not None and merged.low_confidence
    assert merged.text == ours + "ci:\n  autoupdate_schedule: monthly\n"
    assert yaml.safe_load(merged.text)["repos"] == [
        {"repo": "https://example.invalid/hooks", "rev": "v4.4.0", "hooks": [{"id": "trailing-whitespace"}]}
    ]


FACTORS = """[tox]
envlist =
    py3{12,11,10,9,8,7}
    pypy310
    style
"""


def test_tox_factor_list_both_sides_changed_merges_factor_by_factor() -> None:
    ours = FACTORS.replace("{12,11,10,9,8,7}", "{12,11,10,9,8}")
    theirs = FACTORS.replace("{12,11,10,9,8,7}", "{13,12,11,10,9,8,7}")

    merged = IniMerger().merge(FACTORS, ours, theirs)

    assert merged is not None and merged.text == FACTORS.replace("{12,11,10,9,8,7}", "{13,12,11,10,9,8}")


def test_tox_factor_list_refuses_one_factor_replaced_two_ways_or_another_prefix() -> None:
    ours = FACTORS.replace("8,7}", "8,6}")

    assert IniMerger().merge(FACTORS, ours, FACTORS.replace("8,7}", "8,5}")) is None
    assert IniMerger().merge(FACTORS, ours, FACTORS.replace("py3{12,", "pypy3{12,")) is None


def test_requirement_removal_stands_beside_an_unlike_new_requirement_in_its_place() -> None:
    ours = DEV_REQUIREMENTS.replace("wheel\ntwine", "wheel==0.30.0\ntwine")
    theirs = DEV_REQUIREMENTS.replace("wheel\n", "build==1.0\n")

    merged = RequirementsMerger().merge(DEV_REQUIREMENTS, ours, theirs)

    assert merged is not None and merged.text == theirs


def test_yaml_item_whose_changes_one_side_made_and_more_takes_that_side() -> None:
    ours = HOOKS.replace("v4.4.0", "v4.5.0").replace(
        "      - id: trailing-whitespace\n", "      - id: check-merge-conflict\n      - id: trailing-whitespace\n"
    )
    theirs = HOOKS.replace("v4.4.0", "v4.5.0").replace("v3.10.1", "v3.15.0")

    merged = YamlMerger().merge(HOOKS, ours, theirs)

    assert merged is not None and merged.text == ours.replace("v3.10.1", "v3.15.0")
    assert YamlMerger().merge(HOOKS, ours, HOOKS.replace("v4.4.0", "v4.6.0")) is None


MATRIX = """jobs:
  include:
  - { python: '2.7', env: TOXENV=py27 }
  - { python: '3.6', env: TOXENV=py36 }
  - { python: 'pypy', env: TOXENV=pypy }
  - { python: '3.6', env: TOXENV=docs }
"""


def test_yaml_item_both_sides_removed_while_one_put_another_in_its_place_takes_the_new_one() -> None:
    ours = MATRIX.replace("{ python: 'pypy', env: TOXENV=pypy }", "{ python: '3.7', env: TOXENV=py37, dist: xenial }")
    theirs = MATRIX.replace("  - { python: 'pypy', env: TOXENV=pypy }\n", "")

    merged = YamlMerger().merge(MATRIX, ours, theirs.replace("'2.7'", "'2.7.18'"))

    assert merged is not None and merged.text == ours.replace("'2.7'", "'2.7.18'")


def test_yaml_items_one_side_removed_and_the_other_rewrote_in_flow_style_stay_a_conflict() -> None:
    block = MATRIX.replace("{ python: '2.7', env: TOXENV=py27 }", "python: '2.7'\n    env: TOXENV=py27").replace(
        "{ python: 'pypy', env: TOXENV=pypy }", "python: 'pypy'\n    env: TOXENV=pypy"
    )
    ours = block.replace("  - python: 'pypy'\n    env: TOXENV=pypy\n", "")
    theirs = MATRIX.replace("'3.6', env: TOXENV=docs", "'3.7', env: TOXENV=docs")

    assert YamlMerger().merge(block, ours, theirs) is None
