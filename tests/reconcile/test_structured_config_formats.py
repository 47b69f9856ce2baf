"""TOML and YAML configuration merged key by key, comments and order kept; what cannot be read is left alone."""

from __future__ import annotations

import tomllib

import yaml

from plait.reconcile.structured import DEFAULT_MERGERS, JsonMerger, StructuredResolver, TomlMerger, YamlMerger

PYPROJECT = """[project]
name = "pkg"
# keep in step with the classifiers
requires-python = ">=3.8"
dependencies = [
    "click>=8.0",
    # the old API
    "itsdangerous>=2.0",
]

[project.optional-dependencies]
docs = [
    "sphinx>=7.0",
]

[tool.ruff]
line-length = 100
"""

WORKFLOW = """name: tests
on:
  push:
    branches:
      - main
      - '*.x'
jobs:
  tests:
    runs-on: ubuntu-latest
    steps:
      # check out first
      - uses: actions/checkout@b4ffde65f46336ab88eb53be808477a3936bae11  # v4.1.1
      - uses: actions/setup-python@0a5c61591373683505ea898e09a3ea4f39ef2b9c  # v5.0.0
        with:
          python-version: '3.12'
      - run: pip install tox
"""


def test_toml_and_yaml_files_are_claimed() -> None:
    resolver = StructuredResolver(DEFAULT_MERGERS)

    assert isinstance(resolver.merger_for("pyproject.toml"), TomlMerger)
    assert isinstance(resolver.merger_for(".github/workflows/tests.yml"), YamlMerger)
    assert isinstance(resolver.merger_for(".pre-commit-config.yaml"), YamlMerger)


def test_toml_keys_of_one_table_and_items_of_one_array_merge_with_their_comments() -> None:
    ours = PYPROJECT.replace('">=3.8"', '">=3.9"').replace(
        '    "click>=8.0",\n', '    "click>=8.0",\n    "colorama",\n'
    )
    theirs = PYPROJECT.replace("# the old API", "# the new API").replace("line-length = 100\n", "line-length = 88\n")

    merged = TomlMerger().merge(PYPROJECT, ours, theirs)

    assert merged is not None and not merged.low_confidence
    assert merged.text == ours.replace("# the old API", "# the new API").replace(
        "line-length = 100", "line-length = 88"
    )
    assert tomllib.loads(merged.text)["project"]["dependencies"][1] == "colorama"


def test_toml_dependency_bumped_on_both_sides_takes_the_newer() -> None:
    ours = PYPROJECT.replace('"sphinx>=7.0"', '"sphinx>=7.2"')
    theirs = PYPROJECT.replace('"sphinx>=7.0"', '"sphinx>=7.1"').replace('name = "pkg"', 'name = "pkg2"')

    merged = TomlMerger().merge(PYPROJECT, ours, theirs)

    assert merged is not None and merged.text == ours.replace('name = "pkg"', 'name = "pkg2"')
    assert merged.low_confidence and merged.notes == ("took the newer pin of sphinx: 7.2 over 7.1",)


def test_toml_refuses_a_value_changed_twice_and_a_file_it_cannot_read() -> None:
    ours = PYPROJECT.replace("line-length = 100", "line-length = 88")
    theirs = PYPROJECT.replace("line-length = 100", "line-length = 120")

    assert TomlMerger().merge(PYPROJECT, ours, theirs) is None
    broken = PYPROJECT.replace('name = "pkg"', 'name = "pkg\n')
    assert TomlMerger().merge(PYPROJECT, broken, theirs) is None
    inline = 'deps = ["a", "b"]\n'
    assert TomlMerger().merge(inline, 'deps = ["a", "c"]\n', 'deps = ["a", "b", "d"]\n') is None


def test_yaml_keys_and_sequence_items_merge_by_what_they_name() -> None:
    ours = WORKFLOW.replace("runs-on: ubuntu-latest", "runs-on: ubuntu-22.04").replace(
        "      - run: pip install tox\n", "      - run: pip install tox\n      - run: tox -e py\n"
    )
    pull = ("      - '*.x'\n", "      - '*.x'\n  pull_request:\n")
    theirs = WORKFLOW.replace(*pull).replace("'3.12'", "'3.13'")

    merged = YamlMerger().merge(WORKFLOW, ours, theirs)

    assert merged is not None and not merged.low_confidence
    assert merged.text == ours.replace("      - '*.x'\n", "      - '*.x'\n  pull_request:\n").replace(
        "'3.12'", "'3.13'"
    )
    assert yaml.safe_load(merged.text)["jobs"]["tests"]["steps"][-1] == {"run": "tox -e py"}


def test_yaml_action_bumped_on_both_sides_takes_the_newer_version_and_says_so() -> None:
    ours = WORKFLOW.replace("b4ffde65f46336ab88eb53be808477a3936bae11  # v4.1.1", "aaaa  # v4.1.7")
    theirs = WORKFLOW.replace("b4ffde65f46336ab88eb53be808477a3936bae11  # v4.1.1", "bbbb  # v4.1.6")

    merged = YamlMerger().merge(WORKFLOW, ours, theirs)

    assert merged is not None and merged.text == ours
    assert merged.low_confidence and merged.notes == ("took the newer version of actions/checkout: v4.1.7 over v4.1.6",)


def test_yaml_refuses_a_floating_tag_against_an_exact_one_and_what_it_cannot_read() -> None:
    base = "steps:\n  - uses: actions/cache@v3.0.4\n"

    assert YamlMerger().merge(base, base.replace("v3.0.4", "v3.2.2"), base.replace("v3.0.4", "v3")) is None
    assert YamlMerger().merge(base, base.replace("v3.0.4", "v4"), base.replace("v3.0.4", "abc123")) is None
    flow = "a:\n  b: [1,\n2]\n"
    assert YamlMerger().merge(flow, flow + "c: 1\n", flow + "d: 1\n") is None
    two_docs = "a: 1\n---\nb: 2\n"
    assert YamlMerger().merge(two_docs, two_docs + "c: 1\n", two_docs + "d: 1\n") is None


def test_yaml_item_each_side_replaced_its_own_way_is_a_conflict() -> None:
    base = "repos:\n  - repo: https://example.invalid/a\n    rev: v1.0.0\n"
    ours = "repos:\n  - repo: https://example.invalid/b\n    rev: v1.0.0\n"
    theirs = "repos:\n  - repo: https://example.invalid/a\n    rev: v1.1.0\n"

    assert YamlMerger().merge(base, ours, theirs) is None


PACKAGE_JSON = """{
  "name": "pkg",
  "version": "1.0.0",
  "scripts": {
    "test": "jest",
    "lint": "eslint ."
  },
  "files": [
    "dist"
  ]
}
"""


def test_json_members_merge_with_commas_written_back_and_indentation_kept() -> None:
    ours = PACKAGE_JSON.replace('"lint": "eslint ."', '"lint": "eslint .",\n    "build": "tsc"')
    theirs = PACKAGE_JSON.replace('"version": "1.0.0"', '"version": "1.1.0"').replace(
        '    "dist"\n  ]\n', '    "dist"\n  ],\n  "license": "MIT"\n'
    )

    merged = JsonMerger().merge(PACKAGE_JSON, ours, theirs)

    assert merged is not None and merged.text == ours.replace('"version": "1.0.0"', '"version": "1.1.0"').replace(
        '    "dist"\n  ]\n', '    "dist"\n  ],\n  "license": "MIT"\n'
    )
    assert isinstance(StructuredResolver(DEFAULT_MERGERS).merger_for("package.json"), JsonMerger)


def test_json_refuses_a_value_changed_twice_and_a_file_not_written_one_member_per_line() -> None:
    assert (
        JsonMerger().merge(PACKAGE_JSON, PACKAGE_JSON.replace("jest", "vitest"), PACKAGE_JSON.replace("jest", "ava"))
        is None
    )
    compact = '{"a": 1, "b": 2}\n'
    assert JsonMerger().merge(compact, '{"a": 2, "b": 2}\n', '{"a": 1, "b": 3}\n') is None


def test_yaml_value_one_side_turned_into_a_mapping_keeps_its_members() -> None:
    base = "jobs:\n  publish:\n    environment: publish\n    runs-on: ubuntu-latest\n"
    theirs = base.replace("environment: publish\n", "environment:\n      name: publish\n      url: https://x.invalid\n")
    ours = base.replace("ubuntu-latest", "ubuntu-22.04")

    merged = YamlMerger().merge(base, ours, theirs)

    assert merged is not None and merged.text == theirs.replace("ubuntu-latest", "ubuntu-22.04")
