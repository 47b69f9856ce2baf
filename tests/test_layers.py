"""plait's packages are layered: each imports only the layers below it, read from the code's own imports.

`LAYERS` is the picture `docs/architecture.md` draws. No import goes up: not at the top of a module, not inside a
function, not under `TYPE_CHECKING`.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "src" / "plait"

LAYERS: tuple[frozenset[str], ...] = (
    frozenset(
        {
            *("__init__", "errors", "redact", "textsafe", "trust", "_setting_shown"),
            *("messages", "plan_model", "globs", "shell_parse", "compaction_mark", "log_upgrade"),
        }
    ),
    frozenset({"events"}),
    frozenset({"models"}),
    frozenset({"settings", "_repo_file", "_mcp_config", "sandbox_settings", "sandbox_presets"}),
    frozenset({"workspace"}),
    frozenset({"agent"}),
    frozenset({"plan"}),
    frozenset({"coord"}),
    frozenset({"reconcile"}),
    frozenset({"run", "demo"}),
    frozenset({"ui"}),
    frozenset({"mcp"}),
    frozenset({"cli", "__main__"}),
)
"""Bottom to top. Modules in one layer may import one another; a layer imports only the layers below it."""

UI_READS_RUN: dict[str, str] = {
    "plait.ui._run_report": "prints how a run ended: reads the outcomes RunOutcome and ParallelOutcome",
    "plait.ui._session_output": "prints a session's replies: reads the types Reply and AskOutcome",
}
"""The modules of `plait.ui` that import `plait.run`, each to read a result or a type: the view only renders."""


def _unit(module: str) -> str:
    """The layer member a module belongs to: its package below `plait`, or its own name at the top."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _rank(unit: str) -> int:
    for rank, layer in enumerate(LAYERS):
        if unit in layer:
            return rank
    raise AssertionError(f"plait.{unit} is in no layer: add it to LAYERS (and to docs/architecture.md)")


def _member(root: Path, name: str) -> str:
    """A name imported from `plait` itself: a module or package of it, or else something its `__init__` holds."""
    return name if (root / f"{name}.py").exists() or (root / name).is_dir() else "__init__"


def _imports(root: Path, path: Path, module: str) -> set[str]:
    found: set[str] = set()
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            names = [target] if target != "plait" else [f"plait.{_member(root, a.name)}" for a in node.names]
            found.update(n for n in names if n.startswith("plait."))
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("plait."))
    return found


def upward_imports(root: Path = ROOT) -> set[tuple[str, str]]:
    """Every (module, imported layer member) where the member sits in a higher layer than the module."""
    wrong: set[tuple[str, str]] = set()
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root.parent).with_suffix("")
        module = ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)
        if module == "plait":
            continue
        own = _rank(_unit(module))
        for target in _imports(root, path, module):
            unit = _unit(target)
            if _rank(unit) > own:
                wrong.add((module, unit))
    return wrong


def test_imports_flow_downwards_only() -> None:
    wrong = sorted(upward_imports())
    assert not wrong, "imports that go up the layers (see LAYERS): " + ", ".join(f"{m} -> plait.{u}" for m, u in wrong)


def test_the_ui_imports_the_run_layer_only_to_read_its_results() -> None:
    found: set[str] = set()
    for path in sorted((ROOT / "ui").rglob("*.py")):
        rel = path.relative_to(ROOT.parent).with_suffix("")
        module = ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)
        if any(_unit(target) == "run" for target in _imports(ROOT, path, module)):
            found.add(module)
    new, gone = sorted(found - set(UI_READS_RUN)), sorted(set(UI_READS_RUN) - found)
    assert not new, "plait.ui modules that import plait.run (the command line drives a run): " + ", ".join(new)
    assert not gone, "no longer import plait.run, remove from UI_READS_RUN: " + ", ".join(gone)


def test_the_architecture_page_draws_every_layer_member() -> None:
    page = (ROOT.parents[1] / "docs" / "architecture.md").read_text(encoding="utf-8")
    members = sorted(m for layer in LAYERS for m in layer if m != "__init__")
    missing = [m for m in members if not re.search(rf"(?<![\w.]){re.escape(m)}(?!\w)", page)]
    assert not missing, "docs/architecture.md does not draw: " + ", ".join(missing)


def test_upward_imports_of_every_form_are_caught(tmp_path: Path) -> None:
    root = tmp_path / "plait"
    for package in ("events", "run", "ui"):
        (root / package).mkdir(parents=True)
        (root / package / "__init__.py").write_text('"""Package."""\n', encoding="utf-8")
    (root / "__init__.py").write_text('__version__ = "0"\n', encoding="utf-8")
    (root / "events" / "a.py").write_text("from plait.run import parallel\n", encoding="utf-8")
    (root / "events" / "b.py").write_text("def f():\n    from ..ui import live\n", encoding="utf-8")
    (root / "events" / "c.py").write_text(
        "import plait.run.state\nfrom plait import __version__, ui\n", encoding="utf-8"
    )
    (root / "run" / "d.py").write_text("from plait.events import a\nfrom . import e\n", encoding="utf-8")
    assert upward_imports(root) == {
        ("plait.events.a", "run"),
        ("plait.events.b", "ui"),
        ("plait.events.c", "run"),
        ("plait.events.c", "ui"),
    }
