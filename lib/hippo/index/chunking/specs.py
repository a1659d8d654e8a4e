"""Per-language knowledge: which syntax nodes are units (functions, classes ...) and their names.

This is data plus small lookups over tree-sitter nodes; the layout algorithm in `code.py` is
language-neutral. Grammars not listed here get a name-pattern guess (`_GENERIC`).
"""
from __future__ import annotations

import re
from typing import Any, NamedTuple

Node = Any  # tree_sitter.Node; typed loosely so this module never imports tree-sitter

# Kinds whose body holds members worth their own chunks (methods, nested types ...).
CONTAINER_KINDS = frozenset({
    "class", "struct", "interface", "trait", "impl", "namespace", "enum", "record", "protocol",
    "extension", "object",
})

_JS = {
    "function_declaration": "function", "generator_function_declaration": "function",
    "class_declaration": "class", "abstract_class_declaration": "class",
    "method_definition": "method", "abstract_method_signature": "method",
    "interface_declaration": "interface", "type_alias_declaration": "type",
    "enum_declaration": "enum", "internal_module": "namespace", "module": "namespace",
}
_C = {"function_definition": "function", "struct_specifier": "struct",
      "union_specifier": "struct", "enum_specifier": "enum"}

UNITS: dict[str, dict[str, str]] = {
    "python": {"function_definition": "function", "class_definition": "class"},
    "javascript": _JS, "typescript": _JS, "tsx": _JS,
    "go": {"function_declaration": "function", "method_declaration": "method",
           "type_declaration": "type"},
    "rust": {"function_item": "function", "struct_item": "struct", "enum_item": "enum",
             "union_item": "struct", "trait_item": "trait", "impl_item": "impl",
             "mod_item": "namespace", "macro_definition": "macro",
             "function_signature_item": "function"},
    "java": {"class_declaration": "class", "interface_declaration": "interface",
             "enum_declaration": "enum", "record_declaration": "record",
             "annotation_type_declaration": "interface", "method_declaration": "method",
             "constructor_declaration": "method", "compact_constructor_declaration": "method"},
    "c": _C,
    "cpp": {**_C, "class_specifier": "class", "namespace_definition": "namespace",
            "linkage_specification": "namespace"},
    "ruby": {"method": "function", "singleton_method": "function", "class": "class",
             "module": "namespace", "singleton_class": "class"},
    "php": {"function_definition": "function", "class_declaration": "class",
            "interface_declaration": "interface", "trait_declaration": "trait",
            "enum_declaration": "enum", "method_declaration": "method",
            "namespace_definition": "namespace"},
    "csharp": {"namespace_declaration": "namespace", "class_declaration": "class",
               "struct_declaration": "struct", "interface_declaration": "interface",
               "enum_declaration": "enum", "record_declaration": "record",
               "method_declaration": "method", "constructor_declaration": "method",
               "destructor_declaration": "method", "operator_declaration": "method",
               "property_declaration": "property", "local_function_statement": "function"},
    "kotlin": {"class_declaration": "class", "object_declaration": "object",
               "companion_object": "object", "function_declaration": "function",
               "secondary_constructor": "method"},
    "swift": {"class_declaration": "class", "protocol_declaration": "protocol",
              "function_declaration": "function", "init_declaration": "method",
              "deinit_declaration": "method", "subscript_declaration": "method",
              "protocol_function_declaration": "function"},
    "bash": {"function_definition": "function"},
}

# Nodes that wrap a unit (decorators, `export`, templates, `const f = () => ...`, typedefs).
WRAPPERS: dict[str, frozenset[str]] = {
    "python": frozenset({"decorated_definition"}),
    "javascript": frozenset({"export_statement", "lexical_declaration", "variable_declaration",
                             "field_definition"}),
    "typescript": frozenset({"export_statement", "lexical_declaration", "variable_declaration",
                             "public_field_definition", "expression_statement",
                             "ambient_declaration"}),
    "c": frozenset({"declaration", "type_definition"}),
    "cpp": frozenset({"declaration", "type_definition", "template_declaration"}),
}
WRAPPERS["tsx"] = WRAPPERS["typescript"]

# Units that only count when they have a body (forward declarations stay code).
_NEED_BODY = frozenset({"struct_specifier", "union_specifier", "enum_specifier",
                        "class_specifier", "mod_item", "namespace_definition"})
_FUNCTION_VALUES = frozenset({"arrow_function", "function_expression", "function",
                              "generator_function"})
_IDENTS = frozenset({
    "identifier", "field_identifier", "qualified_identifier", "destructor_name", "operator_name",
    "type_identifier", "simple_identifier", "constant", "name", "word", "property_identifier",
    "namespace_identifier", "scoped_identifier", "scoped_type_identifier", "user_type",
    "template_type",
})
_BODY_TYPES = frozenset({"declaration_list", "field_declaration_list", "class_body", "block",
                         "body_statement", "statement_block", "interface_body", "enum_body",
                         "protocol_body", "object_type", "enum_class_body"})
_GENERIC = re.compile(
    r"^(?:(function|method|class|module|struct|interface|trait|impl|object|enum)"
    r"_(?:definition|declaration|item|statement))$")
_SWIFT_KINDS = {"struct": "struct", "enum": "enum", "extension": "extension", "actor": "class",
                "class": "class"}


class UnitInfo(NamedTuple):
    kind: str
    name: str
    node: Node  # the definition itself (inside any wrapper): its body is split further


def node_text(node: Node, src: bytes, limit: int = 120) -> str:
    raw = src[node.start_byte:node.end_byte].decode("utf-8", "replace")
    return " ".join(raw.split())[:limit]


def name_of(node: Node, src: bytes) -> str:
    """Best-effort identifier of a definition: `name` field, C declarator chain, first ident."""
    named = node.child_by_field_name("name")
    if named is not None:
        return node_text(named, src)
    decl = node.child_by_field_name("declarator")
    for _ in range(8):  # pointer_declarator -> function_declarator -> identifier
        if decl is None:
            break
        if decl.type in _IDENTS:
            return node_text(decl, src)
        decl = (decl.child_by_field_name("declarator") or decl.child_by_field_name("name")
                or next((c for c in decl.named_children  # reference_declarator: no field
                         if c.type in _IDENTS or c.type.endswith("declarator")), None))
    for child in node.named_children:
        if child.type in _IDENTS:
            return node_text(child, src)
    return ""


def find_body(node: Node) -> Node | None:
    """The child holding a container's members (class body, impl block, namespace block)."""
    body = node.child_by_field_name("body")
    if body is not None:
        return body
    for child in node.named_children:
        if child.type in _BODY_TYPES or child.type.endswith("_body"):
            return child
    return None


def _first(node: Node, types: frozenset[str], depth: int = 4) -> Node | None:
    for child in node.named_children:
        if child.type in types:
            return child
        if depth > 0:
            found = _first(child, types, depth - 1)
            if found is not None:
                return found
    return None


def resolve(node: Node, lang: str, src: bytes) -> UnitInfo | None:
    """UnitInfo if `node` is (or wraps) a function/class-like definition, else None."""
    table = UNITS.get(lang)
    t = node.type
    kind = table.get(t) if table is not None else _generic_kind(t)
    if kind is not None:
        return _direct(node, t, kind, lang, src)
    if t in WRAPPERS.get(lang, ()):
        return _wrapped(node, t, lang, src)
    return None


def _generic_kind(t: str) -> str | None:
    m = _GENERIC.match(t)
    if m is None:
        return None
    return {"module": "namespace"}.get(m.group(1), m.group(1))


def _direct(node: Node, t: str, kind: str, lang: str, src: bytes) -> UnitInfo | None:
    if t in _NEED_BODY and node.child_by_field_name("body") is None:
        return None
    if t == "internal_module" and node.child_by_field_name("body") is None:
        return None
    if lang == "php" and t == "namespace_definition" and node.child_by_field_name("body") is None:
        return None
    if t == "type_declaration":  # Go: `type X struct {...}`
        spec = _first(node, frozenset({"type_spec", "type_alias"}), 0)
        if spec is None:
            return None
        inner = spec.child_by_field_name("type")
        inner_t = inner.type if inner is not None else ""
        kind = {"struct_type": "struct", "interface_type": "interface"}.get(inner_t, "type")
        return UnitInfo(kind, name_of(spec, src), node)
    if t == "impl_item":  # Rust: name the block after the type it implements
        typ = node.child_by_field_name("type")
        name = node_text(typ, src).split("<", 1)[0] if typ is not None else ""
        return UnitInfo(kind, name, node)  # `impl<'a> Lexer<'a>` scopes methods as Lexer.*
    if t == "method_declaration" and lang == "go":
        recv = node.child_by_field_name("receiver")
        rtype = _first(recv, frozenset({"type_identifier"})) if recv is not None else None
        name = name_of(node, src)
        return UnitInfo(kind, f"{node_text(rtype, src)}.{name}" if rtype is not None else name, node)
    if t == "linkage_specification":
        if node.child_by_field_name("body") is None:
            return None
        value = node.child_by_field_name("value")
        return UnitInfo(kind, f"extern {node_text(value, src)}" if value is not None else "extern",
                        node)
    if lang == "swift" and t == "class_declaration":
        dk = node.child_by_field_name("declaration_kind")
        kind = _SWIFT_KINDS.get(node_text(dk, src) if dk is not None else "", "class")
    name = name_of(node, src)
    if not name and t == "companion_object":
        name = "Companion"
    return UnitInfo(kind, name, node)


def _wrapped(node: Node, t: str, lang: str, src: bytes) -> UnitInfo | None:
    if t in ("lexical_declaration", "variable_declaration"):
        decls = [c for c in node.named_children if c.type == "variable_declarator"]
        if len(decls) != 1:
            return None
        value = decls[0].child_by_field_name("value")
        if value is None:
            return None
        if value.type in _FUNCTION_VALUES:
            return UnitInfo("function", name_of(decls[0], src), value)
        if value.type == "class":
            return UnitInfo("class", name_of(decls[0], src), value)
        return None
    if t in ("field_definition", "public_field_definition"):
        value = node.child_by_field_name("value")
        if value is None or value.type not in _FUNCTION_VALUES:
            return None
        key = node.child_by_field_name("name") or node.child_by_field_name("property")
        return UnitInfo("method", node_text(key, src) if key is not None else "", value)
    if t in ("declaration", "type_definition"):  # C/C++ `typedef struct {...} name;`
        spec = node.child_by_field_name("type")
        if spec is None or spec.child_by_field_name("body") is None:
            return None
        info = resolve(spec, lang, src)
        if info is None:
            return None
        if not info.name:
            decl = node.child_by_field_name("declarator")
            return UnitInfo(info.kind, node_text(decl, src) if decl is not None else "", info.node)
        return info
    if t == "export_statement":
        value = node.child_by_field_name("value")
        if value is not None and value.type in _FUNCTION_VALUES | {"class"}:
            kind = "class" if value.type == "class" else "function"
            return UnitInfo(kind, name_of(value, src) or "default", value)
    for child in node.named_children:
        info = resolve(child, lang, src)
        if info is not None:
            return info
    return None
