"""INI-style configuration (setup.cfg, tox.ini) merged key by key, multi-line values item by item."""

from __future__ import annotations

from plait.reconcile.structured import DEFAULT_MERGERS, IniMerger, StructuredResolver
from plait.reconcile.structured.base import EntityMerge
from plait.reconcile.types import FileConflict

SETUP_CFG = """[metadata]
name = pkg
# supported versions
python_requires = >= 3.6
include_package_data = true

[flake8]
select = B, E, F
ignore =
    # slice notation whitespace, invalid
    E203
    # line length, handled by bugbear
    E501
    W503

[mypy]
python_version = 3.6
warn_unused_ignores = True
"""


def _merge(base: str, ours: str, theirs: str) -> EntityMerge | None:
    return IniMerger().merge(base, ours, theirs)


def test_setup_cfg_and_tox_ini_are_claimed_by_the_ini_merger() -> None:
    resolver = StructuredResolver(DEFAULT_MERGERS)

    for path in ("setup.cfg", "tox.ini", "pkg/.flake8", "conf/app.ini", "other.cfg"):
        assert isinstance(resolver.merger_for(path), IniMerger), path


def test_adjacent_keys_changed_on_each_side_merge_with_comments_and_blank_lines_kept() -> None:
    ours = SETUP_CFG.replace(">= 3.6", ">= 3.7").replace("python_version = 3.6", "python_version = 3.7")
    theirs = SETUP_CFG.replace("include_package_data = true", "include_package_data = True").replace(
        "warn_unused_ignores = True\n", "warn_unused_ignores = True\nshow_error_codes = True\n"
    )

    merged = _merge(SETUP_CFG, ours, theirs)

    assert merged is not None and not merged.low_confidence and merged.notes == ()
    assert merged.text == SETUP_CFG.replace(">= 3.6", ">= 3.7").replace(
        "python_version = 3.6", "python_version = 3.7"
    ).replace("include_package_data = true", "include_package_data = True").replace(
        "warn_unused_ignores = True\n", "warn_unused_ignores = True\nshow_error_codes = True\n"
    )
    assert "python_requires" in merged.ours_changed and "show_error_codes" in merged.theirs_changed


def test_a_multi_line_value_is_merged_item_by_item_with_its_comments() -> None:
    ours = SETUP_CFG.replace("    E501\n", "    E501\n    E722\n")  # added after E501
    theirs = SETUP_CFG.replace("    # slice notation whitespace, invalid\n    E203\n", "").replace(
        "    W503\n", "    W503\n    # zip without strict\n    B905\n"
    )

    merged = _merge(SETUP_CFG, ours, theirs)

    assert merged is not None and not merged.low_confidence
    assert "ignore =\n    # line length, handled by bugbear\n    E501\n    E722\n    W503\n    # zip" in merged.text


def test_both_sides_adding_at_one_spot_keeps_both_and_says_it_chose_the_order() -> None:
    ours = SETUP_CFG.replace("    W503\n", "    W503\n    E722\n")
    theirs = SETUP_CFG.replace("    W503\n", "    W503\n    B905\n")

    merged = _merge(SETUP_CFG, ours, theirs)

    assert merged is not None and "    W503\n    E722\n    B905\n" in merged.text
    assert merged.low_confidence and merged.notes == ("both sides added entries at one spot: ours' placed first",)


def test_one_item_changed_differently_on_each_side_is_left_as_a_conflict() -> None:
    base = "[tox]\nenvlist =\n    py{311,310,39}\n    docs\n"
    ours = "[tox]\nenvlist =\n    py3{11,10,9}\n    docs\n"
    theirs = "[tox]\nenvlist =\n    py3{12,11,10,9}\n    docs\n"

    assert _merge(base, ours, theirs) is None
    assert _merge(base, base.replace("docs", "docs2"), base.replace("docs", "docs3")) is None


def test_a_removed_item_stays_removed_unless_the_other_side_changed_its_key() -> None:
    base = "[tox]\nenvlist = lint,py27,py34,py35,docs\n"
    ours = "[tox]\nenvlist = lint,py35,py36,docs\n"
    theirs = "[tox]\nenvlist = lint,py27,py35,docs\n"

    merged = _merge(base, ours, theirs)

    assert merged is not None and merged.text == "[tox]\nenvlist = lint,py35,py36,docs\n"
    assert _merge(base, ours, "[tox]\nenvlist = lint, py27, py35, docs\n") is None  # the spacing differs
    assert _merge(base, ours, "[tox]\nenvlist = py3{5,6},docs\n") is None  # braces are not a plain list


def test_both_sides_bumping_a_dependency_take_the_newer_pin_and_say_so() -> None:
    base = "[testenv]\ndeps =\n    pytest==7.4.0\n    coverage>=6.0\ncommands = pytest\n"
    ours = base.replace("pytest==7.4.0", "pytest==8.0.1")
    theirs = base.replace("pytest==7.4.0", "pytest==8.1.1").replace("coverage>=6.0", "coverage>=7.0")

    merged = _merge(base, ours, theirs)

    assert merged is not None and merged.text == theirs
    assert merged.low_confidence and merged.notes == ("took the newer pin of pytest: 8.1.1 over 8.0.1",)


def test_a_downgrade_on_one_side_is_not_overruled_by_the_newer_pin() -> None:
    base = "[options]\ninstall_requires =\n    click>=8.0\n"

    assert _merge(base, base.replace("8.0", "7.0"), base.replace("8.0", "8.1")) is None


def test_a_line_the_reader_cannot_place_leaves_the_file_alone() -> None:
    base = "[tox]\nenvlist = py3\n"
    odd = "[tox]\nenvlist = py3\n  stray continuation\n= no key\n"

    assert _merge(base, odd, base.replace("py3", "py311")) is None


def test_the_structured_resolver_reports_the_rules_notes_in_a_low_confidence_resolution() -> None:
    base = "[testenv]\ndeps =\n    pytest==7.4.0\n"
    conflict = FileConflict(
        path="tox.ini", base=base, ours=base.replace("7.4.0", "8.0"), theirs=base.replace("7.4.0", "7.4.4")
    )

    resolution = StructuredResolver().resolve_now(conflict)

    assert resolution is not None and resolution.confidence == "low"
    assert resolution.text == base.replace("7.4.0", "8.0")
    assert resolution.reason.endswith("; took the newer pin of pytest: 8.0 over 7.4.4")


def test_keys_one_side_reordered_are_a_conflict_rather_than_an_order_silently_lost() -> None:
    base = "[testenv]\ncommands = pytest\ndeps = pytest-cov\npassenv = CI\n"
    theirs = "[testenv]\ndeps = pytest-cov\ncommands = pytest\npassenv = CI\n"
    ours = base.replace("passenv = CI", "passenv = CI TRAVIS")

    assert _merge(base, ours, theirs) is None
    merged = _merge(base, theirs, ours)  # the reorder on our side is followed
    assert merged is not None and merged.text == theirs.replace("passenv = CI", "passenv = CI TRAVIS")
