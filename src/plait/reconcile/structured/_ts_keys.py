"""What an entity is in each tree-sitter language: its key (kind and name) and, for a container, its members."""

from __future__ import annotations

import re
from dataclasses import dataclass

from tree_sitter import Node

__all__ = ["LANGUAGES", "TsLanguage", "container_body", "entity_key", "unwrap"]


@dataclass(frozen=True)
class TsLanguage:
    """A grammar from PyPI (module and the function giving its language) and the extensions it reads."""

    name: str
    module: str
    function: str
    extensions: tuple[str, ...]


LANGUAGES: tuple[TsLanguage, ...] = (
    TsLanguage("JavaScript", "tree_sitter_javascript", "language", (".js", ".mjs", ".cjs", ".jsx")),
    TsLanguage("TypeScript", "tree_sitter_typescript", "language_typescript", (".ts", ".mts", ".cts")),
    TsLanguage("TSX", "tree_sitter_typescript", "language_tsx", (".tsx",)),
    TsLanguage("Go", "tree_sitter_go", "language", (".go",)),
    TsLanguage("Rust", "tree_sitter_rust", "language", (".rs",)),
    TsLanguage("Java", "tree_sitter_java", "language", (".java",)),
)

ATTACHED = frozenset(
    {"comment", "line_comment", "block_comment", "decorator", "attribute_item", "inner_attribute_item"}
)
"""Nodes that belong to the entity after them (comments, decorators, attributes): never entities of their own."""

_IMPORTS = frozenset({"import_statement", "import_declaration", "import_spec", "use_declaration"})
_DECLARATORS = frozenset({"variable_declarator", "const_spec", "var_spec", "type_spec"})
_GO_GROUPS = {"import_declaration": "import_spec_list", "var_declaration": "var_spec_list"}


def _text(node: Node | None) -> str:
    return node.text.decode("utf-8", "replace") if node is not None and node.text is not None else ""


def unwrap(node: Node) -> Node:
    """The declaration inside an export, a `declare`, or a statement holding a namespace."""
    inner = node.child_by_field_name("declaration") if node.type == "export_statement" else None
    if inner is None and node.type in ("ambient_declaration", "expression_statement") and node.named_child_count == 1:
        only = node.named_children[0]
        if node.type == "ambient_declaration" or only.type == "internal_module":
            inner = only
    return inner if inner is not None else node


def _declared_names(node: Node) -> list[str]:
    names: list[str] = []
    for child in node.named_children:
        if child.type in _DECLARATORS:
            names.append(_text(child.child_by_field_name("name")))
        elif child.type in ("var_spec_list",):
            names.extend(_declared_names(child))
    return names


def _import_name(node: Node) -> str:
    if node.type == "import_statement":
        return _text(node.child_by_field_name("source"))
    if node.type == "import_spec":
        return _text(node.child_by_field_name("path"))
    if node.type == "use_declaration":
        return re.sub(r"\{.*", "{", _text(node.child_by_field_name("argument")), flags=re.S)
    if node.child_by_field_name("name") is None and any(c.type == "import_spec_list" for c in node.children):
        return ""  # a Go import block: its specs are its members
    return " ".join(_text(node).split())


def _signature(node: Node) -> str:
    """A Java method's or constructor's name and parameter types, so that overloads are distinct."""
    params = node.child_by_field_name("parameters")
    types = [_text(p.child_by_field_name("type")) for p in (params.named_children if params else [])]
    return f"{_text(node.child_by_field_name('name'))}({','.join(types)})"


def entity_key(node: Node) -> tuple[str, str]:
    """The kind and name of a top-level or member node; ("stmt", its first line) when it has no name."""
    node = unwrap(node)
    kind = node.type
    if kind in _IMPORTS:
        return "import", _import_name(node)
    if kind in ("package_clause", "package_declaration"):
        return "package", ""
    if kind == "method_declaration" and node.child_by_field_name("receiver") is not None:
        receiver = node.child_by_field_name("receiver")
        types = [_text(p.child_by_field_name("type")).lstrip("*") for p in receiver.named_children] if receiver else []
        return "method", f"{','.join(types)}.{_text(node.child_by_field_name('name'))}"
    if kind in ("method_declaration", "constructor_declaration") and node.child_by_field_name("parameters"):
        return kind, _signature(node)
    if kind == "impl_item":
        trait = node.child_by_field_name("trait")
        target = _text(node.child_by_field_name("type"))
        return kind, f"{_text(trait)} for {target}" if trait is not None else target
    if kind == "method_definition":
        marks = [c.type for c in node.children if c.type in ("get", "set", "static")]
        return kind, " ".join([*marks, _text(node.child_by_field_name("name"))])
    names = [_text(n) for n in node.children_by_field_name("name")]
    if names:
        return kind, ",".join(names)
    declared = _declared_names(node)
    if declared:
        return kind, ",".join(declared)
    return "stmt", " ".join(_text(node).split("\n", 1)[0].split())


def container_body(node: Node) -> Node | None:
    """The node whose children between its braces (or parentheses) are `node`'s members, if it has members."""
    node = unwrap(node)
    if node.type in _GO_GROUPS:
        return next((c for c in node.named_children if c.type == _GO_GROUPS[node.type]), None)
    if node.type in ("const_declaration", "type_declaration") and any(c.type == "(" for c in node.children):
        return node
    if node.type == "type_declaration" and node.named_child_count == 1:
        shape = node.named_children[0].child_by_field_name("type")
        if shape is not None and shape.type == "struct_type":
            return next((c for c in shape.named_children if c.type == "field_declaration_list"), None)
        return shape if shape is not None and shape.type == "interface_type" else None
    body = node.child_by_field_name("body")
    if body is None or (body.type in ("statement_block", "block") and node.type not in ("internal_module", "module")):
        return None  # a function's body is its own text, merged as one
    if body.type in ("enum_body", "enum_variant_list", "enum_member_declaration_list"):
        return None  # comma-separated members: a member added last changes the one before it
    return body
