"""Suspects for a failing test whose traceback does not show the bug: walk the code graph from the failing
tests, and from what runs before their bodies (setUp, fixtures, describe blocks), into the code under test
(up to MAX_DEPTH calls), then rank what it reaches by named features (policy.SUSPECT_WEIGHTS): call
distance, how the call was resolved, overlap of its name and body with the failure's words (assertion
line, expected/actual values, message) and with the test's name, the traceback's frames, and size.

The best become evidence with code (policy.select decides with everything else); the next ones are
pointers (`<more_candidates>`), each with a short why ("called by Cart.total, 2 calls down").
"""
from __future__ import annotations

import functools
import re
import weakref
from dataclasses import dataclass, field

from hippo.core.pathkind import is_test, is_type_declaration
from hippo.push.diagnosis import policy, runners
from hippo.retrieval.codegraph import EXACT, NAME, CodeGraph, Def

MAX_DEPTH = 5
# Tables and patterns sit where the code is set up (a lexer's keyword list is read by an initializer that
# runs the first time anything parses): the walk goes on this deep looking for data definitions only.
DATA_DEPTH = 8
MAX_VISITED = 1000  # definitions walked through per failure, suspects or not
MAX_REACHED = 400  # definitions visited per failure: the walk stays a few milliseconds
MAX_FANOUT_BY_NAME = 3  # a call resolved by bare name to more definitions than this is not followed
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_STOP = frozenset("self this cls assert assertion expect true false none null undefined return test tests should "
                  "equal equals error value result def function const let var new await async where object "
                  "bound method".split())
_CONSTRUCTORS = ("__init__", "constructor", "__post_init__", "__new__")
REF = "ref"  # how: used as a value by the definition before it (a callback, a registry entry), not called
MEMBER = "member"  # how: a method of a class the definition before it builds or hands on
HANDLER = "handler"  # how: registered (`@X.register(T)`) with the dispatcher the definition before it is or calls
NAMED_LIKE = "named like"  # how: not reached at all; its name shares words with the failing test's name
PICKED = "picked"  # how: a method of a class the test picks by a string (`'doctest'`: `name = 'doctest'`)
_EDGE_ORDER = {REF: 1, HANDLER: 1, MEMBER: 2}  # calls (EXACT, NAME) first
WHY_PREFIXES = ("called by ", "used by ", "a method of ", "a handler of ", "named like ", "picked by ")  # how a suspect's why starts (bench/realfail/fit.py)
# `_print_Pow`, `visit_Call`, `_eval_Integral`: a method a class dispatches to by `prefix + type(x).__name__`
_DISPATCHED = re.compile(r"[A-Za-z_]\w*?_([A-Z]\w*)")
_IDENT = re.compile(r"[A-Za-z_]\w*")


@dataclass
class Suspect:
    d: Def
    distance: int
    via: str  # the definition that calls it (the test for distance 1)
    test_path: str  # the failing test's file it was reached from (its co-change partners)
    how: str  # EXACT or NAME for the call that reached it, REF or MEMBER for the other edges
    score: float = 0.0
    features: dict[str, float] = field(default_factory=dict)
    types: tuple[str, ...] = ()  # a handler's registration types (`@X.register(Pow)`: Pow)

    def why(self) -> str:
        """How the failing test reaches it, in a few words: each pointer's line costs ~125 of the answer's
        2,000 characters, so it names the definition before it, not the test (a jest title is a sentence)."""
        if self.how == NAMED_LIKE:
            return "named like the failing test"
        if self.how == PICKED:
            return f"picked by {self.via}"
        steps = "1 call down" if self.distance == 1 else f"{self.distance} calls down"
        verb = {REF: "used by ", MEMBER: "a method of ", HANDLER: "a handler of "}.get(self.how, "called by ")
        return f"{verb}{'a failing test' if self.distance == 1 else self.via}, {steps}"


@functools.lru_cache(maxsize=4096)
def words(text: str) -> frozenset[str]:
    """Lower-case word parts of identifiers and prose, their endings cut (`parseArgs` -> parse, arg;
    `grouping` and `groups` -> group): a test named for "implied options" speaks of `implies(option)`.
    Cached: a warm server ranks the same definitions' bodies failure after failure."""
    out: set[str] = set()
    for w in set(_WORD.findall(text)):
        out.update(_identifier_words(w))
    return frozenset(out)


@functools.lru_cache(maxsize=65536)
def _identifier_words(identifier: str) -> tuple[str, ...]:
    """words() of one identifier: a body repeats its names, and bodies share most of theirs."""
    return tuple(_stem(part) for part in _CAMEL.sub("_", identifier).lower().split("_")
                 if len(part) >= 3 and part not in _STOP)


_ENDINGS = ("ations", "ation", "ings", "ing", "es", "ed", "s")  # implies, implied -> impli


def _stem(word: str) -> str:
    """`word` without one common English ending, when at least 3 letters are left (crude on purpose: both
    sides of every comparison are cut the same way)."""
    for end in _ENDINGS:
        if word.endswith(end) and len(word) - len(end) >= 3:
            return word[:-len(end)]
    return word


def test_defs(graph: CodeGraph, tests: list[runners.FailingTest], frames: list[tuple[str, int, str]],
              resolve_path) -> list[Def]:
    """The failing tests' definitions: by the runner's path and name, else the test frames' enclosing
    definitions, else a test-file definition with that name."""
    out: list[Def] = []
    for t in tests:
        path = resolve_path(t.path) if t.path else None
        name = t.name.strip()
        found = None
        if path and path in graph.files:
            defs = graph.files[path].defs
            found = next((d for d in defs if d.qual == name or d.qual.endswith("." + name)), None) or \
                next((d for d in defs if d.kind == "test" and _instance_of(d.qual, name)), None)
        if found is None and name:
            found = next((d for d in graph.find(name) if is_test(d.path) or d.kind == "test"), None)
        if found is not None and found not in out:
            out.append(found)
    for path, line, _func in frames:
        if is_test(path):
            d = graph.def_at(path, line)
            while d is not None and d.kind == "class":
                d = None
            if d is not None and d not in out:
                out.append(d)
    return out[:4]


# What a test framework runs before the test body: unittest's and pytest's per-class hooks
_SETUP_METHODS = ("setUp", "asyncSetUp", "setUpClass", "setup_method", "setup_class", "setup")
_PY_PARAMS = re.compile(r"def\s+\w+\s*\(([^)]*)\)", re.S)


def setup_defs(graph: CodeGraph, tests: list[Def], header_of) -> list[Def]:
    """What runs before each failing test's body and builds what it works on: its class's setUp-style
    methods, the pytest fixtures its parameters name (the test's file, then conftest.py files up to the
    root), and for jest/mocha the describe blocks around it (their beforeEach calls belong to them).
    `header_of(d)` gives a definition's first lines."""
    out: list[Def] = []
    for t in tests:
        f = graph.files.get(t.path)
        if f is None:
            continue
        if t.path.endswith(".py"):
            owner = f.by_qual.get(t.qual.rsplit(".", 1)[0]) if "." in t.qual else None
            if owner is not None and owner.kind == "class":
                out.extend(m for n in _SETUP_METHODS if (m := graph.member(owner, n)) is not None)
            out.extend(_fixtures(graph, t, header_of(t)))
        else:
            out.extend(d for d in f.defs if d.kind == "test" and d != t and d.start <= t.start and t.end <= d.end)
    return [d for i, d in enumerate(out) if d not in tests and d not in out[:i]]


def _fixtures(graph: CodeGraph, test: Def, header: str) -> list[Def]:
    m = _PY_PARAMS.search(header)
    if not m:
        return []
    names = [p.split(":")[0].split("=")[0].strip().lstrip("*") for p in m.group(1).split(",")]
    names = [n for n in names if n and n not in ("self", "cls")]
    parts = test.path.split("/")
    places = [test.path] + ["/".join(parts[:k] + ["conftest.py"]) for k in range(len(parts) - 1, -1, -1)]
    out = []
    for name in names:
        for place in places:
            f = graph.files.get(place)
            d = f.by_qual.get(name) if f is not None else None
            if d is not None and d.kind == "function":
                out.append(d)
                break
    return out


_PLACEHOLDER = re.compile(r"%[a-zA-Z#%]|\\\$\\\{[^}]*\\\}|\\\$[A-Za-z_][\w.]*")


def _instance_of(title: str, name: str) -> bool:
    """Whether the runner's test name is an instance of a parametrized title (`test.each(..)('flags %p
    throw', ..)` is reported as `flags {"flags": "-a"} throw`), possibly after its describe blocks' titles."""
    if "%" not in title and "$" not in title:
        return False
    pattern = _PLACEHOLDER.sub(".+?", re.escape(title))
    return re.search(f"(?:^|\\s){pattern}$", name) is not None


def edges(graph: CodeGraph, src: Def) -> list[tuple[Def, str]]:
    """Where one step from `src` leads, and how: its resolved calls (building an object runs its
    constructor), the definitions it uses as values, for a class, its methods (whoever builds the
    object, or a registry it was handed to, calls them: `obj = Cls(); obj.run()`), and the handlers
    registered with it or with a registry object it calls (`@X.register(T)`: X dispatches to them)."""
    cached = graph.step_cache.get(src)
    if cached is None:
        cached = graph.step_cache[src] = _edges(graph, src)
    return cached


def _edges(graph: CodeGraph, src: Def) -> list[tuple[Def, str]]:
    out: list[tuple[Def, str]] = []
    for _call, found, how in graph.callees(src):
        if how != EXACT and len(found) > MAX_FANOUT_BY_NAME:
            continue
        for d in implementations(found):
            out.append((d, REF if d.kind == "data" else how))  # `TABLE.get(k)` reads the table
            if d.kind == "class":
                out.extend((c, how) for c in graph.constructors(d))
    for d in graph.references(src):
        out.append((d, REF))
        if d.kind == "class":
            out.extend((c, REF) for c in graph.constructors(d))
    if src.kind == "class":
        out.extend((d, MEMBER) for d in graph.methods(src))
    out.extend((d, HANDLER) for d in graph.handlers_of(src))
    return out


def implementations(defs: list[Def]) -> list[Def]:
    """`defs` without those in type stubs (`.pyi`, `.d.ts`) when any other is left: the runtime calls the
    implementation, and a stub holds no behaviour to be wrong."""
    real = [d for d in defs if not is_type_declaration(d.path)]
    return real or defs


def walk(graph: CodeGraph, starts: list[Def]) -> dict[Def, Suspect]:
    """Breadth-first over edges() from each test, up to MAX_DEPTH; the nearest path wins, and at the same
    distance a call beats a use as a value, which beats being a method of a built class."""
    reached: dict[Def, Suspect] = {}
    frontier: list[tuple[Def, Def, int]] = [(d, d, 0) for d in starts]
    seen = set(starts)
    while frontier and len(reached) < MAX_REACHED and len(seen) < MAX_VISITED:
        nxt: list[tuple[Def, Def, int]] = []
        steps = [(d, how, src, test, depth) for src, test, depth in frontier if depth < DATA_DEPTH
                 for d, how in edges(graph, src)]
        steps.sort(key=lambda t: _EDGE_ORDER.get(t[1], 0))  # stable: the walk's order within a kind
        for d, how, src, test, depth in steps:
            if d in seen:
                continue
            seen.add(d)
            if depth < MAX_DEPTH or d.kind == "data":
                reached[d] = Suspect(d, depth + 1, src.qual if depth else test.qual, test.path, how,
                                     types=graph.registered_types(d) if how == HANDLER else ())
            nxt.append((d, test, depth + 1))
        frontier = nxt
    return reached


NAMED_DISTANCE = 3  # the distance a definition found by its name counts as (it was not reached at all)
MAX_NAMED = 12  # definitions found by name per failure
NAMED_POINTERS = 2  # of those, at most this many among the pointers: they must not crowd out reached ones
RARE_NAMES = 3  # a test-name word in at most this many definition names is rare: one such word is enough
_word_index: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def named_like(graph: CodeGraph, tests: list[Def], reached: dict[Def, Suspect]) -> dict[Def, Suspect]:
    """Source definitions the walk did not reach whose own names share two words with a failing test's
    name, or one rare word (`test_xfail_teardown_reports_show_phase`: `show_xfailed`). A test is named for
    the behaviour it checks, and so is the code that does it: the way a reader finds code run through
    a plugin hook, an event or a subprocess, which no call edge leads to."""
    index = _word_index.get(graph)
    if index is None:
        index = {}
        for name in graph.by_name:
            for w in set(_identifier_words(name)):
                index.setdefault(w, []).append(name)
        _word_index[graph] = index
    out: dict[Def, Suspect] = {}
    for test in tests:
        wanted = words(test.name)
        overlap: dict[str, int] = {}
        for w in wanted:
            names = index.get(w, ())
            for name in names:
                overlap[name] = overlap.get(name, 0) + (2 if len(names) <= RARE_NAMES else 1)
        best = sorted((n for n, k in overlap.items() if k >= 2), key=lambda n: (-overlap[n], n))
        for name in best:
            for d in graph.by_name.get(name, []):
                if len(out) >= MAX_NAMED:
                    return out
                if d in reached or d in out or is_test(d.path) or is_type_declaration(d.path) or \
                        d.kind not in ("function", "method"):
                    continue
                out[d] = Suspect(d, NAMED_DISTANCE, test.qual, test.path, NAMED_LIKE)
    return out


MAX_PICKING = 3  # a string picking more classes than this (`'html'`) picks none in particular
_STRING = re.compile(r"""['"]([A-Za-z][\w.:-]{2,39})['"]""")


def picked(graph: CodeGraph, tests_text: str, reached: dict[Def, Suspect], test: Def) -> dict[Def, Suspect]:
    """Methods of the classes the failing test picks by name: a string it writes (in its body or its
    decorators: `@pytest.mark.sphinx('doctest')`) that is a class attribute's value (`name = 'doctest'`).
    Plugin systems choose a builder, command or format this way, and no call leads there."""
    out: dict[Def, Suspect] = {}
    for label in dict.fromkeys(_STRING.findall(tests_text)):
        classes = graph.labelled(label)
        if not 0 < len(classes) <= MAX_PICKING:
            continue
        for cls in classes:
            for d in graph.methods(cls) + graph.constructors(cls):
                if d not in reached and d not in out:
                    out[d] = Suspect(d, 2, f"'{label}' ({cls.name})", test.path, PICKED)
    return out


RECENT_DAYS = 30  # a file changed within this many days of the newest commit counts as recently changed


def rank(suspects: dict[Def, Suspect], clues: frozenset[str], test_words: frozenset[str],
         frames: list[tuple[str, int, str]], body_of, history: dict | None = None,
         test_names: frozenset[str] = frozenset()) -> list[Suspect]:
    """Score each reached definition: base + the sum of policy.SUSPECT_WEIGHTS times its raw features
    (`features`); best first. `history` is the index's co-change record (index/cochange.py);
    `test_names` the identifiers the failing tests' bodies write (identifiers())."""
    w = policy.SUSPECT_WEIGHTS
    pairs = (history or {}).get("pairs") or {}
    last = (history or {}).get("last") or {}
    newest = max(last.values(), default=0)
    out = []
    for s in suspects.values():
        d = s.d
        if is_test(d.path) or d.kind in ("class", "interface", "test"):
            continue  # test helpers and class headers say little; their methods are candidates themselves
        s.features = features(s, clues, test_words, frames, body_of(d), pairs.get(s.test_path, {}),
                              last, newest, test_names)
        s.score = w["base"] + sum(w[k] * v for k, v in s.features.items())
        out.append(s)
    out.sort(key=lambda s: (-s.score, s.distance, s.d.path, s.d.start))
    return out


def features(s: Suspect, clues: frozenset[str], test_words: frozenset[str], frames: list[tuple[str, int, str]], body: str,
             pairs: dict[str, int], last: dict[str, float], newest: float,
             test_names: frozenset[str] = frozenset()) -> dict[str, float]:
    """The raw value of each named feature (policy.SUSPECT_WEIGHTS has one weight per key): counts and
    0/1 flags, so that a fit (bench/realfail/fit.py) can weigh them without recomputing anything."""
    d = s.d
    name_words = words(d.qual)
    body_words = words(body) if body else set()
    return {
        "distance": float(min(s.distance, MAX_DEPTH) - 1),
        "by_name": float(s.how == NAME),
        "by_ref": float(s.how == REF),
        "member": float(s.how == MEMBER),
        "name_clue": float(min(2, len(name_words & clues))),
        "name_test": float(min(2, len(name_words & test_words))),
        "body_clue": float(min(4, len(body_words & clues))),
        "body_test": float(min(5, len(body_words & test_words))),
        "frame": float(any(p == d.path and d.start <= n <= d.end for p, n, _ in frames)),
        "size": min(1.0, (d.end - d.start + 1) / 80),
        "private": float(d.name.startswith("_") and not d.name.startswith("__")),
        "constructor": float(d.name in _CONSTRUCTORS),
        "cochange": float(min(3, pairs.get(d.path, 0))),
        "recent": float(bool(newest) and newest - last.get(d.path, 0) <= RECENT_DAYS * 86400),
        "data": float(d.kind == "data"),
        "data_deep": float(d.kind == "data" and s.distance > MAX_DEPTH),
        "handler": float(s.how == HANDLER),
        "dispatch_type": float(bool(test_names) and bool(dispatch_types(s) & test_names)),
        "named_like": float(s.how == NAMED_LIKE),
        "picked": float(s.how == PICKED),
    }


def capped(ranked: list[Suspect]) -> list[Suspect]:
    """`ranked` keeping only the first NAMED_POINTERS definitions found by name alone (named_like)."""
    out, named = [], 0
    for s in ranked:
        if s.how == NAMED_LIKE:
            named += 1
            if named > NAMED_POINTERS:
                continue
        out.append(s)
    return out


def dispatch_types(s: Suspect) -> set[str]:
    """The types a suspect is chosen for at run time: a handler's registration types, and `T` of a method
    named `<prefix>_T` (`_print_OmegaPower`, `visit_Call`), the way a class dispatches on
    `prefix + type(x).__name__`. A test that builds or names T runs that one among its many siblings."""
    out = {t.rsplit(".", 1)[-1] for t in s.types}
    m = _DISPATCHED.fullmatch(s.d.name) if "." in s.d.qual else None
    if m:
        out.add(m.group(1))
    return out


def identifiers(text: str) -> frozenset[str]:
    """The identifiers `text` writes, as written (a class name is matched exactly, not by its words)."""
    return frozenset(_IDENT.findall(text))
