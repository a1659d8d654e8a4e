"""The code graph of one file, from the tree-sitter parse chunking already made: definitions, call sites
and imports. Pure (no I/O); resolution across files happens at read time (hippo.retrieval.codegraph).

Tree-sitter queries pick the nodes in C, so the Python side only touches definitions, calls and imports,
never every node of the tree (index time stays close to chunking alone; see bench/graph_bench.py).

The result is a small JSON-ready dict, `FileGraph.to_json()`:
  d: [[qualified name, kind, start line, end line, [base class names], (return type)], ...]   (file order;
     the sixth element only for a function whose return annotation names a type: `-> Iterator[App]`: "App";
     a seventh, with the sixth "", for a class attribute holding a short string: `name = 'doctest'`: "doctest")
  c: [[callee as written, line, index into d of the enclosing definition or -1], ...]
  i: [[bound name, module, imported attribute, line], ...]
  a: [[local variable, callee whose result it holds, index into d of the enclosing definition or -1], ...]
     (`svc = AuthService(...)`, `const c = new Command()`: what `svc.x` / `c.x` may be a method of); a
     parameter annotated with a type is held the same way (`def f(app: App)`: [app, App, f's index])
  r: [[name as written, line, index into d of the enclosing definition], ...]
     names used as values inside a definition, not called: an argument, an element of a list, tuple or
     dict, an assigned or returned value (`for f in [strip, group]: f(x)`, `register(handler)`). Only
     names the file defines or imports: a local variable leads nowhere. A table is also used when it is
     indexed, iterated, tested with `in`, or has a method called (`KEYWORDS.get(w)`, `self.RE.match(s)`);
     those uses are kept for the file's own data definitions and for CONSTANT_CASE names.
  g: [[registry as written, [types as written], index into d of the decorated definition], ...] (Python, only
     when any) a handler registered by a decorator, `@X.register(T)`, `@X.multiregister(T, U)`, `@f.register`:
     nothing calls it by name; whoever dispatches through X does.
  p: [[argument name, [values as written], index into d of the decorated test or class], ...] (Python, only
     when any) `@pytest.mark.parametrize("fn", [f, g])` or `("fn", FNS)`: what the test's `fn(...)` calls.
Data definitions (kind "data") are module-level and class-level assignments of a literal value: a dict,
list, string, number, regex (`re.compile(r"...")`, `/x/`, `new RegExp(..)`), a frozen set or map. Real
fixes edit such tables (keyword lists, lexer regexes, class-level patterns), so the walk must reach them.
A function written inside a table keeps its own name (a data definition is no scope for nesting).
Callee text is a dotted chain as written (`self.foo`, `mod.bar`, `baz`); a receiver that is not a plain
chain (`f().x`) is written `.x`, and `super().x` as `super.x`. Import attributes: "" binds the module
itself, "*" is a star import, "default" a JS default import.
"""
from __future__ import annotations

import bisect
import re
import threading
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Any

Node = Any
GRAPH_LANGUAGES = frozenset({"python", "javascript", "typescript", "tsx"})
MAX_CALLS = 20_000  # per file; generated code beyond this adds nothing a reader could use

_CHAIN = re.compile(r"[A-Za-z_$][\w$]*(?:\s*\.\s*[A-Za-z_$][\w$]*)*")
_FUNCTION_VALUES = "[(arrow_function) (function_expression)]"

_PY_QUERY = """
(function_definition name: (identifier) @def.function) @def
(class_definition name: (identifier) @def.class) @def
(call function: (_) @call)
(import_statement) @import
(import_from_statement) @import
(assignment left: (identifier) @assign.var right: (call function: [(identifier) (attribute)] @assign.call))
(as_pattern (call function: [(identifier) (attribute)] @assign.call) alias: (as_pattern_target (identifier) @assign.var))
(argument_list [(identifier) (attribute)] @ref)
(keyword_argument value: [(identifier) (attribute)] @ref)
(list [(identifier) (attribute)] @ref)
(tuple [(identifier) (attribute)] @ref)
(set [(identifier) (attribute)] @ref)
(pair value: [(identifier) (attribute)] @ref)
(assignment right: [(identifier) (attribute)] @ref)
(return_statement [(identifier) (attribute)] @ref)
(module (expression_statement (assignment left: (identifier) @def.data)))
(class_definition body: (block (expression_statement (assignment left: (identifier) @def.data))))
(subscript value: [(identifier) (attribute)] @ref.data)
(for_statement right: [(identifier) (attribute)] @ref.data)
(comparison_operator [(identifier) (attribute)] @ref.data)
(call function: (attribute object: [(identifier) (attribute)] @ref.data))
(decorated_definition (decorator) @decorator)
(typed_parameter type: (type) @param.type)
(typed_default_parameter type: (type) @param.type)
(function_definition return_type: (type) @returns)
"""

_JS_QUERY_COMMON = f"""
(function_declaration name: (identifier) @def.function) @def
(generator_function_declaration name: (identifier) @def.function) @def
(method_definition name: (_) @def.method) @def
(variable_declarator name: (identifier) @def.function value: {_FUNCTION_VALUES}) @def
(assignment_expression left: (member_expression) @def.assign right: {_FUNCTION_VALUES}) @def
(pair key: (property_identifier) @def.function value: {_FUNCTION_VALUES}) @def
(call_expression function: (_) @call)
(new_expression constructor: (_) @call)
(import_statement) @import
(variable_declarator value: (call_expression function: (identifier) @_req)) @require
(variable_declarator value: (member_expression object: (call_expression function: (identifier) @_req))) @require
(call_expression function: (identifier) @_t arguments: (arguments . [(string) (template_string)] @def.test . [(arrow_function) (function_expression)]) (#match? @_t "^(it|test|describe|suite|context|specify)$"))
(call_expression function: (call_expression function: (member_expression object: (identifier) @_te property: (property_identifier) @_each)) arguments: (arguments . [(string) (template_string)] @def.test . [(arrow_function) (function_expression)]) (#match? @_te "^(it|test|describe|suite)$") (#eq? @_each "each"))
(call_expression function: (member_expression object: (identifier) @_tm property: (property_identifier) @_mod) arguments: (arguments . [(string) (template_string)] @def.test . [(arrow_function) (function_expression)]) (#match? @_tm "^(it|test|describe|suite|context)$") (#match? @_mod "^(only|skip|concurrent|todo|failing)$"))
(variable_declarator name: (identifier) @assign.var value: (new_expression constructor: [(identifier) (member_expression)] @assign.call))
(variable_declarator name: (identifier) @assign.var value: (call_expression function: [(identifier) (member_expression)] @assign.call))
(arguments [(identifier) (member_expression)] @ref)
(array [(identifier) (member_expression)] @ref)
(pair value: [(identifier) (member_expression)] @ref)
(shorthand_property_identifier) @ref
(assignment_expression right: [(identifier) (member_expression)] @ref)
(variable_declarator value: [(identifier) (member_expression)] @ref)
(return_statement [(identifier) (member_expression)] @ref)
(program (lexical_declaration (variable_declarator name: (identifier) @def.data)))
(program (variable_declaration (variable_declarator name: (identifier) @def.data)))
(program (export_statement (lexical_declaration (variable_declarator name: (identifier) @def.data))))
(subscript_expression object: [(identifier) (member_expression)] @ref.data)
(for_in_statement right: [(identifier) (member_expression)] @ref.data)
(binary_expression [(identifier) (member_expression)] @ref.data)
(call_expression function: (member_expression object: [(identifier) (member_expression)] @ref.data))
"""
_JS_CLASS = {"javascript": "(class_declaration name: (identifier) @def.class) @def\n(class name: (identifier) @def.class) @def\n"
                           "(class_body (field_definition property: (property_identifier) @def.data))",
             "typescript": "(class_declaration name: (type_identifier) @def.class) @def\n"
                           "(abstract_class_declaration name: (type_identifier) @def.class) @def\n"
                           "(interface_declaration name: (type_identifier) @def.interface) @def\n"
                           "(class_body (public_field_definition name: (property_identifier) @def.data))\n"
                           "(required_parameter pattern: (identifier) type: (type_annotation) @param.type)\n"
                           "(optional_parameter pattern: (identifier) type: (type_annotation) @param.type)\n"
                           "(function_declaration return_type: (type_annotation) @returns)\n"
                           "(method_definition return_type: (type_annotation) @returns)",
             }
_JS_CLASS["tsx"] = _JS_CLASS["typescript"]

# the value of a data definition: a literal, or a call that builds a table or pattern from literals
_DATA_VALUES = frozenset("""dictionary list tuple set string concatenated_string integer float binary_operator
unary_operator parenthesized_expression list_comprehension dictionary_comprehension set_comprehension
object array template_string number regex binary_expression unary_expression as_expression
satisfies_expression""".split())
_DATA_CALLS = re.compile(r"(?:re\.)?compile|frozenset|set|dict|tuple|OrderedDict|(?:collections\.)?defaultdict|"
                         r"Object\.freeze|RegExp|Set|Map|WeakMap|WeakSet")
_CONSTANT = re.compile(r"[A-Z][A-Z0-9_]+")
_LABEL = re.compile(r"""['"]([A-Za-z][\w.:-]{2,39})['"]""")  # a quoted name, not a sentence or an f-string

_local = threading.local()  # compiled queries, per thread like the parsers
_ORDER_FREE = frozenset({"ref", "ref.data", "assign.call"})
# names in a type annotation that say how a value is held, not what it is (`Iterator[App]`: an App)
_TYPE_WRAPPERS = frozenset("""Optional Union List Dict Set FrozenSet Tuple Type Iterator Iterable Generator
AsyncIterator AsyncIterable AsyncGenerator Sequence Mapping MutableMapping MutableSequence Collection Callable
Awaitable Coroutine Any ClassVar Final Annotated Self None list dict set frozenset tuple type str int float bool
bytes object Promise Array ReadonlyArray Record Partial Readonly Required string number boolean void undefined
null any unknown never typing t collections abc""".split())
# a decorator that registers the function it decorates with a dispatcher (`@X.register(T)`, `register_many`,
# `multiregister`): nothing calls the handler by name
_REGISTERS = re.compile(r"(?:multi)?register(?:_many)?")  # captures whose list order the builder does not use


@dataclass
class FileGraph:
    defs: list[list] = field(default_factory=list)
    calls: list[list] = field(default_factory=list)
    imports: list[list] = field(default_factory=list)
    assigns: list[list] = field(default_factory=list)
    refs: list[list] = field(default_factory=list)
    registrations: list[list] = field(default_factory=list)
    params: list[list] = field(default_factory=list)

    def to_json(self) -> dict:
        out = {"d": self.defs, "c": self.calls, "i": self.imports, "a": self.assigns, "r": self.refs}
        if self.registrations:  # rare: most files' JSON stays as it was
            out["g"] = self.registrations
        if self.params:
            out["p"] = self.params
        return out


def _query(lang: str):
    cache: dict[str, Any] = getattr(_local, "queries", None) or {}
    _local.queries = cache
    if lang not in cache:
        try:
            from tree_sitter import Query
            from tree_sitter_language_pack import get_language

            text = _PY_QUERY if lang == "python" else _JS_QUERY_COMMON + _JS_CLASS[lang]
            cache[lang] = Query(get_language(lang), text)  # type: ignore[arg-type]
        except Exception:  # noqa: BLE001 - grammar missing or query rejected: no graph for this language
            cache[lang] = None
    return cache[lang]


def extract(tree, src: bytes, lang: str) -> FileGraph | None:
    """The graph of a parsed file, or None for a language without graph rules."""
    if lang not in GRAPH_LANGUAGES:
        return None
    query = _query(lang)
    if query is None:
        return None
    from tree_sitter import QueryCursor

    caps = QueryCursor(query).captures(tree.root_node)
    # _refs sorts its own nodes, and a variable finds its call by statement: the other lists are put in order here
    return _Builder(src, lang).build({k: v if k in _ORDER_FREE else sorted(v, key=_position) for k, v in caps.items()})


def _type_name(annotation: str) -> str:
    """The type an annotation says a value is (`Optional[App]`, `'App'`, `: Promise<App>`: "App"), or ""."""
    for chain in _CHAIN.findall(annotation):
        chain = "".join(chain.split())
        if chain.split(".")[-1] in _TYPE_WRAPPERS:
            continue
        return "" if chain == "Literal" or len(chain) > 120 else chain
    return ""


def _position(node: Node) -> tuple[int, int]:
    """Document order, outer node first. `captures()` gathers each capture's nodes in a set, so its lists
    come in an order that changes from one process to the next (node hashes are addresses)."""
    return node.start_byte, -node.end_byte


def _text(src: bytes, node: Node) -> str:
    return src[node.start_byte:node.end_byte].decode("utf-8", "replace")


def _within(starts: list[int], spans: list[tuple[int, int]], pos: int) -> int:
    """Index of the innermost definition span holding byte `pos`, or -1 (module level)."""
    i = bisect.bisect_right(starts, pos) - 1
    while i >= 0 and not (spans[i][0] <= pos < spans[i][1]):
        i -= 1
    return i


def _rows(node: Node) -> tuple[int, int]:
    lo, hi = node.start_point[0], node.end_point[0]
    if hi > lo and node.end_point[1] == 0:
        hi -= 1
    return lo + 1, hi + 1


class _Builder:
    def __init__(self, src: bytes, lang: str) -> None:
        self.src, self.lang = src, lang
        self.py = lang == "python"
        self._line_ends: list[int] | None = None

    def _line(self, pos: int) -> int:
        """The 1-based line of byte `pos`, what `node.start_point[0] + 1` says (tree-sitter counts rows by
        newlines) without the Point object, which costs more than the rest of a call site."""
        ends = self._line_ends
        if ends is None:  # the offset just past each newline
            ends = self._line_ends = list(accumulate(map((1).__add__, map(len, self.src.split(b"\n")))))
        return bisect.bisect_right(ends, pos) + 1

    def build(self, caps: dict[str, list[Node]]) -> FileGraph:
        g = FileGraph()
        defs = self._defs(caps)
        spans = [(n.start_byte, n.end_byte) for n, *_ in defs]
        quals: list[str] = []
        parents: list[int] = []
        stack: list[int] = []
        for i, (node, name, kind, bases) in enumerate(defs):
            while stack and spans[stack[-1]][1] <= node.start_byte:
                stack.pop()
            parent = stack[-1] if stack else -1
            if parent >= 0 and kind == "function" and g.defs[parent][1] in ("class", "interface"):
                kind = "method"
            nest = parent >= 0 and "." not in name and kind != "test" and g.defs[parent][1] not in ("test", "data")
            qual = f"{quals[parent]}.{name}" if nest else name
            quals.append(qual)
            parents.append(parent)
            lo, hi = _rows(node)
            g.defs.append([qual, kind, lo, hi, bases])
            if kind == "data" and parent >= 0 and g.defs[parent][1] == "class" and (label := self._label(node)):
                g.defs[-1].extend(["", label])
            stack.append(i)
        if caps.get("returns"):
            self._returns(caps["returns"], spans, g)
        g.calls = self._calls(caps.get("call", []), spans)
        g.assigns = self._typed_params(caps.get("param.type", []), spans) + \
            self._assigns(caps.get("assign.var", []), caps.get("assign.call", []), spans)
        g.imports = self._imports(caps.get("import", []), caps.get("require", []))
        known = {q.split(".", 1)[0] for q, *_ in g.defs} | {q.rsplit(".", 1)[-1] for q, *_ in g.defs} | \
            {b.split(".", 1)[0] for b, *_ in g.imports} | {"self", "this", "cls"}
        data = {q.rsplit(".", 1)[-1] for q, k, *_ in g.defs if k == "data"}
        src, constant = self.src, _CONSTANT.fullmatch
        table_uses = [n for n in caps.get("ref.data", [])
                      if (last := src[n.start_byte:n.end_byte].decode("utf-8", "replace").rsplit(".", 1)[-1].strip())
                      in data or constant(last)]
        g.refs = self._refs(caps.get("ref", []) + table_uses, spans, known)
        if caps.get("decorator"):
            index = {span: i for i, span in enumerate(spans)}
            for deco in caps["decorator"]:
                self._decorator(deco, index, g)
        return g

    # --- decorators (Python) ----------------------------------------------------------------------------
    def _decorator(self, deco: Node, index: dict[tuple[int, int], int], g: FileGraph) -> None:
        """A registration (`@X.register(T)`) or a pytest parametrize of the definition `deco` decorates."""
        target = deco.parent.child_by_field_name("definition") if deco.parent is not None else None
        i = index.get((target.start_byte, target.end_byte), -1) if target is not None else -1
        expr = deco.named_children[0] if deco.named_children else None
        if i < 0 or expr is None:
            return
        fn, args = (expr.child_by_field_name("function"), expr.child_by_field_name("arguments")) \
            if expr.type == "call" else (expr, None)
        callee = self._callee(fn) if fn is not None else ""
        registry, _, tail = callee.rpartition(".")
        if registry and _REGISTERS.fullmatch(tail) and _CHAIN.fullmatch(registry):
            types = [_text(self.src, a) for a in (args.named_children if args is not None else ())
                     if a.type in ("identifier", "attribute")]
            g.registrations.append([registry, types[:8], i])
        elif tail == "parametrize" and args is not None:
            g.params.extend([name, values, i] for name, values in self._parametrized(args))

    def _parametrized(self, args: Node) -> list[tuple[str, list[str]]]:
        """(argument name, values as written) of `parametrize("a, b", [(f, 1), (g, 2)])` or `("fn", FNS)`:
        a value is a name or dotted chain; a list or tuple gives each element (the k-th of each row for
        the k-th name); a name for the whole list is kept as it is (the walk reads the table it names)."""
        pos = [a for a in args.named_children if a.type != "keyword_argument" and a.type != "comment"]
        if len(pos) < 2 or pos[0].type not in ("string", "list", "tuple"):
            return []
        names = [n.strip() for n in re.findall(r"[A-Za-z_]\w*", _text(self.src, pos[0]))
                 if n not in ("r", "b", "u", "f")] if pos[0].type != "string" else \
            [n.strip() for n in _text(self.src, pos[0]).strip("'\"").split(",") if n.strip()]
        values = pos[1]
        out: list[tuple[str, list[str]]] = []
        for k, name in enumerate(names[:6]):
            if values.type in ("identifier", "attribute"):
                found = [_text(self.src, values)]
            elif values.type in ("list", "tuple"):
                found = []
                for row in values.named_children[:50]:
                    item = row
                    if row.type in ("tuple", "list") and len(names) > 1:
                        kids = row.named_children
                        item = kids[k] if k < len(kids) else None
                    elif len(names) > 1:
                        item = None  # `pytest.param(...)` rows and the like: not read
                    if item is not None and item.type in ("identifier", "attribute"):
                        found.append("".join(_text(self.src, item).split()))
            else:
                found = []
            found = [v for v in found if _CHAIN.fullmatch(v)]
            if found and name.isidentifier():
                out.append((name, found))
        return out

    # --- definitions ----------------------------------------------------------------------------
    def _defs(self, caps: dict[str, list[Node]]) -> list[tuple[Node, str, str, list[str]]]:
        out: dict[tuple, tuple[Node, str, str, list[str]]] = {}
        for key in ("def.function", "def.class", "def.method", "def.interface", "def.assign", "def.test",
                    "def.data"):
            for name_node in caps.get(key, []):
                node = name_node.parent
                if node is None:
                    continue
                if key == "def.test":  # `it("title", () => {...})`: the title names the test
                    node = node.parent
                    name = " ".join(_text(self.src, name_node).strip("'\"`").split())[:200]
                    if node is None or not name:
                        continue
                    kind = "test"
                elif key == "def.data":
                    name = _text(self.src, name_node)
                    if not self._is_data(node) or (name.startswith("__") and name.endswith("__")):
                        continue
                    kind = "data"
                elif key == "def.assign":  # `X.prototype.y = function` / `exports.y = ...`
                    name = self._assigned_name(name_node)
                    if not name:
                        continue
                    kind = "function"
                else:
                    name = _text(self.src, name_node)
                    kind = key.split(".", 1)[1]
                bases = self._bases(node) if kind == "class" else []
                if name:
                    out.setdefault((node.start_byte, node.end_byte, node.type), (node, name, kind, bases))
        # outer before inner at the same start (decorated or wrapped definitions)
        return sorted(out.values(), key=lambda t: (t[0].start_byte, -t[0].end_byte))

    def _label(self, node: Node) -> str:
        """A class attribute's short string value (`name = 'doctest'`): the name a registry, a command line
        or a config file picks the class by; "" for anything else."""
        value = node.child_by_field_name("right" if self.py else "value")
        if value is None or value.type != "string":
            return ""
        text = _text(self.src, value)
        m = _LABEL.fullmatch(text)
        return m.group(1) if m else ""

    def _is_data(self, node: Node) -> bool:
        """Whether an assignment's (declarator's, field's) value is a literal table, pattern or constant."""
        value = node.child_by_field_name("right" if self.py else "value")
        if value is None:
            return False
        if value.type in _DATA_VALUES:
            return True
        if value.type in ("call", "call_expression", "new_expression"):
            fn = value.child_by_field_name("function" if value.type != "new_expression" else "constructor")
            return fn is not None and bool(_DATA_CALLS.fullmatch(_text(self.src, fn)))
        return False

    def _assigned_name(self, left: Node) -> str:
        chain = _text(self.src, left)
        if not _CHAIN.fullmatch(chain):
            return ""
        parts = [p.strip() for p in chain.split(".")]
        if "prototype" in parts:  # Cmd.prototype.parse = function
            i = parts.index("prototype")
            return ".".join([*parts[:i], *parts[i + 1:]][-2:])
        if parts[0] in ("exports", "module") or parts[0] == "this":
            return parts[-1]
        return ".".join(parts[-2:])

    def _bases(self, node: Node) -> list[str]:
        if self.py:
            sup = node.child_by_field_name("superclasses")
            if sup is None:
                return []
            return [_text(self.src, c) for c in sup.named_children if c.type in ("identifier", "attribute")][:6]
        out: list[str] = []
        for child in node.named_children:
            if child.type == "class_heritage":
                for n in child.named_children:
                    target = n.child_by_field_name("value") if n.type == "extends_clause" else n
                    if target is not None and target.type in ("identifier", "member_expression"):
                        out.append(_text(self.src, target))
                    elif n.type == "extends_clause":
                        out.extend(_text(self.src, c) for c in n.named_children
                                   if c.type in ("identifier", "member_expression", "type_identifier"))
        return [b for b in out if _CHAIN.fullmatch(b)][:6]

    # --- calls ------------------------------------------------------------------------------------
    def _callee(self, fn: Node) -> str:
        t = fn.type
        if t in ("identifier", "this"):
            return _text(self.src, fn)
        if t in ("attribute", "member_expression"):
            text = _text(self.src, fn)
            if _CHAIN.fullmatch(text):
                return "".join(text.split())
            obj = fn.child_by_field_name("object")
            prop = fn.child_by_field_name("attribute" if self.py else "property")
            if prop is None:
                return ""
            name = _text(self.src, prop)
            if obj is not None and obj.type in ("call", "call_expression"):
                inner = obj.child_by_field_name("function")
                if inner is not None and _text(self.src, inner) == "super":
                    return f"super.{name}"
            return "." + name
        if t == "super":
            return "super"
        return ""

    def _calls(self, nodes: list[Node], spans: list[tuple[int, int]]) -> list[list]:
        out: list[list] = []
        starts = [s for s, _ in spans]
        line, callee_of = self._line, self._callee
        for fn in nodes[:MAX_CALLS]:
            callee = callee_of(fn)
            if not callee or len(callee) > 200 or callee == "require":
                continue
            pos = fn.start_byte
            out.append([callee, line(pos), _within(starts, spans, pos)])
        return out

    def _returns(self, nodes: list[Node], spans: list[tuple[int, int]], g: FileGraph) -> None:
        """The type a function's return annotation names, as a sixth element of its definition row."""
        index = {span: i for i, span in enumerate(spans)}
        for node in nodes:
            fn = node.parent
            i = index.get((fn.start_byte, fn.end_byte), -1) if fn is not None else -1
            name = _type_name(_text(self.src, node))
            if i >= 0 and name and len(g.defs[i]) == 5:
                g.defs[i].append(name)

    def _typed_params(self, nodes: list[Node], spans: list[tuple[int, int]]) -> list[list]:
        """[parameter, the type its annotation names, its function's index] (`def f(app: App)`): what
        `app.x` may be a member of, as an assignment from `App(...)` would say."""
        starts = [s for s, _ in spans]
        out: list[list] = []
        for node in nodes:
            param = node.parent
            if param is None:
                continue
            name = param.child_by_field_name("name") or param.child_by_field_name("pattern") or \
                next((c for c in param.named_children if c.type == "identifier"), None)
            kind = _type_name(_text(self.src, node))
            if name is not None and name.type == "identifier" and kind:
                out.append([_text(self.src, name), kind, _within(starts, spans, node.start_byte)])
        return out[:MAX_CALLS]

    def _assigns(self, names: list[Node], calls: list[Node], spans: list[tuple[int, int]]) -> list[list]:
        starts = [s for s, _ in spans]
        out: list[list] = []
        seen: set[tuple] = set()
        # A variable and its callee are paired through the statement both belong to (`x = f()`, `with f()
        # as x`, `const x = new F()`); the capture lists alone say nothing about which goes with which.
        by_stmt: dict[tuple[int, int], Node] = {}
        for fn in calls:
            stmt = fn.parent.parent if fn.parent is not None else None
            if stmt is not None:
                by_stmt[(stmt.start_byte, stmt.end_byte)] = fn
        for var in names:
            stmt = var.parent
            if stmt is not None and stmt.type == "as_pattern_target":
                stmt = stmt.parent
            fn = by_stmt.get((stmt.start_byte, stmt.end_byte)) if stmt is not None else None
            if fn is None:
                continue
            callee = self._callee(fn)
            if not callee or callee == "require" or not _CHAIN.fullmatch(callee):
                continue
            row = [_text(self.src, var), callee, _within(starts, spans, var.start_byte)]
            if tuple(row) not in seen:
                seen.add(tuple(row))
                out.append(row)
        return out[:MAX_CALLS]

    def _refs(self, nodes: list[Node], spans: list[tuple[int, int]], known: set[str]) -> list[list]:
        """Names used as values inside a definition whose head the file defines or imports."""
        starts = [s for s, _ in spans]
        out: list[list] = []
        seen: set[tuple[str, int]] = set()
        src = self.src
        for node in sorted(nodes, key=_position)[:MAX_CALLS]:
            pos = node.start_byte
            name = "".join(src[pos:node.end_byte].decode("utf-8", "replace").split())
            if name.partition(".")[0] not in known or len(name) > 200 or not _CHAIN.fullmatch(name):
                continue  # the cheap test first: most values are local variables
            parent = node.parent
            if parent is not None and parent.type == "argument_list" and parent.parent is not None and \
                    parent.parent.type == "class_definition":
                continue  # `class A(Base)`: a base class, not a value
            within = _within(starts, spans, pos)
            if within < 0 or (name, within) in seen:
                continue  # module level: nothing walks from there
            seen.add((name, within))
            out.append([name, self._line(pos), within])
        return out

    # --- imports ------------------------------------------------------------------------------------
    def _imports(self, nodes: list[Node], requires: list[Node]) -> list[list]:
        out: list[list] = []
        for node in nodes:
            line = node.start_point[0] + 1
            if self.py:
                out.extend(self._py_import(node, line))
            else:
                out.extend(self._js_import(node, line))
        for node in requires:
            out.extend(self._require(node))
        return out

    def _py_import(self, node: Node, line: int) -> list[list]:
        out: list[list] = []
        if node.type == "import_statement":
            for child in node.children_by_field_name("name"):
                if child.type == "aliased_import":
                    mod = child.child_by_field_name("name")
                    alias = child.child_by_field_name("alias")
                    if mod is not None and alias is not None:
                        out.append([_text(self.src, alias), _text(self.src, mod), "", line])
                elif child.type == "dotted_name":
                    mod = _text(self.src, child)
                    out.append([mod.split(".", 1)[0], mod.split(".", 1)[0], "", line])
                    if "." in mod:  # `import a.b` also makes `a.b` reachable
                        out.append([mod, mod, "", line])
            return out
        mod_node = node.child_by_field_name("module_name")
        module = "".join(_text(self.src, mod_node).split()) if mod_node is not None else ""
        if any(c.type == "wildcard_import" for c in node.children):
            return [["*", module, "*", line]]
        for child in node.children_by_field_name("name"):
            if child.type == "aliased_import":
                name = child.child_by_field_name("name")
                alias = child.child_by_field_name("alias")
                if name is not None and alias is not None:
                    out.append([_text(self.src, alias), module, _text(self.src, name), line])
            elif child.type == "dotted_name":
                name = _text(self.src, child)
                out.append([name, module, name, line])
        return out

    def _js_import(self, node: Node, line: int) -> list[list]:
        source = node.child_by_field_name("source")
        if source is None:
            return []
        module = _text(self.src, source).strip("'\"`")
        out: list[list] = []
        for clause in node.named_children:
            if clause.type != "import_clause":
                continue
            for part in clause.named_children:
                if part.type == "identifier":
                    out.append([_text(self.src, part), module, "default", line])
                elif part.type == "namespace_import":
                    ident = next((c for c in part.named_children if c.type == "identifier"), None)
                    if ident is not None:
                        out.append([_text(self.src, ident), module, "", line])
                elif part.type == "named_imports":
                    for spec in part.named_children:
                        if spec.type != "import_specifier":
                            continue
                        name = spec.child_by_field_name("name")
                        alias = spec.child_by_field_name("alias") or name
                        if name is not None and alias is not None:
                            out.append([_text(self.src, alias), module, _text(self.src, name), line])
        return out

    def _require(self, decl: Node) -> list[list]:
        value = decl.child_by_field_name("value")
        target = decl.child_by_field_name("name")
        if value is None or target is None:
            return []
        attr = ""
        call = value
        if value.type == "member_expression":
            prop = value.child_by_field_name("property")
            attr = _text(self.src, prop) if prop is not None else ""
            call = value.child_by_field_name("object")
        fn = call.child_by_field_name("function") if call is not None else None
        args = call.child_by_field_name("arguments") if call is not None else None
        if fn is None or _text(self.src, fn) != "require" or args is None:
            return []
        lit = next((c for c in args.named_children if c.type == "string"), None)
        if lit is None:
            return []
        module = _text(self.src, lit).strip("'\"`")
        line = decl.start_point[0] + 1
        if target.type == "identifier":
            return [[_text(self.src, target), module, attr, line]]
        out: list[list] = []
        if target.type == "object_pattern" and not attr:
            for p in target.named_children:
                if p.type == "shorthand_property_identifier_pattern":
                    name = _text(self.src, p)
                    out.append([name, module, name, line])
                elif p.type == "pair_pattern":
                    k, v = p.child_by_field_name("key"), p.child_by_field_name("value")
                    if k is not None and v is not None and v.type == "identifier":
                        out.append([_text(self.src, v), module, _text(self.src, k), line])
        return out
