"""JavaScript, TypeScript, Go, Rust and Java merged entity by entity through their tree-sitter grammars."""

from __future__ import annotations

from pathlib import Path

import pytest
from gitrepo import Sandbox, sandbox

from plait.reconcile.ladder import merge_commits_sync
from plait.reconcile.structured import StructuredResolver
from plait.reconcile.structured._ts_keys import TsLanguage
from plait.reconcile.structured.treesitter import TREE_SITTER_MERGERS, TreeSitterMerger
from plait.reconcile.types import FileConflict

MERGERS = {merger.language.name: merger for merger in TREE_SITTER_MERGERS}

JS = """import { readFile } from "fs";

// Adds.
export function add(a, b) {
  return a + b;
}

export function sub(a, b) {
  return a - b;
}
"""

TS = """export class Shape {
  constructor(private w: number) {}

  area(): number {
    return this.w * this.w;
  }
}
"""

GO = """package calc

import (
\t"fmt"
)

type Calc struct {
\tTotal int
}

func (c *Calc) Add(n int) {
\tc.Total += n
}

func Show(c *Calc) {
\tfmt.Println(c.Total)
}
"""

RUST = """use std::fmt;

pub struct Calc {
    total: i64,
}

impl Calc {
    pub fn add(&mut self, n: i64) {
        self.total += n;
    }
}
"""

JAVA = """package calc;

import java.util.List;

public class Calc {
    private int total;

    public void add(int n) {
        total += n;
    }
}
"""


def _merge(language: str, base: str, ours: str, theirs: str) -> str | None:
    merged = MERGERS[language].merge(base, ours, theirs)
    return None if merged is None else merged.text


def test_every_file_reassembles_to_its_exact_bytes() -> None:
    for language, text in (("JavaScript", JS), ("TypeScript", TS), ("Go", GO), ("Rust", RUST), ("Java", JAVA)):
        for variant in (text, text.rstrip("\n"), text.replace("\n", "\r\n"), "\n\n" + text + "\n// tail\n"):
            entities = MERGERS[language].entities(variant)
            assert entities is not None and "".join(e.text for e in entities) == variant, language


def test_a_container_on_one_line_is_one_entity() -> None:
    text = "package p\n\ntype Empty struct{}\n\nfunc F() {}\n"

    entities = MERGERS["Go"].entities(text)

    assert entities is not None and [e.key for e in entities] == [
        ("package", ""),
        ("type_declaration", "Empty"),
        ("function_declaration", "F"),
        ("<end>",),
    ]
    assert entities[1].children is None and entities[1].text == "\ntype Empty struct{}\n"


def test_both_sides_added_different_functions_at_the_same_place() -> None:
    ours = JS + "\nexport function mul(a, b) {\n  return a * b;\n}\n"
    theirs = JS + "\nexport function div(a, b) {\n  return a / b;\n}\n"

    merged = MERGERS["JavaScript"].merge(JS, ours, theirs)

    assert merged is not None
    assert merged.text == JS + "\nexport function mul(a, b) {\n  return a * b;\n}\n" + (
        "\nexport function div(a, b) {\n  return a / b;\n}\n"
    )
    assert merged.ours_changed == ("mul",) and merged.theirs_changed == ("div",)
    assert merged.low_confidence and merged.notes == ("both sides added at one place: ours first, then theirs",)


def test_additions_at_different_places_are_high_confidence() -> None:
    ours = JS + "\nexport function mul(a, b) {\n  return a * b;\n}\n"
    theirs = JS.replace("// Adds.", "export const ZERO = 0;\n\n// Adds.")

    merged = MERGERS["JavaScript"].merge(JS, ours, theirs)

    assert merged is not None and not merged.low_confidence and merged.notes == ()


def test_one_side_edited_a_method_while_the_other_added_one() -> None:
    ours = TS.replace("this.w * this.w", "this.w ** 2")
    theirs = TS.replace("  }\n}\n", "  }\n\n  perimeter(): number {\n    return 4 * this.w;\n  }\n}\n")

    merged = _merge("TypeScript", TS, ours, theirs)

    assert merged == ours.replace("  }\n}\n", "  }\n\n  perimeter(): number {\n    return 4 * this.w;\n  }\n}\n")


def test_both_sides_edited_one_function_is_left_to_the_next_rung() -> None:
    ours = JS.replace("return a + b;", "return a + b + 0;")
    theirs = JS.replace("return a + b;", "return Number(a) + Number(b);")

    assert _merge("JavaScript", JS, ours, theirs) is None


def test_a_result_that_would_not_parse_is_refused() -> None:
    # Each side put a comma after the last field and added its own field last: the union lacks a comma.
    base = "struct P {\n    a: i32\n}\n"
    ours = "struct P {\n    a: i32,\n    b: i32\n}\n"
    theirs = "struct P {\n    a: i32,\n    c: i32\n}\n"
    merger = MERGERS["Rust"]
    assert not merger.parses("struct P {\n    a: i32,\n    b: i32\n    c: i32\n}\n")

    assert merger.merge(base, ours, theirs) is None


def test_a_side_that_does_not_parse_is_refused() -> None:
    assert _merge("JavaScript", JS, JS + "function f() {\n", JS + "function g() {}\n") is None


def test_a_function_one_side_deleted_that_the_other_side_newly_calls_is_refused() -> None:
    ours = GO.replace("func Show(c *Calc) {\n\tfmt.Println(c.Total)\n}\n", "")
    theirs = GO + "\nfunc ShowTwice(c *Calc) {\n\tShow(c)\n\tShow(c)\n}\n"

    assert _merge("Go", GO, ours, theirs) is None
    assert _merge("Go", GO, ours, GO + "\nfunc Other() {}\n") is not None


def test_a_new_signature_that_the_other_side_newly_calls_is_refused() -> None:
    ours = GO.replace("func (c *Calc) Add(n int) {", "func (c *Calc) Add(n int64) {").replace(
        "c.Total += n", "c.Total += int(n)"
    )
    theirs = GO + "\nfunc AddOne(c *Calc) {\n\tc.Add(1)\n}\n"

    assert _merge("Go", GO, ours, theirs) is None
    assert _merge("Go", GO, GO.replace("c.Total += n", "c.Total += n * 1"), theirs) is not None


def test_only_the_lines_the_other_side_wrote_count_as_uses() -> None:
    base = GO + "\nfunc AddOne(c *Calc) {\n\tc.Add(1)\n}\n"
    ours = base.replace("Add(n int) {", "Add(n int64) {").replace("c.Total += n", "c.Total += int(n)")
    theirs = base.replace("\tc.Add(1)\n", "\t// Add one to the total.\n\tc.Add(1)\n\tfmt.Println(c.Total)\n")

    merged = _merge("Go", base, ours, theirs)

    assert merged == ours.replace("\tc.Add(1)\n", "\t// Add one to the total.\n\tc.Add(1)\n\tfmt.Println(c.Total)\n")


def test_members_theirs_reordered_are_refused_rather_than_put_back() -> None:
    base = 'import (\n\t"a"\n\t"b"\n\t"c"\n)\n'
    theirs = 'import (\n\t"c"\n\t"a"\n\t"b"\n)\n'
    ours = 'import (\n\t"a"\n\t"b"\n\t"c"\n\t"d"\n)\n'

    assert _merge("Go", "package p\n\n" + base, "package p\n\n" + ours, "package p\n\n" + theirs) is None
    merged = _merge("Go", "package p\n\n" + base, "package p\n\n" + theirs, "package p\n\n" + ours)
    assert merged == 'package p\n\nimport (\n\t"c"\n\t"d"\n\t"a"\n\t"b"\n)\n'  # d after c, as in theirs


def test_a_statement_whose_first_line_both_sides_changed_is_refused() -> None:
    # A minified file: one long line, too long for the entity merge's own likeness check by character.
    base = "(function(){var a=1;" + "f(a);" * 500 + "return a})();\n"
    ours, theirs = base.replace("a=1", "a=2"), base.replace("a=1", "a=3")

    assert _merge("JavaScript", base, ours, theirs) is None
    assert _merge("JavaScript", base, ours, base + "run();\n") == ours + "run();\n"


def test_the_same_code_added_under_two_names_is_refused() -> None:
    body = "(a, b) {\n  const total = a + b;\n  log(total);\n  return total;\n}\n"
    ours = JS + "\nexport function sum" + body
    theirs = JS + "\nexport function total" + body.replace("log(total)", "console.log(total)")

    assert _merge("JavaScript", JS, ours, theirs) is None


def test_go_imports_both_sides_added_are_united_in_order() -> None:
    ours = GO.replace('\t"fmt"\n', '\t"fmt"\n\t"strings"\n')
    theirs = GO.replace('\t"fmt"\n', '\t"errors"\n\t"fmt"\n')

    merged = MERGERS["Go"].merge(GO, ours, theirs)

    assert merged is not None and merged.text == GO.replace('\t"fmt"\n', '\t"errors"\n\t"fmt"\n\t"strings"\n')
    assert merged.ours_changed == ("import", 'import."strings"')
    assert merged.theirs_changed == ("import", 'import."errors"')


def test_go_struct_fields_and_methods_from_both_sides() -> None:
    ours = GO.replace("\tTotal int\n", "\tTotal int\n\tCount int\n") + "\nfunc (c *Calc) Reset() {\n\tc.Total = 0\n}\n"
    theirs = GO.replace("\tTotal int\n", "\tTotal int\n\tName  string\n").replace("c.Total += n", "c.Total -= -n")

    merged = _merge("Go", GO, ours, theirs)

    assert merged is not None and "Count int\n\tName  string\n" in merged
    assert "c.Total -= -n" in merged and "Reset()" in merged


def test_rust_use_names_both_sides_added_are_united() -> None:
    base = "use std::{fmt, io};\n\nfn main() {}\n"
    ours = "use std::{fmt, fs, io};\n\nfn main() {}\n"
    theirs = "use std::{env, fmt, io};\n\nfn main() {}\n"

    merged = MERGERS["Rust"].merge(base, ours, theirs)

    assert merged is not None and merged.text == "use std::{env, fmt, fs, io};\n\nfn main() {}\n"
    assert merged.notes == ("united the names imported from std::{",)


def test_javascript_imports_of_one_module_are_united() -> None:
    ours = JS.replace("{ readFile }", "{ readFile, writeFile }")
    theirs = JS.replace("{ readFile }", "{ readFile, stat }")

    assert _merge("JavaScript", JS, ours, theirs) == JS.replace("{ readFile }", "{ readFile, stat, writeFile }")


def test_imports_both_sides_added_at_one_spot_stay_sorted_when_both_sides_kept_them_sorted() -> None:
    base = JAVA.replace("import java.util.List;\n", "import java.util.List;\nimport java.util.Map;\n")
    ours = base.replace("Map;\n", "Map;\nimport java.util.Set;\n")
    theirs = base.replace("Map;\n", "Map;\nimport java.util.Optional;\n")

    merged = MERGERS["Java"].merge(base, ours, theirs)

    assert merged is not None
    assert merged.text == base.replace("Map;\n", "Map;\nimport java.util.Optional;\nimport java.util.Set;\n")
    assert merged.notes == ("kept the imports sorted, as both sides had them",) and not merged.low_confidence


def test_imports_in_no_order_keep_ours_first() -> None:
    base = JAVA.replace("import java.util.List;\n", "import java.util.Map;\nimport java.util.List;\n")
    ours = base.replace("List;\n", "List;\nimport java.util.Set;\n")
    theirs = base.replace("List;\n", "List;\nimport java.util.Optional;\n")

    merged = _merge("Java", base, ours, theirs)

    assert merged == base.replace("List;\n", "List;\nimport java.util.Set;\nimport java.util.Optional;\n")


def test_java_overloads_are_distinct_entities() -> None:
    ours = JAVA.replace("    }\n}\n", "    }\n\n    public void add(long n) {\n        total += (int) n;\n    }\n}\n")
    theirs = JAVA.replace("total += n;", "total = total + n;")

    merged = _merge("Java", JAVA, ours, theirs)

    assert merged is not None and "total = total + n;" in merged and "add(long n)" in merged


def test_rust_attribute_and_impl_members_merge_apart() -> None:
    ours = RUST.replace("pub struct", "#[derive(Debug)]\npub struct")
    theirs = RUST.replace("    }\n}\n", "    }\n\n    pub fn total(&self) -> i64 {\n        self.total\n    }\n}\n")

    merged = _merge("Rust", RUST, ours, theirs)

    assert merged == ours.replace(
        "    }\n}\n", "    }\n\n    pub fn total(&self) -> i64 {\n        self.total\n    }\n}\n"
    )


def test_a_grammar_that_cannot_be_loaded_leaves_the_file_alone() -> None:
    missing = TreeSitterMerger(TsLanguage("Nothing", "plait_no_such_grammar", "language", (".nothing",)))

    assert missing.merge("a\n", "b\n", "c\n") is None and missing.entities("a\n") is None


def test_the_structured_rung_picks_the_merger_by_extension() -> None:
    resolver = StructuredResolver()
    for path, language in (("a.mjs", "JavaScript"), ("b.tsx", "TSX"), ("c.go", "Go"), ("d.rs", "Rust")):
        merger = resolver.merger_for(path)
        assert isinstance(merger, TreeSitterMerger) and merger.language.name == language
    ours = JS + "\nexport const ONE = 1;\n"
    theirs = JS.replace("return a - b;", "return a - b - 0;")
    found = resolver.resolve_now(FileConflict("src/calc.js", JS, ours, theirs))
    assert found is not None and found.reason == "entity merge: ours changed ONE; theirs changed sub"


SCENARIOS = {
    # path: (base, the line both sides add before, ours' addition, theirs', ours' edit, theirs' edit)
    "calc.js": (
        JS,
        "export function sub",
        "export function mul(a, b) {\n  return a * b;\n}\n\n",
        "export function div(a, b) {\n  return a / b;\n}\n\n",
        ('from "fs"', 'from "node:fs"'),
        ("return a - b;", "return -(b - a);"),
    ),
    "shape.ts": (
        TS,
        "  area(): number",
        "  half(): number {\n    return this.w / 2;\n  }\n\n",
        "  twice(): number {\n    return this.w * 2;\n  }\n\n",
        ("export class", "export default class"),
        ("this.w * this.w", "this.w ** 2"),
    ),
    "calc.go": (
        GO,
        "func Show",
        "func Zero() *Calc {\n\treturn &Calc{}\n}\n\n",
        "func One() *Calc {\n\treturn &Calc{Total: 1}\n}\n\n",
        ("\tTotal int\n", "\tTotal int64\n"),
        ("fmt.Println(c.Total)", "fmt.Println(c)"),
    ),
    "calc.rs": (
        RUST,
        "    pub fn add",
        "    pub fn zero() -> Calc {\n        Calc { total: 0 }\n    }\n\n",
        "    pub fn get(&self) -> i64 {\n        self.total\n    }\n\n",
        ("    total: i64,", "    pub total: i64,"),
        ("self.total += n;", "self.total -= -n;"),
    ),
    "Calc.java": (
        JAVA,
        "    public void add",
        "    public void reset() {\n        total = 0;\n    }\n\n",
        "    public int get() {\n        return total;\n    }\n\n",
        ("import java.util.List;", "import java.util.ArrayList;"),
        ("total += n;", "total = n + total;"),
    ),
}


def _add(text: str, where: str, addition: str) -> str:
    at = text.index(where)
    return text[:at] + addition + text[at:]


@pytest.fixture
def box(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Sandbox:
    return sandbox(tmp_path, monkeypatch)


@pytest.mark.parametrize("path", sorted(SCENARIOS))
def test_a_real_conflicting_merge_is_resolved_through_the_ladder(box: Sandbox, path: str) -> None:
    text, where, ours_adds, theirs_adds, ours_edit, theirs_edit = SCENARIOS[path]
    base = box.start({path: text})
    ours = box.branch("ours", {path: _add(text, where, ours_adds).replace(*ours_edit)}, parent=base)
    theirs = box.branch("theirs", {path: _add(text, where, theirs_adds).replace(*theirs_edit)}, parent=base)

    outcome = merge_commits_sync(box.repo, ours, theirs)  # type: ignore[arg-type]

    assert outcome.commit and not outcome.clean and outcome.unresolved == [], outcome.detail
    (resolution,) = outcome.resolutions
    assert resolution.rung == "structured" and resolution.confidence == "low"  # ours' addition first: a choice
    assert resolution.reason.endswith("; both sides added at one place: ours first, then theirs")
    expected = _add(text, where, ours_adds + theirs_adds).replace(*ours_edit).replace(*theirs_edit)
    assert box.show(outcome.commit, path) + "\n" == expected
