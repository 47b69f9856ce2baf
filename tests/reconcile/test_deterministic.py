"""The deterministic rung on conflicts built from real texts (git merge-file does the three-way split)."""

from __future__ import annotations

import ast
import asyncio

from plait.reconcile.deterministic import DeterministicResolver, resolve_deterministic, same_content
from plait.reconcile.types import FileConflict, MergeContext, Resolution


def _resolve(path: str, base: str | None, ours: str | None, theirs: str | None) -> Resolution | None:
    return resolve_deterministic(FileConflict(path, base, ours, theirs))


MODULE = """import os


def area(w, h):
    return w * h


def perimeter(w, h):
    return 2 * (w + h)
"""


def test_both_sides_making_the_same_change_or_deleting_is_settled() -> None:
    same = _resolve("m.py", MODULE, MODULE + "\nX = 1\n", MODULE + "\nX = 1\n")
    assert same is not None and same.text == MODULE + "\nX = 1\n" and same.reason == "both sides made the same change"
    deleted = _resolve("m.py", MODULE, None, None)
    assert deleted is not None and deleted.text is None


def test_a_side_that_only_reformatted_gives_way_to_the_side_that_changed_content() -> None:
    reformatted = MODULE.replace("return w * h", "return (w*h)").replace("import os", "import os  # noqa")
    changed = MODULE.replace("return 2 * (w + h)", "return 2 * w + 2 * h").replace("return w * h", "return h * w")

    found = _resolve("m.py", MODULE, reformatted, changed)

    assert found is not None and found.rung == "deterministic" and "reformatted" in found.reason
    assert found.text is not None and "return h * w" in found.text and "2 * w + 2 * h" in found.text


def test_a_deletion_beats_a_mere_reformat_but_not_a_change() -> None:
    reformatted = MODULE.replace("w * h", "w*h")
    gone = _resolve("m.py", MODULE, None, reformatted)
    assert gone is not None and gone.text is None and "only reformatted" in gone.reason
    assert _resolve("m.py", MODULE, None, MODULE.replace("w * h", "h * w")) is None


def test_python_indentation_is_content_not_formatting() -> None:
    base = "if x:\n    a()\nb()\n"
    assert not same_content(base, "if x:\n    a()\n    b()\n", "m.py")
    assert same_content(base, "if x:\n    a( )\nb()\n", "m.py")
    assert not same_content("> set X\n", ">set X\n", "notes.rst")


def test_import_blocks_unite_in_the_file_order_without_duplicates() -> None:
    base = "import os\nimport sys\n\nprint(os, sys)\n"
    ours = "import os\nimport json\nimport re\nimport sys\n\nprint(os, sys)\n"
    theirs = "import os\nimport re\nimport shutil\nimport sys\n\nprint(os, sys)\n"

    found = _resolve("m.py", base, ours, theirs)

    assert found is not None and "import union" in found.reason
    assert found.text == "import os\nimport json\nimport re\nimport shutil\nimport sys\n\nprint(os, sys)\n"


def test_imports_that_bind_one_name_from_two_places_are_not_united() -> None:
    assert _resolve("m.py", "from a import app\n", "from b import app\n", "from c import app\n") is None


def test_names_inside_a_parenthesised_import_unite() -> None:
    base = "from pkg import (\n    alpha,\n    beta,\n)\n"
    ours = "from pkg import (\n    alpha,\n    beta,\n    delta,\n)\n"
    theirs = "from pkg import (\n    alpha,\n    beta,\n    gamma,\n)\n"

    found = _resolve("m.py", base, ours, theirs)

    assert found is not None and found.text == "from pkg import (\n    alpha,\n    beta,\n    delta,\n    gamma,\n)\n"


def test_javascript_imports_unite() -> None:
    base = "import a from './a';\n\nrun(a);\n"
    ours = "import a from './a';\nimport b from './b';\n\nrun(a);\n"
    theirs = "import a from './a';\nimport c from './c';\n\nrun(a);\n"

    found = _resolve("app.js", base, ours, theirs)

    assert (
        found is not None
        and found.text == "import a from './a';\nimport b from './b';\nimport c from './c';\n\nrun(a);\n"
    )


def test_a_changelog_both_sides_appended_to_keeps_both_ours_first() -> None:
    base = "Changes\n=======\n\n- first\n"
    ours = base + "- ours added this\n"
    theirs = base + "- theirs added this\n"

    found = _resolve("CHANGES.rst", base, ours, theirs)

    assert found is not None and found.text == base + "- ours added this\n- theirs added this\n"
    assert _resolve("calc.py", "x = 1\n", "x = 1\ny = 2\n", "x = 1\nz = 3\n") is None  # code is not a list


def test_version_bumps_keep_the_higher_version() -> None:
    found = _resolve(
        "pkg/__init__.py", '__version__ = "1.2.3"\n', '__version__ = "1.3.0.dev0"\n', '__version__ = "1.2.4"\n'
    )
    assert found is not None and found.text == '__version__ = "1.3.0.dev0"\n'
    pins = _resolve("requirements.txt", "pytest==8.1.1\n", "pytest==8.2.2\n", "pytest==8.3.2\n")
    assert pins is not None and pins.text == "pytest==8.3.2\n" and "theirs" in pins.reason


def test_a_side_that_already_holds_the_other_change_wins() -> None:
    base = "a==1.0\nb==1.0\n"
    ours = "a==1.0\nb==2.0\n"
    theirs = "a==1.0\nz==3.0\nb==2.0\n"
    found = _resolve("req.txt", base, ours, theirs)
    assert found is not None and found.text == theirs


def test_several_hunks_resolve_when_each_does_and_not_when_one_does_not() -> None:
    base = "import os\n" + "".join(f"x{n} = {n}\n" for n in range(12)) + "VERSION = '1.0'\n"
    ours = base.replace("import os\n", "import os\nimport re\n").replace("'1.0'", "'2.0'")
    theirs = base.replace("import os\n", "import os\nimport sys\n").replace("'1.0'", "'1.1'")

    found = _resolve("m.py", base, ours, theirs)

    assert found is not None and found.reason.startswith("2 hunks")
    assert found.text is not None and "import re\nimport sys\n" in found.text and "VERSION = '2.0'" in found.text
    clash = theirs.replace("x5 = 5", "x5 = 'five'")
    assert _resolve("m.py", base, ours.replace("x5 = 5", "x5 = 50"), clash) is None


def test_a_genuine_conflict_in_one_function_is_left_alone() -> None:
    ours = MODULE.replace("return w * h", "return w * h * 1.0")
    theirs = MODULE.replace("return w * h", "return abs(w * h)")
    assert _resolve("m.py", MODULE, ours, theirs) is None


def test_a_python_result_always_parses() -> None:
    for path, base, ours, theirs in [
        ("m.py", "import os\n", "import os\nimport re\n", "import os\nimport sys\n"),
        ("m.py", MODULE, MODULE.replace("w * h", "w*h"), MODULE + "\n\nZ = 1\n"),
    ]:
        found = _resolve(path, base, ours, theirs)
        assert found is not None and found.text is not None
        ast.parse(found.text)


def test_the_resolver_runs_off_the_event_loop() -> None:
    conflict = FileConflict("r.txt", "a==1.0\n", "a==2.0\n", "a==3.0\n")
    found = asyncio.run(DeterministicResolver().resolve(conflict, MergeContext()))
    assert found is not None and found.text == "a==3.0\n" and found.rung == "deterministic"


REGISTRY = 'from .a import fa\n\n__all__ = [\n    "fa",\n]\nHANDLERS = {\n    "a": fa,\n}\n'


def _registry(name: str) -> str:
    text = REGISTRY.replace("from .a import fa\n", f"from .a import fa\nfrom .{name} import f{name}\n")
    text = text.replace('    "fa",\n', f'    "fa",\n    "f{name}",\n')
    return text.replace('    "a": fa,\n', f'    "a": fa,\n    "{name}": f{name},\n')


def test_items_both_sides_added_to_one_registry_are_all_kept() -> None:
    """Parallel tasks each register their function in the same list and dict: nothing to judge, keep both."""
    resolved = _resolve("pkg/__init__.py", REGISTRY, _registry("x"), _registry("y"))
    assert resolved is not None and "both added items to one collection" in resolved.reason
    assert resolved.text is not None
    values = {
        node.targets[0].id: ast.literal_eval(node.value) if isinstance(node.value, ast.List) else None
        for node in ast.parse(resolved.text).body
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
    }
    assert values["__all__"] == ["fa", "fx", "fy"]
    assert "from .x import fx\nfrom .y import fy\n" in resolved.text
    assert resolved.text.count('"x": fx,') == 1 and resolved.text.count('"y": fy,') == 1


def test_added_statements_or_lines_outside_a_collection_are_not_taken_for_items() -> None:
    base = "def f():\n    a = 1\n    return a\n"
    ours = "def f():\n    a = 1\n    b = 2,\n    return a\n"
    theirs = "def f():\n    a = 1\n    c = 3,\n    return a\n"
    assert _resolve("m.py", base, ours, theirs) is None  # assignments, not items of a literal
    base = "x = g(\n    1,\n)\nprint(x)\n"
    ours = "x = g(\n    1,\n)\nprint(x)\nfoo(1),\n"
    theirs = "x = g(\n    1,\n)\nprint(x)\nbar(2),\n"
    assert _resolve("m.py", base, ours, theirs) is None  # not just after an opening bracket or another item


def test_two_additions_that_would_hold_one_release_twice_are_left_to_the_changelog_merger() -> None:
    """Both sides added the same release's section at one place, each with its own entry: the lines of both
    additions side by side would make two `Version 1.2` headings; the section-aware merge holds it once."""
    from plait.reconcile.structured import StructuredResolver

    base = "Changes\n=======\n\nVersion 1.1\n-----------\n\n- Fix a.\n"
    ours = base.replace("Version 1.1", "Version 1.2\n-----------\n\n- Fix b.\n\nVersion 1.1", 1)
    new = "Version 2.0\n-----------\n\n- Add c.\n\nVersion 1.2\n-----------\n\n- Fix d.\n\nVersion 1.1"
    theirs = base.replace("Version 1.1", new, 1)
    conflict = FileConflict("CHANGES.rst", base, ours, theirs)

    assert resolve_deterministic(conflict) is None
    merged = StructuredResolver().resolve_now(conflict)
    assert merged is not None and merged.text is not None and merged.text.count("Version 1.2\n") == 1
    assert "- Fix b." in merged.text and "- Fix d." in merged.text and "- Add c." in merged.text
