"""The repository's code graph at read time: definitions, call sites and imports of every file (as
chunking.graph extracted them at index time), with names resolved across files.

Resolution of a callee as written at a call site, best first:
- `self.x` / `this.x` / `cls.x`: a member of the enclosing class or of its bases; `super.x`: of its bases;
- a name the file defines (the enclosing function's nested definitions, then module level);
- a name the file imports (`from m import x as y`, `import m as z`, relative imports, JS `import` and
  `require`), followed through the module's own definitions (`z.f`, `Cls.method`);
- a pluggy relay (`config.hook.pytest_x(...)`): every implementation of that hook;
- `x.m` where `x` holds an instance: built by a class, returned by a function whose annotation names the
  type, or a parameter annotated with it; in a test, a fixture parameter whose fixture is so annotated;
- a pytest parametrize argument of the enclosing test or its class (`@parametrize("fn", [f, g])`): its values;
- only when none of these applies, every definition with that last name ("name" resolution).
Handlers a decorator registers (`@X.register(T)`) are never called by name: `handlers_of(d)` lists those
whoever reaches X (or calls a registry object named X) dispatches to.
Stdlib only: the rows come from `Store.file_graphs()`; `graph_for(store)` caches one graph per table version.
"""
from __future__ import annotations

import collections
import functools
import json
import posixpath
import re
import sys
import threading
import zlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from hippo.core.pathkind import is_test

EXACT = "exact"  # through the file's own scopes, its imports, or `self`
NAME = "name"  # by last name only: nothing better was found
MAX_DEPTH = 6  # re-exports followed (`pkg/__init__.py` -> `pkg/sub/__init__.py` -> ... -> the definition)
MAX_NAME_MATCHES = 8  # a bare-name fallback with more candidates than this says nothing
MAX_PARSED_BYTES = 24 * 1024 * 1024  # graph JSON held parsed at once (about 8x as much memory); the rest on use
MAX_HOOK_IMPLS = 40  # implementations of one plugin hook followed (pytest has 24 `pytest_configure`)
_JS_EXTS = (".js", ".ts", ".tsx", ".mjs", ".cjs", ".jsx", ".mts", ".cts")
_PY_EXTS = (".py", ".pyi")
_CTOR = ("__init__", "constructor", "__post_init__", "__new__")


@dataclass(frozen=True)
class Def:
    path: str
    qual: str
    kind: str
    start: int
    end: int
    bases: tuple[str, ...] = ()
    idx: int = -1  # position in its file's definition list
    returns: str = ""  # a function's return annotation: the type it names (`-> Iterator[App]`: "App")
    label: str = ""  # a class attribute's short string value (`name = 'doctest'`: "doctest")

    def __hash__(self) -> int:
        """The fields' hash, computed once: walks keep definitions in sets and dicts by the thousand."""
        h = self.__dict__.get("_hash")
        if h is None:
            h = hash((self.path, self.qual, self.kind, self.start, self.end, self.bases, self.idx))
            object.__setattr__(self, "_hash", h)
        return h

    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "_hash"}  # a str hash differs per process

    @property
    def name(self) -> str:
        return self.qual.rsplit(".", 1)[-1]

    def to_dict(self) -> dict:
        return {"path": self.path, "symbol": self.qual, "kind": self.kind, "start_line": self.start,
                "end_line": self.end}


@dataclass(frozen=True)
class Call:
    path: str
    line: int
    callee: str
    within: Def | None  # the innermost definition holding the call (None: module level)

    @property
    def tail(self) -> str:
        return self.callee.rsplit(".", 1)[-1]


class _File:
    """One file's graph, parsed from its JSON (kept zlib-compressed) when first asked for; at most
    MAX_PARSED_BYTES of JSON stay parsed at once (_Parsed): a 100k-file repository's graph held whole as
    objects took ~2.5 GB of the warm server for ~290 MB of JSON. Held for good: the names its definitions,
    call sites and value uses end in, and its import aliases (the repository-wide indexes)."""

    __slots__ = ("path", "zraw", "size", "def_names", "call_tails", "ref_tails", "alias_pairs", "registers", "labels",
                 "_body")

    def __init__(self, path: str, zraw: bytes, size: int, def_names: tuple[str, ...] = (),
                 call_tails: tuple[str, ...] = (), ref_tails: tuple[str, ...] = (),
                 alias_pairs: tuple[tuple[str, str], ...] = (), registers: bool = False,
                 labels: tuple[str, ...] = ()) -> None:
        self.path, self.zraw, self.size = path, zraw, size
        self.def_names, self.call_tails, self.ref_tails, self.alias_pairs = def_names, call_tails, ref_tails, alias_pairs
        self.registers = registers  # it registers handlers with a decorator (the registry table reads only these)
        self.labels = labels  # its class attributes' short strings (`name = 'doctest'`): labelled() reads only these
        self._body: _Body | None = None

    @property
    def raw(self) -> str:
        """The JSON it was parsed from."""
        return zlib.decompress(self.zraw).decode("utf-8")

    def _parsed(self) -> _Body:
        body = self._body
        if body is None:
            body = self._body = _body(self.path, json.loads(self.raw))
            _PARSED.add(self)
        return body

    @property
    def defs(self) -> list[Def]:
        return self._parsed().defs

    @property
    def calls(self) -> list[Call]:
        return self._parsed().calls

    @property
    def refs(self) -> list[Call]:
        """Names used as values (`register(handler)`), not called."""
        return self._parsed().refs

    @property
    def imports(self) -> dict[str, tuple[str, str]]:
        """Bound name -> (module, attribute)."""
        return self._parsed().imports

    @property
    def stars(self) -> list[str]:
        return self._parsed().stars

    @property
    def by_qual(self) -> dict[str, Def]:
        return self._parsed().by_qual

    @property
    def assigns(self) -> dict[tuple[int, str], str]:
        """(enclosing def idx, variable) -> callee."""
        return self._parsed().assigns

    @property
    def registrations(self) -> list[tuple[str, tuple[str, ...], Def]]:
        """(registry, types, handler) for each handler a decorator registers (`@X.register(T)`)."""
        return self._parsed().registrations if self.registers else []

    @property
    def params(self) -> dict[int, dict[str, list[str]]]:
        """Definition index -> pytest parametrize argument -> its values as written."""
        return self._parsed().params

    def sites_within(self, d: Def) -> tuple[list[Call], list[Call]]:
        """(calls, value uses) whose innermost enclosing definition is `d`. Indexed on first use: a walk
        asks this of every definition it passes, and a long file holds thousands of sites."""
        body = self._parsed()
        if body.within is None:
            index: dict[int, tuple[list[Call], list[Call]]] = {}
            for k, sites in enumerate((body.calls, body.refs)):
                for c in sites:
                    if c.within is not None:
                        index.setdefault(c.within.idx, ([], []))[k].append(c)
            body.within = index
        calls, refs = body.within.get(d.idx, ((), ()))  # type: ignore[arg-type]
        return [c for c in calls if c.within is d or c.within == d], [r for r in refs if r.within is d or r.within == d]


@dataclass
class _Body:
    """A file's graph as objects (_File)."""

    defs: list[Def]
    calls: list[Call]
    refs: list[Call]
    imports: dict[str, tuple[str, str]]
    stars: list[str]
    by_qual: dict[str, Def]
    assigns: dict[tuple[int, str], str]
    registrations: list[tuple[str, tuple[str, ...], Def]]  # (registry, types, handler)
    params: dict[int, dict[str, list[str]]]  # def idx -> argument -> values
    within: dict[int, tuple[list[Call], list[Call]]] | None = None


class _Parsed:
    """The files whose bodies are parsed, oldest first; past MAX_PARSED_BYTES of their JSON the oldest are
    dropped (parsed again when asked for, into objects equal to the first parse's)."""

    def __init__(self) -> None:
        self.files: collections.OrderedDict[int, _File] = collections.OrderedDict()
        self.size = 0
        self.lock = threading.Lock()

    def add(self, f: _File) -> None:
        with self.lock:
            if id(f) in self.files:
                return
            self.files[id(f)] = f
            self.size += f.size
            while self.size > MAX_PARSED_BYTES and len(self.files) > 1:
                _k, old = self.files.popitem(last=False)
                self.size -= old.size
                old._body = None


_PARSED = _Parsed()


class _ByName:
    """Definitions (or call sites, or value uses) by the last part of their name, in file then file order:
    the files holding each name are indexed, and parsed when a name is asked for."""

    def __init__(self, files: Iterable[_File], kind: str) -> None:
        self.kind = kind  # "defs", "calls" or "refs"
        self.by_tail: dict[str, list[_File]] = {}
        names = "def_names" if kind == "defs" else "call_tails" if kind == "calls" else "ref_tails"
        for f in files:
            for tail in getattr(f, names):
                self.by_tail.setdefault(tail, []).append(f)

    def get(self, tail: str, default: list | None = None) -> list:
        files = self.by_tail.get(tail)
        if files is None:
            return [] if default is None else default
        if self.kind == "defs":
            return [d for f in files for d in f.defs if d.name == tail]
        return [c for f in files for c in (f.refs if self.kind == "refs" else f.calls) if c.tail == tail]

    def __getitem__(self, tail: str) -> list:
        if tail not in self.by_tail:
            raise KeyError(tail)
        return self.get(tail)

    def __contains__(self, tail: object) -> bool:
        return tail in self.by_tail

    def __iter__(self) -> Iterator[str]:
        return iter(self.by_tail)

    def __len__(self) -> int:
        return len(self.by_tail)


class CodeGraph:
    """Every file's graph, with the indexes resolution needs. Build once per table version."""

    def __init__(self, files: dict[str, _File]) -> None:
        self.files = files
        self._name_cache: dict[tuple[str, bool], list[Def]] = {}
        self._hook_cache: dict[str, list[Def]] = {}
        # where one step from a definition leads, for walks over this graph (diagnosis.suspects.edges): a
        # warm server answers the next failure from it, and the graph is rebuilt with each table version
        self.step_cache: dict[Def, list] = {}
        # _lookup's answers: a name re-exported through packages that import each other (and through the
        # copies of a package a big repository holds) is reached along many paths, each resolved again
        # from scratch without this (~1 s for one sqlparse failure at 50k chunks)
        self._lookup_cache: dict[tuple, list[Def]] = {}
        self.py_modules: dict[str, list[str]] = {}
        for path in files:
            if path.endswith(_PY_EXTS):
                dotted = path.rsplit(".", 1)[0].replace("/", ".")
                if dotted.endswith(".__init__"):
                    dotted = dotted[: -len(".__init__")]
                parts = dotted.split(".")
                for k in range(len(parts)):
                    self.py_modules.setdefault(".".join(parts[k:]), []).append(path)
        for paths in self.py_modules.values():
            paths.sort(key=lambda p: (p.endswith(".pyi"), p.count("/"), p))

    # The repository-wide indexes are built on first use: resolving a failing test's calls through its
    # imports needs none of them, so a new table version costs only what a question asks for.
    @functools.cached_property
    def by_name(self) -> _ByName:
        return _ByName(self.files.values(), "defs")

    @functools.cached_property
    def calls_by_tail(self) -> _ByName:
        return _ByName(self.files.values(), "calls")

    @functools.cached_property
    def refs_by_tail(self) -> _ByName:
        return _ByName(self.files.values(), "refs")

    @functools.cached_property
    def _labels(self) -> dict[str, list[Def]]:
        """Class attribute string -> the classes holding it (`name = 'doctest'`: DocTestBuilder); parses only
        the files that have such attributes."""
        out: dict[str, list[Def]] = {}
        for f in self.files.values():
            if not f.labels:
                continue
            for d in f.defs:
                if d.label:
                    owner = f.by_qual.get(d.qual.rsplit(".", 1)[0])
                    if owner is not None and owner.kind == "class" and owner not in out.setdefault(d.label, []):
                        out[d.label].append(owner)
        return out

    def labelled(self, label: str) -> list[Def]:
        """The classes a string picks by name (`'doctest'`: the class whose `name = 'doctest'`), outside tests."""
        return [c for c in self._labels.get(label, ()) if not is_test(c.path)]

    @functools.cached_property
    def _registries(self) -> tuple[dict[Def, list[Def]], dict[str, list[tuple[str, Def]]], dict[Def, tuple[str, ...]]]:
        """(registry definition -> handlers, registry object's name -> (its file, handler), handler -> the
        types it is registered for). A registry that resolves to no definition (`reg = Registry()` at module
        level) is known by its name: a call or use of that name in a file that binds it reaches its handlers."""
        by_def: dict[Def, list[Def]] = {}
        by_name: dict[str, list[tuple[str, Def]]] = {}
        types: dict[Def, tuple[str, ...]] = {}
        for f in self.files.values():
            if not f.registers:
                continue
            for registry, ts, handler in f.registrations:
                types[handler] = types.get(handler, ()) + ts
                found = [d for d in self._lookup(f, registry.split("."), None) if d != handler]
                for d in found:
                    by_def.setdefault(d, []).append(handler)
                if not found:
                    by_name.setdefault(registry.rsplit(".", 1)[-1], []).append((f.path, handler))
        return by_def, by_name, types

    def handlers_of(self, d: Def) -> list[Def]:
        """Handlers registered with `d` (a dispatcher class or generic function), and with the registry
        objects `d` calls or uses by a name its file binds (`for fact in class_fact_registry(expr)`)."""
        by_def, by_name, _types = self._registries
        out = list(by_def.get(d, ()))
        f = self.files.get(d.path)
        if by_name and f is not None:
            calls, refs = f.sites_within(d)
            for site in calls + refs:
                for part in site.callee.split(".")[:2]:
                    for path, h in by_name.get(part, ()):
                        if h not in out and (path == d.path or part in f.imports):
                            out.append(h)
        return out

    def registered_types(self, d: Def) -> tuple[str, ...]:
        """The types handler `d` is registered for (`@X.register(Pow)`: Pow), as written."""
        return self._registries[2].get(d, ())

    @functools.cached_property
    def aliases(self) -> dict[str, set[str]]:
        """Imported name -> the names it is bound to (`import {a as b}`, `from m import a as b`)."""
        out: dict[str, set[str]] = {}
        for f in self.files.values():
            for attr, bound in f.alias_pairs:
                out.setdefault(attr, set()).add(bound)
        return out

    @classmethod
    def from_rows(cls, rows: Mapping[str, str] | Iterable[tuple[str, str]], previous: CodeGraph | None = None) -> CodeGraph:
        """The graph of `rows` (path -> graph JSON, or such pairs; a later pair for a path wins); files whose
        JSON is unchanged since `previous` are reused, not parsed again (an edit re-parses one file, not the
        repository)."""
        files: dict[str, _File] = {}
        old = previous.files if previous is not None else {}
        latest: dict[str, str | _File] = {}
        for path, raw in (rows.items() if isinstance(rows, Mapping) else rows):
            prev = old.get(path)
            # an unchanged file is reused; a new one is held compressed until parsed below
            latest[path] = prev if prev is not None and _same(prev, raw) else raw
        # by path: the rows come in scan order, which varies, and name lookups list definitions in file order
        for path in sorted(latest):
            got = latest.pop(path)
            if isinstance(got, _File):
                files[path] = got
                continue
            f = _load(path, got)
            if f is not None:
                files[path] = f
        return cls(files)

    # --- definitions by name -------------------------------------------------------------------
    def find(self, name: str) -> list[Def]:
        """Definitions `name` refers to, best first. `name` may be bare (`parse`), qualified by its class
        (`Command.parse`) or by its module (`pkg.mod.Cls.method`, `pkg/mod.py:func`)."""
        name = name.strip().removesuffix("()")
        if ":" in name:  # path:qual
            path, _, qual = name.partition(":")
            f = self.files.get(path)
            d = f.by_qual.get(qual) if f else None
            return [d] if d else []
        parts = [p for p in re.split(r"[.#]|::", name) if p]
        if not parts:
            return []
        scored: dict[Def, tuple] = {}

        def add(d: Def, score: int) -> None:
            key = (score, *_plain(d))
            if d not in scored or scored[d] < key:
                scored[d] = key

        for k in range(1, len(parts)):
            module, qual = ".".join(parts[:k]), ".".join(parts[k:])
            for path in self.py_modules.get(module, []):
                d = self.files[path].by_qual.get(qual)
                if d is not None:
                    add(d, 4)
        joined = ".".join(parts)
        for d in self.by_name.get(parts[-1], []):
            if d.qual == joined:
                add(d, 3)
            elif len(parts) > 1 and d.qual.endswith("." + joined):
                add(d, 2)
            elif len(parts) == 1:
                add(d, 1)
        best = sorted(scored, key=lambda d: scored[d], reverse=True)
        return best

    # --- resolution ----------------------------------------------------------------------------------
    def resolve(self, call: Call) -> tuple[list[Def], str]:
        """The definitions a call site reaches and how they were found (EXACT or NAME)."""
        f = self.files.get(call.path)
        if f is None:
            return [], NAME
        parts = call.callee.split(".")
        if not parts[0]:  # `f().x`: an unknown receiver
            return self._by_name(parts[-1], method=True), NAME
        head = parts[0]
        if head in ("cls", "self") and len(parts) == 1:  # `cls(...)` in a classmethod
            cls = self._enclosing_class(f, call.within)
            return ([cls], EXACT) if cls is not None else ([], NAME)
        if head in ("self", "this", "cls") and len(parts) >= 2:
            cls = self._enclosing_class(f, call.within)
            if cls is not None:
                found = self._walk([cls], parts[1:], f)
                if found:
                    return found, EXACT
            return self._by_name(parts[-1], method=True), NAME
        if head == "super" and len(parts) == 2:
            cls = self._enclosing_class(f, call.within)
            found = [m for b in (self._bases(cls) if cls else []) for m in self._member(b, parts[1])]
            return (found, EXACT) if found else (self._by_name(parts[1], method=True), NAME)
        hook = _hook_name(parts)
        if hook:  # pluggy: `config.hook.pytest_configure(...)` calls every plugin's `pytest_configure`
            found = self._hook_impls(hook)
            if found:
                return found, EXACT
        found = self._lookup(f, parts, call.within)
        if found:
            return found, EXACT
        if len(parts) > 1:  # `svc.validate()` after `svc = AuthService(...)`: a method of that class
            found = self._instance_member(f, parts, call) or self._fixture_member(f, parts, call)
            if found:
                return found, EXACT
        elif call.within is not None and f.params:
            found = self._parametrized(f, head, call.within)
            if found:
                return found, EXACT
        return self._by_name(parts[-1], method=len(parts) > 1), NAME

    def _instance_member(self, f: _File, parts: list[str], call: Call) -> list[Def]:
        scopes = [call.within.idx if call.within is not None else -1, -1]
        for w in scopes:
            made_by = f.assigns.get((w, parts[0]))
            if made_by is None:
                continue
            classes = self._classes_made(self._lookup(f, made_by.split("."), call.within))
            found = self._walk(classes, parts[1:], f) if classes else []
            if found:
                return found
        return []

    def _classes_made(self, makers: list[Def]) -> list[Def]:
        """The classes whose instances `makers` give: a class itself, or the type a function's return
        annotation names (`def make_app() -> App`, `with warns() as w`: w is what `warns` returns)."""
        out = [d for d in makers if d.kind in ("class", "interface")]
        for d in makers:
            if d.returns and d.kind != "class" and (g := self.files.get(d.path)) is not None:
                out.extend(c for c in self._lookup(g, d.returns.split("."), None)
                           if c.kind in ("class", "interface") and c not in out)
        return out

    def _fixture_member(self, f: _File, parts: list[str], call: Call) -> list[Def]:
        """`app.build()` in a test whose parameter `app` names a pytest fixture: a member of the type the
        fixture's return annotation names (`def app(...) -> Iterator[SphinxTestApp]`). Fixtures live in the
        test's file, a conftest.py or a plugin module, so they are found by name among annotated functions."""
        within = call.within
        if within is None or not is_test(f.path) or len(parts) < 2:
            return []
        fixtures = [d for d in self._by_name(parts[0], method=False) if d.returns and d.kind == "function"]
        classes = self._classes_made(fixtures[:MAX_NAME_MATCHES])
        return self._walk(classes[:3], parts[1:], f) if classes else []

    def _hook_impls(self, name: str) -> list[Def]:
        """Every plugin's implementation of hook `name` (functions and methods of that name outside tests;
        the specification module, `hookspec(s).py`, only when nothing else implements it)."""
        cached = self._hook_cache.get(name)
        if cached is None:
            impls = [d for d in self.by_name.get(name, []) if d.kind in ("function", "method") and not is_test(d.path)]
            real = [d for d in impls if posixpath.basename(d.path) not in ("hookspec.py", "hookspecs.py")]
            cached = self._hook_cache[name] = sorted(real or impls, key=_plain, reverse=True)[:MAX_HOOK_IMPLS]
        return list(cached)

    def _parametrized(self, f: _File, name: str, within: Def) -> list[Def]:
        """What a pytest parametrize argument `name` of `within` (or of its class) holds: each value resolved
        in the file; a value naming a table (`FNS = [nx.f, nx.g]`) gives what the table lists."""
        owners = [within] + ([c] if (c := self._enclosing_class(f, within)) is not None else [])
        for owner in owners:
            values = f.params.get(owner.idx, {}).get(name)
            if not values:
                continue
            out: list[Def] = []
            for v in values:
                for d in self._lookup(f, v.split("."), None):
                    for x in self.references(d) if d.kind == "data" else [d]:
                        if x not in out:
                            out.append(x)
            return out
        return []

    def callees(self, d: Def) -> list[tuple[Call, list[Def], str]]:
        f = self.files.get(d.path)
        if f is None:
            return []
        return [(c, *self.resolve(c)) for c in f.sites_within(d)[0]]

    def references(self, d: Def) -> list[Def]:
        """What definition `d` uses as a value without calling it (a callback, a list of filters run in a
        loop, a class handed to a registry), resolved exactly: a bare-name guess would follow every local
        variable that happens to share a name."""
        f = self.files.get(d.path)
        if f is None:
            return []
        out: list[Def] = []
        for r in f.sites_within(d)[1]:
            found, how = self.resolve(r)
            if how == EXACT:
                out.extend(x for x in found if x not in out and x != d)
        return out

    def methods(self, cls: Def) -> list[Def]:
        """The methods a class defines itself (not its constructors: building it runs those already)."""
        f = self.files.get(cls.path)
        if f is None:
            return []
        prefix = cls.qual + "."
        return [d for d in f.defs if d.qual.startswith(prefix) and "." not in d.qual[len(prefix):]
                and d.kind in ("method", "function") and d.name not in _CTOR]

    def callers(self, targets: Iterable[Def], exact_only: bool = False) -> list[tuple[Call, str]]:
        """Call sites that resolve to any of `targets` (a class counts for its constructor too)."""
        wanted = set(targets)
        tails = {d.name for d in wanted}
        for d in list(wanted):
            if d.name in _CTOR and "." in d.qual:  # `Cls()` calls `Cls.__init__`
                owner = self.files[d.path].by_qual.get(d.qual.rsplit(".", 1)[0]) if d.path in self.files else None
                if owner is not None:
                    wanted.add(owner)
                    tails.add(owner.name)
        out: list[tuple[Call, str]] = []
        for tail in self._bound_names(tails):
            for c in self.calls_by_tail.get(tail, []):
                found, how = self.resolve(c)
                if how == NAME and (exact_only or len(found) > MAX_NAME_MATCHES):
                    continue
                if wanted.intersection(found):
                    out.append((c, how))
        out.sort(key=lambda t: (t[1] != EXACT, t[0].path, t[0].line))
        return out

    def uses(self, targets: Iterable[Def]) -> list[Call]:
        """Places that use any of `targets` as a value without calling it there (a callback handed on, a
        registry entry, a list of filters run later), resolved exactly: who reaches a function this way
        calls it too, later."""
        wanted = set(targets)
        out = [r for tail in self._bound_names({d.name for d in wanted}) for r in self.refs_by_tail.get(tail, [])
               if (res := self.resolve(r))[1] == EXACT and wanted.intersection(res[0])]
        out.sort(key=lambda r: (r.path, r.line))
        return out

    def _bound_names(self, names: set[str]) -> set[str]:
        """`names` plus every name an import binds them to (`from m import a as b`: a site may say `b`)."""
        out = set(names)
        for name in names:
            out |= self.aliases.get(name, set())
        return out

    def member(self, cls: Def, name: str) -> Def | None:
        """`cls.name`, defined by the class itself or inherited from a base the graph resolves."""
        return next(iter(self._member(cls, name)), None)

    def constructors(self, cls: Def) -> list[Def]:
        f = self.files.get(cls.path)
        if f is None:
            return []
        return [d for n in _CTOR if (d := f.by_qual.get(f"{cls.qual}.{n}")) is not None]

    def def_at(self, path: str, line: int) -> Def | None:
        """The innermost definition of `path` holding `line`."""
        f = self.files.get(path)
        if f is None:
            return None
        best = None
        for d in f.defs:
            if d.start <= line <= d.end and (best is None or d.end - d.start <= best.end - best.start):
                best = d
        return best

    # --- helpers ---------------------------------------------------------------------------------------
    def _by_name(self, name: str, method: bool) -> list[Def]:
        """Every definition named `name`, best first; kept per graph (a failure's walk asks for the same
        common names again and again, and a big repository has many definitions of each)."""
        key = (name, method)
        cached = self._name_cache.get(key)
        if cached is not None:
            return list(cached)
        found = self.by_name.get(name, [])
        if method:
            found = [d for d in found if "." in d.qual or d.kind == "method"] or found
        else:
            found = [d for d in found if "." not in d.qual] or found
        self._name_cache[key] = sorted(found, key=_plain, reverse=True)
        return list(self._name_cache[key])

    def _enclosing_class(self, f: _File, within: Def | None) -> Def | None:
        if within is None:
            return None
        parts = within.qual.split(".")
        for k in range(len(parts) - 1, 0, -1):
            d = f.by_qual.get(".".join(parts[:k]))
            if d is not None and d.kind in ("class", "interface"):
                return d
        # JS `Cmd.prototype.parse = function`: the qual names the class without nesting
        owner = f.by_qual.get(parts[0]) if len(parts) > 1 else None
        if owner is None and len(parts) > 1:
            owner = next(iter(self._lookup(f, parts[:1], None)), None)
        return owner if owner is not None and owner.kind in ("class", "interface", "function") else None

    def _bases(self, cls: Def, seen: int = 0) -> list[Def]:
        f = self.files.get(cls.path)
        if f is None or seen > 3:
            return []
        out: list[Def] = []
        for b in cls.bases:
            out.extend(d for d in self._lookup(f, b.split("."), None) if d.kind in ("class", "interface", "function"))
        return out

    def _member(self, cls: Def, name: str, depth: int = 0) -> list[Def]:
        f = self.files.get(cls.path)
        if f is None or depth > 3:
            return []
        d = f.by_qual.get(f"{cls.qual}.{name}")
        if d is not None:
            return [d]
        for base in self._bases(cls, depth):
            found = self._member(base, name, depth + 1)
            if found:
                return found
        return []

    def _walk(self, things: list, rest: list[str], f: _File) -> list[Def]:
        """Follow `rest` (attribute names) from definitions or module file lists."""
        for part in rest:
            nxt: list = []
            for t in things:
                if isinstance(t, Def) and t.kind == "data":
                    nxt.append(t)  # `KEYWORDS.get(w)`, `self.RE.match(s)`: a method of the value reads the table
                elif isinstance(t, Def):
                    nxt.extend(self._member(t, part))
                else:  # a module: its file paths
                    nxt.extend(self._module_member(t, part))
            things = nxt
            if not things:
                return []
        out = [t for t in things if isinstance(t, Def)]
        return out

    def _module_member(self, paths: tuple[str, ...], name: str) -> list:
        out: list = []
        for p in paths:
            f = self.files.get(p)
            if f is None:
                continue
            d = f.by_qual.get(name)
            if d is not None:
                out.append(d)
            else:  # re-exported (`from .core import parse`, `from .generators import *` in __init__.py)
                out.extend(self._lookup(f, [name], None, depth=1))
        if not out and paths and paths[0].endswith(_PY_EXTS):  # a submodule
            sub = self._py_module_files(paths[0], "." + name, package=True)
            if sub:
                out.append(tuple(sub))
        return out

    def _lookup(self, f: _File, parts: list[str], within: Def | None, depth: int = 0) -> list[Def]:
        """Resolve a dotted name as written in file `f` (scope, then imports, then star imports); each
        answer is computed once per graph (the graph does not change under it)."""
        key = (f.path, tuple(parts), within, depth)
        found = self._lookup_cache.get(key)
        if found is None:
            found = self._lookup_cache[key] = self._resolve_name(f, parts, within, depth)
        return list(found)

    def _resolve_name(self, f: _File, parts: list[str], within: Def | None, depth: int) -> list[Def]:
        head = parts[0]
        scopes = within.qual.split(".") if within is not None else []
        for k in range(len(scopes), -1, -1):
            if 0 < k < len(scopes) and getattr(f.by_qual.get(".".join(scopes[:k])), "kind", "") == "class" and \
                    not (k == len(scopes) - 1 and within is not None and within.kind == "data"):
                continue  # a class body is no scope of its methods (Python and JS alike), only of its data
            qual = ".".join([*scopes[:k], head])
            d = f.by_qual.get(qual)
            if d is not None and (d == within or (k and d.kind == "method")):
                continue  # a bare name never means a method, nor (`Cmd.parse = ...` calling `parse`) itself
            if d is not None:
                return self._walk([d], parts[1:], f) if len(parts) > 1 else [d]
        if depth > MAX_DEPTH:
            return []
        for k in range(len(parts), 0, -1):
            bound = ".".join(parts[:k])
            if bound in f.imports:
                module, attr = f.imports[bound]
                start = self._imported(f, module, attr, bound, depth)
                if start:
                    return self._walk(start, parts[k:], f) if k < len(parts) else \
                        [t for t in start if isinstance(t, Def)] or self._module_export(start, bound)
        for module in reversed(f.stars):  # the last star import of a name wins
            for p in self._module_files(f.path, module):
                g = self.files.get(p)
                if g is not None and g.path != f.path:
                    found = self._lookup(g, parts[:1], None, depth + 1)
                    if found:
                        return self._walk(found, parts[1:], g) if len(parts) > 1 else found
        return []

    def _module_export(self, things: list, bound: str) -> list[Def]:
        """What calling a JS module binding runs (`const parse = require('./parse'); parse(x)`): the
        module's top-level definition of that name, else of the file's name, else its only one."""
        out: list[Def] = []
        for t in things:
            for p in t if isinstance(t, tuple) else ():
                g = self.files.get(p)
                if g is None or not p.endswith(_JS_EXTS):
                    continue
                stem = posixpath.basename(p).split(".", 1)[0]
                tops = [x for x in g.defs if "." not in x.qual and x.kind in ("class", "function")]
                pick = [x for x in tops if x.qual == bound] or [x for x in tops if x.qual == stem] or \
                    (tops if len(tops) == 1 else [])
                out.extend(pick[:1])
        return out

    def _imported(self, f: _File, module: str, attr: str, bound: str, depth: int) -> list:
        paths = self._module_files(f.path, module)
        if not attr:
            return [tuple(paths)] if paths else []
        out: list = []
        for p in paths:
            g = self.files.get(p)
            if g is None:
                continue
            name = bound if attr == "default" else attr
            d = g.by_qual.get(name)
            if d is not None:
                out.append(d)
            elif g.path != f.path:  # re-exported by an import or a star import
                out.extend(self._lookup(g, [name], None, depth + 1))
            elif attr == "default":
                tops = [x for x in g.defs if "." not in x.qual and x.kind in ("class", "function")]
                if len(tops) == 1:
                    out.append(tops[0])
        if not out and f.path.endswith(_PY_EXTS):  # `from pkg import submodule`
            sub = self._module_files(f.path, module + ("." if module.endswith(".") else ".") + attr)
            if sub:
                out.append(tuple(sub))
        return out

    def _module_files(self, path: str, module: str) -> list[str]:
        if path.endswith(_PY_EXTS):
            return self._py_module_files(path, module)
        return self._js_module_files(path, module)

    def _py_module_files(self, path: str, module: str, package: bool = False) -> list[str]:
        if not module.startswith("."):
            return self.py_modules.get(module, [])[:3]
        level = len(module) - len(module.lstrip("."))
        rest = module[level:]
        base = posixpath.dirname(path)
        if package and posixpath.basename(path) != "__init__.py":  # a submodule of a module file: none
            base = path.rsplit(".", 1)[0]
        for _ in range(level - 1):
            base = posixpath.dirname(base)
        stem = posixpath.join(base, *rest.split(".")) if rest else base
        out = [c for c in (f"{stem}.py", f"{stem}/__init__.py", f"{stem}.pyi", f"{stem}/__init__.pyi")
               if c in self.files]
        return out

    def _js_module_files(self, path: str, module: str) -> list[str]:
        if not module.startswith("."):
            return []
        stem = posixpath.normpath(posixpath.join(posixpath.dirname(path), module))
        if stem in self.files:
            return [stem]
        bare = stem.rsplit(".", 1)[0] if stem.endswith((".js", ".mjs", ".cjs")) else stem  # TS imports `./x.js`
        folder = "" if stem == "." else stem + "/"  # `require('..')` from tests/: the package's own index
        for ext in _JS_EXTS:
            for cand in (bare + ext, f"{folder}index{ext}"):
                if cand in self.files:
                    return [cand]
        return []


def _plain(d: Def) -> tuple:
    """Sort key part: code before tests and stubs, shallower paths first (higher is better)."""
    return (not is_test(d.path), not d.path.endswith((".pyi", ".d.ts")), "." not in d.qual,
            -d.path.count("/"), -len(d.path))


def _same(f: _File, raw: str) -> bool:
    try:
        return f.size == len(raw) and f.raw == raw
    except (TypeError, zlib.error, UnicodeDecodeError):
        return False


def _hook_name(parts: list[str]) -> str:
    """The hook a pluggy relay call names (`config.hook.pytest_x`, `self.ihook.pytest_x`,
    `hook.pytest_x.call_historic`), or "". Hook names carry their project's prefix (`pytest_`, `tox_`):
    a bare `self.hook.call()` on some other object is not a relay."""
    for i, p in enumerate(parts[:-1]):
        if p in ("hook", "ihook"):
            name = parts[i + 1]
            return name if "_" in name.strip("_") else ""
    return ""


def _load(path: str, raw: str) -> _File | None:
    """A file's held part (the names its definitions and sites end in, its import aliases) from its JSON;
    None for JSON that does not parse."""
    try:
        data = json.loads(raw)
        zraw = zlib.compress(raw.encode("utf-8"), 1)
        defs = data.get("d", [])
        n = len(defs)
        def_names = dict.fromkeys(sys.intern(str(q).rsplit(".", 1)[-1]) for q, *_rest in defs)
        call_tails = dict.fromkeys(sys.intern(str(callee).rsplit(".", 1)[-1]) for callee, _line, _w in data.get("c", []))
        ref_tails = dict.fromkeys(sys.intern(str(name).rsplit(".", 1)[-1]) for name, _line, w in data.get("r", [])
                                  if 0 <= w < n)
        imports: dict[str, str] = {}
        for bound, _module, attr, _line in data.get("i", []):
            if attr != "*":
                imports.setdefault(bound, attr)
    except (TypeError, ValueError, AttributeError):
        return None
    aliases = tuple((sys.intern(attr), sys.intern(bound.rsplit(".", 1)[-1])) for bound, attr in imports.items()
                    if attr and attr not in ("default", bound))
    return _File(path, zraw, len(raw), tuple(def_names), tuple(call_tails), tuple(ref_tails), aliases,
                 registers=bool(data.get("g")),
                 labels=tuple(sys.intern(str(row[6])) for row in defs if len(row) > 6 and row[6]))


def _body(path: str, data: dict) -> _Body:
    defs = [Def(path, str(q), sys.intern(str(k)), int(a), int(b), tuple(bases or ()), i, str(rest[0]) if rest else "",
                str(rest[1]) if len(rest) > 1 else "")
            for i, (q, k, a, b, bases, *rest) in enumerate(data.get("d", []))]
    calls = [Call(path, int(line), str(callee), defs[w] if 0 <= w < len(defs) else None)
             for callee, line, w in data.get("c", [])]
    imports: dict[str, tuple[str, str]] = {}
    stars: list[str] = []
    for bound, module, attr, _line in data.get("i", []):
        if attr == "*":
            stars.append(module)
        else:
            imports.setdefault(bound, (module, attr))
    by_qual: dict[str, Def] = {}
    for d in defs:
        by_qual.setdefault(d.qual, d)
    assigns = {(int(w), str(var)): str(callee) for var, callee, w in data.get("a", [])}
    refs = [Call(path, int(line), str(name), defs[w]) for name, line, w in data.get("r", []) if 0 <= w < len(defs)]
    registrations = [(str(registry), tuple(map(str, types)), defs[w]) for registry, types, w in data.get("g", [])
                     if 0 <= w < len(defs)]
    params: dict[int, dict[str, list[str]]] = {}
    for name, values, w in data.get("p", []):
        params.setdefault(int(w), {}).setdefault(str(name), list(map(str, values)))
    return _Body(defs, calls, refs, imports, stars, by_qual, assigns, registrations, params)


_CACHE_ATTR = "_code_graph"


def graph_for(store) -> CodeGraph:
    """The code graph of the store's open table version, built once per version and kept on the store."""
    version = store.table_version()
    cached = getattr(store, _CACHE_ATTR, None)
    if cached is not None and cached[0] == version:
        return cached[1]
    rows = getattr(store, "file_graph_rows", None)  # streamed: the JSON is not held twice while the graph is built
    graph = CodeGraph.from_rows(rows() if callable(rows) else store.file_graphs(), cached[1] if cached is not None else None)
    setattr(store, _CACHE_ATTR, (version, graph))
    return graph
