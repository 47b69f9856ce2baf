"""The cross-branch semantic check on real commits: names gone since the base and still used."""

from __future__ import annotations

from pathlib import Path

import pytest
from gitrepo import Sandbox, sandbox

from plait.reconcile.semantic import attribute, find_breakage

CALC = "def total(items):\n    return sum(items)\n\n\ndef mean(items):\n    return total(items) / len(items)\n"
RENAMED = "def sum_all(items):\n    return sum(items)\n\n\ndef mean(items):\n    return sum_all(items) / len(items)\n"
MAIN = "from calc import total\n\nprint(total([1, 2]))\n"
MAIN_RENAMED = "from calc import sum_all\n\nprint(sum_all([1, 2]))\n"


@pytest.fixture
def box(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Sandbox:
    return sandbox(tmp_path, monkeypatch)


def _check(box: Sandbox, base_files: dict[str, str], combined: dict[str, str | None]) -> list[str]:
    base = box.start(base_files)
    assert box.repo is not None
    sha = box.commit(combined, parent=base)
    return [str(b) for b in find_breakage(box.repo, base, sha)]


def test_a_renamed_function_imported_by_new_code_is_caught(box: Sandbox) -> None:
    found = _check(
        box,
        {"calc.py": CALC, "main.py": MAIN},
        {"calc.py": RENAMED, "main.py": MAIN_RENAMED, "report.py": "from calc import total\n"},
    )
    assert found == ["report.py:1: imports 'total' from calc, which calc no longer defines"]


def test_module_attribute_and_same_module_uses_are_caught(box: Sandbox) -> None:
    uses_attr = "import calc\n\n\ndef run(x):\n    return calc.total(x)\n"
    calc_with_caller = RENAMED + "\n\ndef double(items):\n    return 2 * total(items)\n"
    found = _check(
        box,
        {"calc.py": CALC, "main.py": MAIN},
        {"calc.py": calc_with_caller, "main.py": MAIN_RENAMED, "app.py": uses_attr},
    )
    assert found == [
        "app.py:5: uses calc.total, which calc no longer defines",
        "calc.py:10: uses 'total', which calc no longer defines",
    ]


def test_package_layout_relative_imports_and_all(box: Sandbox) -> None:
    base = {
        "src/shop/__init__.py": "from .core import price\n\n__all__ = ['price']\n",
        "src/shop/core.py": "def price(x):\n    return x\n",
        "tests/test_core.py": "from shop.core import price\n",
    }
    found = _check(
        box,
        base,
        {"src/shop/core.py": "def cost(x):\n    return x\n", "tests/test_core.py": "from shop.core import cost\n"},
    )
    assert found == ["src/shop/__init__.py:1: imports 'price' from shop.core, which shop.core no longer defines"]


def test_an_all_entry_for_a_removed_name_is_caught(box: Sandbox) -> None:
    found = _check(
        box,
        {"calc.py": "__all__ = ['total']\n\n" + CALC},
        {"calc.py": "__all__ = ['total']\n\n" + RENAMED},
    )
    assert found == ["calc.py:1: lists 'total' in __all__, which calc no longer defines"]


def test_a_deleted_module_still_imported_is_caught(box: Sandbox) -> None:
    found = _check(
        box,
        {"pkg/__init__.py": "", "pkg/util.py": "X = 1\n", "pkg/app.py": "from pkg import util\n"},
        {"pkg/util.py": None, "pkg/other.py": "import pkg.util\n"},
    )
    assert found == [
        "pkg/app.py:1: imports pkg.util, which no longer exists",
        "pkg/other.py:1: imports pkg.util, which no longer exists",
    ]


def test_a_new_import_of_a_name_no_branch_defines_is_caught(box: Sandbox) -> None:
    found = _check(
        box,
        {"calc.py": CALC, "old.py": "from calc import missing_since_ever\n"},
        {"report.py": "from calc import helper\n\nhelper()\n"},
    )
    assert found == ["report.py:1: imports 'helper' from calc, which does not define it"]


@pytest.mark.parametrize(
    ("label", "combined"),
    [
        ("removed and no longer used", {"calc.py": RENAMED, "main.py": MAIN_RENAMED}),
        ("moved and re-exported", {"calc.py": "from stats import total\n", "stats.py": CALC}),
        ("a parameter of the same name", {"calc.py": RENAMED, "main.py": "def f(total):\n    return total\n"}),
        (
            "a guarded import",
            {"calc.py": RENAMED, "main.py": "try:\n    from calc import total\nexcept ImportError:\n    total = sum\n"},
        ),
        ("a module that star-imports", {"calc.py": "from stats import *\n", "stats.py": CALC}),
        (
            "an import expected to fail",
            {
                "calc.py": RENAMED,
                "main.py": "import pytest\n\nwith pytest.raises(ImportError):\n    from calc import total\n",
            },
        ),
        ("a stdlib name", {"main.py": "from json import loads\n", "json.py": "X = 1\n"}),
        ("a submodule", {"main.py": "from pkg import sub\n", "pkg/__init__.py": "", "pkg/sub.py": ""}),
        (
            "a package with an import hook",
            {"main.py": "from ext import plug\n", "ext/__init__.py": "from hooks import install\n\ninstall()\n"},
        ),
    ],
)
def test_no_false_alarm(box: Sandbox, label: str, combined: dict[str, str | None]) -> None:
    assert _check(box, {"calc.py": CALC, "main.py": MAIN}, combined) == [], label


def test_files_that_do_not_parse_are_left_to_the_parse_stage(box: Sandbox) -> None:
    assert _check(box, {"calc.py": CALC, "main.py": MAIN}, {"calc.py": "def (:\n", "x.py": "total(\n"}) == []


def test_attribute_names_the_remover_and_the_user_not_a_bystander(box: Sandbox) -> None:
    base = box.start({"calc.py": CALC, "main.py": MAIN, "other.py": "A = 1\n"})
    assert box.repo is not None
    rename = box.commit({"calc.py": RENAMED, "main.py": MAIN_RENAMED}, parent=base)
    caller = box.commit({"report.py": "from calc import total\n"}, parent=base)
    bystander = box.commit({"other.py": "A = 2\n"}, parent=base)
    combined = box.commit(
        {"calc.py": RENAMED, "main.py": MAIN_RENAMED, "report.py": "from calc import total\n", "other.py": "A = 2\n"},
        parent=base,
    )
    (breakage,) = find_breakage(box.repo, base, combined)
    tasks = {"rename": rename, "caller": caller, "bystander": bystander}
    assert attribute(box.repo, base, breakage, tasks) == ("rename", "caller")


def test_a_removed_submodule_whose_name_the_package_still_exports_is_fine(box: Sandbox) -> None:
    base = {"pkg/__init__.py": "from pkg.proxies import session\n", "pkg/proxies.py": "session = 1\n"}
    base["pkg/session.py"] = "X = 1\n"
    assert _check(box, base, {"pkg/session.py": None, "app.py": "from pkg import session\n"}) == []


def test_a_module_a_test_writes_at_run_time_is_not_reported(box: Sandbox) -> None:
    fixture_test = "def test_main(tmp_path):\n    (tmp_path / 'main_app.py').write_text('X = 1')\n    import main_app\n"
    base = {"main_app.py": "X = 1\n", "tests/test_paths.py": fixture_test, "other.py": "import main_app\n"}
    found = _check(box, base, {"main_app.py": None})
    assert found == ["other.py:1: imports main_app, which no longer exists"]
