"""`diagnose`: from a failed command's output to the few live spans of the repo it is about.

Evidence, each with the reason it is evidence:
- what the user just changed: uncommitted hunks of the code under test, last-commit hunks of files
  on the failure's path;
- the traceback's repo frames, innermost first, library and test-harness frames last;
- the definitions of names the error is about (`has no attribute X`, `unexpected keyword argument Y`,
  ...), or the nearest existing name when the repo does not define it;
- the raise site of the message (the source holds a template: its constant fragments are looked up
  verbatim and the chunk sharing the longest run of message words wins), and of the repo's own
  exception class;
- the code under test: definitions of what the failing assertion and the failing test call.
Lookups go through the store in a few single passes (definitions, literals); one ranked search runs
only when nothing else was found. `policy.select` then keeps the few strongest, from the live files.
"""
from __future__ import annotations

import functools
import re
import time
from collections import Counter
from collections.abc import Mapping
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from hippo.core import pathkind
from hippo.core.errors import BadQueryError
from hippo.core.secrets import redact
from hippo.push.diagnosis import changes, policy, runners
from hippo.push.diagnosis.evidence import Evidence, LiveFiles, body_of, definition_body, definition_line
from hippo.push.diagnosis.gate import hit_reason
from hippo.push.diagnosis.index_api import LOOKUP_ERRORS, DiagnosisIndex
from hippo.push.diagnosis.signals import Signals, extract, shared_run, template_fragments
from hippo.retrieval.namematch import closest_name

if TYPE_CHECKING:
    from hippo.retrieval.codegraph import CodeGraph

MIN_RUN_CHARS = 10  # a shared run shorter than this ("is not") is no evidence
MAX_FRAMES = 6
MAX_CHANGED_FILES = 8  # a working tree changed in more files than this is a refactor, not one edit
MAX_NAMES = 24
DEF_LIMIT = 3  # definitions kept per name
MESSAGE_ROWS = 6  # chunks kept per message fragment
TITLE_ROWS = 2  # chunks kept per quoted test title
FOLLOW_PER_DEF = 3  # callees followed per definition of what the failing line or test calls
DEF_LINES = 8  # a definition is shown from its header: the signature says most
FRAME_LINES = 16
OUTER_FRAME_LINES = 9
_RAISE_WORDS = re.compile(r"\b(?:raise|throw|fail|panic|reject|abort|bail|Err|errorf|Errorf|error)\b|Error\(|Exception\(")
# messages written by the test harness, not by the code under test: their text has no raise site
_HARNESS_MESSAGE = re.compile(r"^(?:assert\b|expect\(|Expected\b|expected\b|Lists differ|\S+ != \S+|AssertionError\b|"
                              r"assertion failed|Error: expect|DID NOT (?:RAISE|WARN)\b)")

# an assertion failed: the error a test's check raises, not one the code under test raises
_ASSERTION_TYPE = re.compile(r"(?:[\w$]+\.)*(?:AssertionError|AssertionFailedError|AssertError|Failed)")
# a failing line that is one call of a method or function (`result.stdout.fnmatch_lines([...])`), not an
# `assert` or `expect(...)` written in the test: the callee is the check that failed
_CHECK_CALL = re.compile(r"(?:await\s+)?((?:[A-Za-z_$][\w$]*\.)*([A-Za-z_$][\w$]*))\s*\(")


def diagnose(searcher: DiagnosisIndex, request: dict, mode: str = "hybrid") -> dict:
    """The diagnose op: {"error", "cwd", "exclude"?, "budget"?} -> {"query", "hits", "meta", "message"}.

    `request["signals"]`, when the caller already parsed the error (respond.py, in the same process: the
    gate needed it), is that parse; the error text is read once per failure."""
    started = time.perf_counter()
    root = Path(searcher.root)
    sig = request.get("signals")
    if not isinstance(sig, Signals):
        sig = extract(str(request.get("error") or ""), cwd=str(request.get("cwd") or root), root=str(root))
    live = LiveFiles(root, searcher.state)
    collector = Collector(searcher, sig, live, mode)
    found = collector.collect()
    budget = policy.code_budget(int(request.get("budget") or policy.SNIPPET_BUDGET), len(collector.pointers))
    chosen = policy.select(found, live, sig.text, set(request.get("exclude") or ()), budget=budget)
    hits = _hits(searcher, live, chosen)
    candidates = _pointers(collector.pointers, hits)
    if not hits:  # pointers alone: none to what the traceback already prints
        candidates = [c for c in candidates if not any(p == c["path"] and c["start_line"] <= n <= c["end_line"]
                                                       for p, n, _ in collector.frames)]
    meta = {"total_hits": len(found), "returned_hits": len(hits),
            "latency_ms": int((time.perf_counter() - started) * 1000),
            "search_strategy": "error diagnosis (frames, recent changes, definitions, message literals)",
            "indexed_commit": (searcher.state.indexed_commit or "")[:12]}
    return {"query": _summary(sig), "hits": hits, "candidates": candidates, "meta": meta, "message": None}


def _pointers(pointers: list[dict], hits: list[dict]) -> list[dict]:
    """Suspects not shown as code, as `<candidate>` pointers (none that a shown span already covers)."""
    out = []
    for p in pointers:
        if any(h["path"] == p["path"] and h["start_line"] <= p["end_line"] and p["start_line"] <= h["end_line"]
               for h in hits):
            continue
        out.append(p)
    return out[:policy.SUSPECT_POINTERS]


_BY_NAME: list = [None, 0, {}]  # (files dict, its size, file name -> paths), rebuilt when the index's files change


def by_name(files: Mapping) -> dict[str, list[str]]:
    """Indexed paths by file name, built once per index state (not once per failure: a traceback's
    cwd-relative frames used to cost a scan of every indexed path each)."""
    if _BY_NAME[0] is not files or _BY_NAME[1] != len(files):
        index: dict[str, list[str]] = {}
        for f in files:
            index.setdefault(f.rpartition("/")[2], []).append(f)
        _BY_NAME[:] = [files, len(files), index]
    return _BY_NAME[2]


class Collector:
    """Gathers candidate evidence for one failure."""

    def __init__(self, searcher: DiagnosisIndex, sig: Signals, live: LiveFiles, mode: str) -> None:
        self.searcher, self.sig, self.live, self.mode = searcher, sig, live, mode
        # what the runner's output says, read once: the failing tests and the source lines it quotes
        self.tests = runners.failing_tests(sig.text)
        self.quoted = runners.quoted_source(sig.text)
        self.literals: dict[str, list[dict]] | None = None  # the one literal scan's answers (_message_lookup)
        self.files = searcher.state.files  # path -> record: membership only
        self.items: list[Evidence] = []
        self.pointers: list[dict] = []  # ranked suspects beyond those offered as code
        self.on_path: set[str] = set()  # files the failure runs through (frames, tests, definitions)
        self.frames: list[tuple[str, int, str]] = []

    def collect(self) -> list[Evidence]:
        self.diffs = changes.Pending(Path(self.searcher.root))  # git stats the whole tree: let it run meanwhile
        frames = self.frames = self._frames()
        tests = self._failing_tests()
        literals = self._message_lookup()
        changed = self._changes()
        self._definitions(frames, tests, changed)
        self._suspects(frames, tests)
        self._message_sites(literals)
        self._last_commit()
        if not self.items:
            self._search_fallback()
        return self.items

    # --- where the failure ran --------------------------------------------------------------------
    def _resolve(self, path: str) -> str | None:
        if path in self.files:
            return path
        if not path or path.startswith("/"):
            return None
        matches = [f for f in by_name(self.files).get(path.rpartition("/")[2], ())
                   if f.endswith("/" + path) and f in self.files]
        return matches[0] if len(matches) == 1 else None

    def _unit(self, path: str, line: int) -> tuple[int, int, str, str]:
        """(start, end, language, indexed text of `line`) of the innermost indexed chunk at `line`; a
        window around it when the index has none or the file changed since indexing."""
        rows = [] if self.live.changed_since_index(path) else self.searcher.chunks_at(path, line)
        if not rows:
            return max(1, line - 8), line + 12, _language(path), ""
        row = min(rows, key=lambda r: r["end_line"] - r["start_line"])
        text = row["text"].split("\n")
        at = line - row["start_line"]
        return row["start_line"], row["end_line"], row.get("language") or _language(path), text[at] if 0 <= at < len(text) else ""

    def _frames(self) -> list[tuple[str, int, str]]:
        """Repo frames as (path, line, func), innermost first; source frames become evidence here."""
        locs = [loc for loc in self.sig.repo_locations if loc.kind in ("frame", "diagnostic", "test")]
        text = self.sig.text
        # pytest prints `path:N: in func` outermost first, like a Python traceback; JS, Go and Rust
        # stacks print innermost first (signals already reversed `File "..."` frames)
        if re.search(r"^\S+\.py:\d+: in \S", text[:200_000], re.M):
            py = [loc for loc in locs if loc.path.endswith(".py") and loc.kind == "frame"]
            rest = [loc for loc in locs if loc not in py]
            locs = list(reversed(py)) + rest
        out: list[tuple[str, int, str]] = []
        n_src = 0
        for loc in locs:
            path = self._resolve(loc.path)
            if path is None or (path, loc.line) in {(p, n) for p, n, _ in out}:
                continue
            out.append((path, loc.line, loc.func))
            self.on_path.add(path)
            if len(out) > MAX_FRAMES * 2:
                break
        for path, line, _func in out[:MAX_FRAMES * 2]:
            start, end, lang, _ = self._unit(path, line)
            if pathkind.is_test(path):
                self.items.append(Evidence(path, start, end, line, "the failing test", policy.W_TEST, language=lang))
                continue
            if n_src >= MAX_FRAMES:
                continue
            why = "where the failure was raised (innermost frame)" if n_src == 0 else f"frame {n_src + 1} of the traceback"
            weight = policy.W_RAISE if n_src == 0 else policy.W_FRAME + 12 - 4 * n_src  # frame 2 before the failing line's callees
            # outer frames show less around their line, so a deep traceback's next frames still fit
            self.items.append(Evidence(path, start, end, line, why, weight, language=lang,
                                       max_lines=FRAME_LINES if n_src == 0 else OUTER_FRAME_LINES))
            n_src += 1
        return out

    def _failing_tests(self) -> list[runners.FailingTest]:
        tests = self.tests
        for t in tests:
            p = self._resolve(t.path) if t.path else None
            if p:
                self.on_path.add(p)
        return tests

    # --- what the user just changed ----------------------------------------------------------------
    def _changes(self) -> list[str]:
        """Uncommitted hunks of indexed files; returns the changed test lines (what they call matters)."""
        hunks = [h for h in self.diffs.working_tree() if h.path in self.files]
        test_lines: list[str] = []
        src = [h for h in hunks if not pathkind.is_test(h.path) and not pathkind.reads_as_doc(h.path)]
        n_files = len({h.path for h in src})
        for h in hunks:
            lines = self.live.lines(h.path) or []
            if pathkind.is_test(h.path):
                test_lines.extend(lines[h.start - 1:h.end][:60])
                continue
            if pathkind.reads_as_doc(h.path):
                continue
            start, end, lang, _ = self._unit(h.path, h.start)
            weight = policy.W_CHANGED if n_files <= MAX_CHANGED_FILES else policy.W_FRAME
            if h.path in self.on_path:
                weight += 5
            self.items.append(Evidence(h.path, start, max(end, h.end), h.start, "changed in your working tree", weight,
                                       language=lang))
            self.on_path.add(h.path)
        return test_lines

    def _assertion_failed(self) -> bool:
        return any(_ASSERTION_TYPE.fullmatch(e.etype) for e in self.sig.errors[:2])

    def _checks(self, lines: list[str]) -> set[str]:
        """The checks that failed: when an assertion fails on a line that is one call (`result.stdout.
        fnmatch_lines([...])`, `t.equal(a, b)`), that call is the test's check, a helper of the test
        framework even where it lives in the repository; its code says nothing of the bug (the calls in
        its arguments still do)."""
        if not self._assertion_failed():
            return set()
        out: set[str] = set()
        for line in lines:
            text = line.strip()
            m = _CHECK_CALL.match(text)
            if m and not text.startswith(("assert", "expect")):
                out.add(m.group(2))
        return out

    def _last_commit(self) -> None:
        for h in self.diffs.last_commit():
            if h.path not in self.on_path or pathkind.is_test(h.path) or pathkind.reads_as_doc(h.path):
                continue
            start, end, lang, _ = self._unit(h.path, h.start)
            self.items.append(Evidence(h.path, start, max(end, h.end), h.start, "changed in the last commit",
                                       policy.W_LAST_COMMIT, language=lang))

    # --- definitions: names in the error, what the failing test calls ------------------------------
    def _definitions(self, frames, tests, changed_test_lines: list[str]) -> None:
        wanted: dict[str, tuple[float, str]] = {}  # name -> (weight, why)

        def want(name: str, weight: float, why: str) -> None:
            if name not in wanted or wanted[name][0] < weight:
                wanted[name] = (weight, why)

        refs = runners.error_names([f"{e.etype}: {e.message}" for e in self.sig.errors[:4]] + [self.sig.text[-4000:]])
        for ref in refs:
            if ref.kind != "module":
                want(ref.name, policy.W_NAMED, f"definition of {ref.name}")
        # the failing line: frames inside test files, and the lines the runner quotes
        asserted = [self._line(p, n) for p, n, _ in frames if pathkind.is_test(p)]
        asserted += self.quoted
        checks = self._checks([a for a in asserted if a])
        for name in runners.called_names([a for a in asserted if a]):
            if name not in checks:
                want(name, policy.W_ASSERTED, f"definition of {name}, called by the failing line")
        # the failing tests' bodies, and the test lines just changed
        names = [t.name for t in tests if re.fullmatch(r"[A-Za-z_$][\w$]*", t.name)]
        test_defs = self._lookup(names, tests_too=True) if names else {}
        body: list[str] = []
        for t in tests:
            for row in test_defs.get(t.name, [])[:1]:
                body.extend(body_of(row["text"], t.name))
            if not test_defs.get(t.name) and t.name and " " in t.name:  # a jest/mocha title: find its `it(`
                body.extend(self._titled_test(t))
        for name in runners.called_names(body)[:MAX_NAMES]:
            want(name, policy.W_CALLED, f"definition of {name}, called by the failing test")
        for name in runners.called_names(changed_test_lines)[:MAX_NAMES]:
            want(name, policy.W_IMPORTED + 5, f"definition of {name}, called by a test you changed")
        if not wanted:
            return
        defs = self._lookup(list(wanted)[:MAX_NAMES * 2])
        for name, (weight, why) in wanted.items():
            rows, defined = defs.get(name) or [], name
            if not rows and weight >= policy.W_NAMED:
                near = self._nearest(name)
                if near:
                    rows, defined = self._lookup([near]).get(near) or [], near
                    why = f"{near}: the nearest existing name to {name}"
            for k, row in enumerate(rows[:DEF_LIMIT]):
                w = policy.called_weight(name, weight, row, frames) - 3 * k
                self._add_row(row, row["start_line"], why, w, anchor_name=defined, max_lines=DEF_LINES)
        self._follow_calls(wanted, defs, frames)

    def _suspects(self, frames, tests: list[runners.FailingTest]) -> None:
        """Definitions the failing tests reach through the code graph (diagnosis/suspects.py): the best
        become evidence with code, the next ones pointers."""
        from hippo.push.diagnosis import suspects

        graph = self.graph
        if graph is None:
            return
        starts = suspects.test_defs(graph, tests, frames, self._resolve)
        if not starts:
            return
        setup = suspects.setup_defs(graph, starts, lambda d: self._body(d)[:2000])
        reached = suspects.walk(graph, starts + setup)
        reached.update(suspects.picked(graph, "\n".join(self._decorators(d) + self._body(d) for d in starts),
                                       reached, starts[0]))
        reached.update(suspects.named_like(graph, starts, reached))
        if not reached:
            return
        test_names = " ".join(d.qual for d in starts)
        clues = self.clues - suspects.words(test_names)
        written = suspects.identifiers("\n".join(self._body(d) for d in starts))
        ranked = suspects.rank(reached, clues, suspects.words(test_names), frames, self._body, self._history(),
                               written)
        shown = 0
        for s in suspects.capped(ranked)[:policy.SUSPECT_SHOWN + policy.SUSPECT_POINTERS]:
            d = s.d
            weight = policy.suspect_weight(s.score)
            # a definition found by its name alone, with no path from the test, is named but never shown
            if shown < policy.SUSPECT_SHOWN and s.distance >= policy.SUSPECT_MIN_SHOWN_DISTANCE and \
                    s.how != suspects.NAMED_LIKE and not self._covered(d, weight):
                shown += 1
                focus = _best_line(self.live.scoring_lines(d.path) or [], d.start, d.end, clues)
                self.items.append(Evidence(d.path, d.start, d.end, focus, s.why(), weight,
                                           language=_language(d.path), max_lines=policy.MAX_SUSPECT_LINES,
                                           share=1 / policy.SUSPECT_SHOWN))
                self.on_path.add(d.path)
            self.pointers.append({"path": d.path, "start_line": d.start, "end_line": d.end, "symbol": d.qual,
                                  "score": round(min(1.0, max(0.0, s.score) / 100), 2), "why": s.why()})

    @functools.cached_property
    def graph(self) -> CodeGraph | None:
        """The index's code graph, or None when the index cannot give one (the other evidence stands)."""
        from hippo.retrieval.codegraph import graph_for

        try:
            return graph_for(self.searcher.store)
        except LOOKUP_ERRORS:
            return None

    @functools.cached_property
    def clues(self) -> frozenset[str]:
        """Words of the failure: the error messages, the source lines the runner quotes, the failing lines
        (read after collect() has the frames)."""
        from hippo.push.diagnosis.suspects import words

        text = [f"{e.etype} {e.message}" for e in self.sig.errors[:3]] + self.quoted
        text += [self._line(p, n) for p, n, _ in self.frames if pathkind.is_test(p)]
        return words("\n".join(text))

    def _covered(self, d, weight: float) -> bool:
        """Whether evidence about a line of definition `d` is already collected (what the failing line
        calls, a frame inside it): then no shown slot is spent on the suspect, and that evidence weighs
        at least what the suspect does."""
        covering = [ev for ev in self.items if ev.path == d.path and d.start <= ev.focus <= d.end]
        for ev in covering:
            ev.weight = max(ev.weight, weight)
        return bool(covering)

    def _history(self) -> dict:
        """The index's co-change record (read from disk only when its file changed)."""
        from hippo.index import cochange

        return cochange.load_cached(self.searcher.index_dir)

    def _decorators(self, d) -> str:
        """The decorator lines above a definition (`@pytest.mark.sphinx('doctest', ...)`): what a test is
        run with."""
        lines = self.live.scoring_lines(d.path) or []
        i = d.start - 1
        while i > 0 and i > d.start - 12 and lines[i - 1].strip() and not lines[i - 1].lstrip().startswith(("def ", "class ")) \
                and (lines[i - 1].lstrip().startswith("@") or lines[i - 1][:1] in (" ", "\t", ")")):
            i -= 1
        return "\n".join(lines[i:d.start - 1])

    def _body(self, d) -> str:
        """A definition's live text for scoring it (unredacted: never shown, see LiveFiles.scoring_lines)."""
        lines = self.live.scoring_lines(d.path) or []
        return "\n".join(lines[d.start - 1:min(d.end, d.start + 200)])

    def _follow_calls(self, wanted: dict[str, tuple[float, str]], defs: dict[str, list[dict]], frames) -> None:
        """One level below what the failing line and test call: the definitions of the names their
        definitions call, the caller's own module first. Skipped for a definition the traceback already
        runs through (its frames show the deeper calls)."""
        follow: dict[str, tuple[float, str, str]] = {}  # callee -> (weight, why, the caller's path)
        for name, (weight, _why) in wanted.items():
            if weight >= policy.W_NAMED:
                continue
            for row in (defs.get(name) or [])[:1]:
                if any(p == row["path"] and row["start_line"] <= n <= row["end_line"] for p, n, _ in frames):
                    continue
                for k, callee in enumerate(runners.callees(definition_body(row["text"], name), name)[:FOLLOW_PER_DEF]):
                    if callee not in wanted and callee not in follow:
                        follow[callee] = (weight - 6 - k, f"definition of {callee}, called by {name}", row["path"])
        if not follow:
            return
        found = self._lookup(list(follow)[:MAX_NAMES])
        for callee, (weight, why, path) in follow.items():
            rows = sorted(found.get(callee) or [], key=lambda r: r["path"] != path)  # stable: same module first
            for row in rows[:1]:  # _add_row finds its header line
                self._add_row(row, row["start_line"], why, weight, anchor_name=callee, max_lines=DEF_LINES)

    def _line(self, path: str, line: int) -> str:
        """A failing line's text, read for the names it calls and its words (unredacted: the names go out
        only inside a why, which is redacted when rendered)."""
        lines = self.live.scoring_lines(path) or []
        return lines[line - 1] if 0 < line <= len(lines) else ""

    def _titled_test(self, t: runners.FailingTest) -> list[str]:
        """The body of a jest/mocha test named by its title: its `it('title'` found by the one literal scan."""
        terms = _title_terms(t)
        found = self.literals if self.literals is not None and all(q in self.literals for q in terms) else \
            self.searcher.store.literal_lookup(terms, TITLE_ROWS, in_tests=terms)
        out: list[str] = []
        for term in terms:
            for row in found.get(term, [])[:TITLE_ROWS]:
                if pathkind.is_test(row["path"]):
                    out.extend(body_of(row["text"], t.name.strip()[:200]))
        return out

    def _lookup(self, names: list[str], tests_too: bool = False) -> dict[str, list[dict]]:
        """Definitions of `names` from the store's symbol index, code under test before tests."""
        try:
            found = self.searcher.store.identifier_lookup(names, DEF_LIMIT * 3)
        except LOOKUP_ERRORS:  # a lookup failing leaves the other evidence
            return {}
        out = {}
        for name, rows in found.items():
            head: dict[str, dict] = {}  # a long definition is several chunks: keep the one with its header
            for r in rows:
                if (tests_too or not pathkind.is_test(r["path"])) and (
                        r["path"] not in head or r["start_line"] < head[r["path"]]["start_line"]):
                    head[r["path"]] = r
            # the implementation instead of its stub or declaration file (`.pyi`, `.d.ts`): a stub holds no behaviour
            kept = [r for r in head.values() if not pathkind.is_type_declaration(r["path"])] or list(head.values())
            out[name] = sorted(kept, key=lambda r: (pathkind.reads_as_doc(r["path"]), pathkind.is_test(r["path"])))
        return out

    def _nearest(self, name: str) -> str | None:
        try:
            names = self.searcher.store.symbol_names()  # cached by the store per table version
        except LOOKUP_ERRORS:
            names = []
        close = closest_name(name, names)
        return close if close != name else None

    def _add_row(self, row: dict, focus: int, why: str, weight: float, anchor_name: str = "",
                 max_lines: int = 16) -> None:
        path = row["path"]
        text = row["text"].split("\n")
        at = focus - row["start_line"]
        anchor = text[at].strip()[:120] if 0 <= at < len(text) else ""
        if self.live.changed_since_index(path) and anchor_name:
            lines = self.live.lines(path) or []
            line = definition_line(lines, anchor_name, near=row["start_line"])
            if line is None:
                return  # the definition is gone from the live file: never show the indexed text
            n = row["end_line"] - row["start_line"]
            self.items.append(Evidence(path, line, line + n, line, why, weight, language=row.get("language") or "",
                                       max_lines=max_lines))
            return
        start, end = row["start_line"], row["end_line"]
        if anchor_name and focus == start:
            d = self._graph_def(path, anchor_name, start, end)
            if d is not None:  # from its header line: the comments above it say little
                start = focus = d.start
            elif (at := definition_line(text, anchor_name)) is not None:
                start = focus = row["start_line"] + at - 1
            start, end, focus = self._definition_focus(path, d, start, end, max_lines)
            anchor = text[focus - row["start_line"]].strip()[:120] if focus <= row["end_line"] else ""
        self.items.append(Evidence(path, start, end, focus, why, weight, anchor=anchor,
                                   from_index=True, language=row.get("language") or "", max_lines=max_lines))
        self.on_path.add(path)

    def _graph_def(self, path: str, name: str, lo: int, hi: int):
        """The code graph's definition `name` of `path` that starts within lines lo..hi (a chunk), or None."""
        graph = self.graph
        f = graph.files.get(path) if graph is not None else None
        return next((d for d in (f.defs if f else ()) if d.name == name and lo <= d.start <= hi), None)

    def _definition_focus(self, path: str, d, start: int, end: int, max_lines: int) -> tuple[int, int, int]:
        """(start, end, focus) for definition `d` (the graph's, or None) shown from line `start`: its header,
        unless the definition runs past the lines shown and its line most like the failure lies below them;
        then the lines around that one (a bug inside a long function, or in a function nested in it, is
        seldom in its first lines). A short definition ends where it ends, not where its chunk does.
        Only line numbers come out: the unredacted scoring text serves."""
        lines = self.live.scoring_lines(path) or []
        if d is None or d.kind not in ("function", "method", "data") or d.end > len(lines) or d.end < start:
            return start, end, start  # a class shows its header: its methods are suspects of their own
        if d.end - start + 1 <= max_lines:
            return start, d.end, start  # the whole definition and not the next one's head
        best = _best_line(lines, start, d.end, self.clues)
        if best - start < max_lines * 2 // 3:
            return start, end, start
        return start, d.end, best

    # --- raise sites of the message -------------------------------------------------------------------
    def _message_terms(self) -> tuple[list, list[str], list[str]]:
        """(errors with a message of their own, exception class names, literal terms to look up)."""
        errors = [e for e in self.sig.errors[:2] if e.message and not _HARNESS_MESSAGE.match(e.message)]
        frags = [f for e in errors for f in lookup_fragments(e.message)]
        classes = [e.etype.rsplit(".", 1)[-1] for e in self.sig.errors[:2]]
        classes = [c for c in classes if re.fullmatch(r"[A-Z][\w$]{3,}", c) and not _builtin_error(c)]
        return errors, classes, frags + [f"{c}(" for c in classes]

    def _message_lookup(self) -> dict[str, list[dict]] | None:
        """The literal lookup of the message's fragments and the failing tests' titles: one pass over the
        table's text per failure (each term keeps its own first rows), run while git diffs the tree."""
        terms = self._message_terms()[2]
        titles = [q for t in self.tests if " " in t.name for q in _title_terms(t)]
        self.literals = None
        if not terms and not titles:
            return None
        try:
            self.literals = self.searcher.store.literal_lookup(terms + titles, MESSAGE_ROWS, in_tests=titles)
        except LOOKUP_ERRORS:
            return None
        return self.literals if terms else None

    def _message_sites(self, found: dict[str, list[dict]] | None) -> None:
        errors, classes, _ = self._message_terms()
        if found is None:
            return
        best: dict[str, tuple[float, dict, int, bool]] = {}  # row id -> (score, row, line, raising)
        for err in errors:
            for frag in lookup_fragments(err.message):
                for row in found.get(frag, []):
                    score, raising, line = _run_score(row, err.message)
                    if score and (row["id"] not in best or best[row["id"]][0] < score):
                        best[row["id"]] = (score + (20 if raising else 0), row, line, raising)
        sites = sorted(best.values(), key=lambda t: t[0], reverse=True)[:3]
        # the traceback runs through one of them: the same message raised elsewhere (`first()` beside
        # `last()`) is another place that did not run
        ran = [t for t in sites if any(p == t[1]["path"] and t[1]["start_line"] <= n <= t[1]["end_line"]
                                       for p, n, _ in self.frames)]
        # the traceback shows where the code under test ran: a chunk that only quotes the message (a doctest's
        # output, a comment, an interpreter message such as `'NoneType' object is not iterable` that no
        # repository code raises) says less than those frames
        code_frames = not ran and any(not pathkind.is_test(p) for p, _n, _f in self.frames)
        for score, row, line, raising in ran or sites:
            # a message composed inside its own exception class says what, not where: the places
            # raising that class come first then
            composed = any(re.search(r"\bclass\s+" + re.escape(c) + r"\b", row["text"]) for c in classes)
            if composed:
                self._add_row(row, line, "the exception class that composes the message", policy.W_MESSAGE - 15)
            elif raising or (not code_frames and _is_code(row["path"])):
                self._add_row(row, line, "raise site of the message", policy.W_MESSAGE + min(score, 60) / 10)
            else:
                self._add_row(row, line, "quotes the message", policy.W_FRAME - 5)
        for c in classes:
            if _ASSERTION_TYPE.fullmatch(c):
                continue  # a failed check (`pytest.fail` raises Failed): its other raisers are other checks
            throwers = [r for r in found.get(f"{c}(", [])
                        if re.search(r"\b(?:raise|throw|new)\s+(?:\w+\.)*" + re.escape(c) + r"\(", r["text"])]
            if 0 < len(throwers) <= 4:
                for row in throwers:
                    line = _raise_line(row, c)
                    self._add_row(row, line, f"raises {c}", policy.W_MESSAGE - 10)

    def _search_fallback(self) -> None:
        """Nothing located the failure: one ranked search for the message, gated on its literal text."""
        if not self.sig.errors:
            return
        e = self.sig.errors[0]
        try:
            resp = self.searcher.search(f"{e.etype}: {e.message}"[:300], keywords=self.sig.identifiers[:3], k=4,
                                        mode=self.mode)
        except BadQueryError:
            return
        except LOOKUP_ERRORS:
            return
        for h in resp.hits:
            if h.stale or hit_reason(h.snippet, h.score, self.sig) != "message-literal":
                continue
            first = next((i for i, t in enumerate(h.snippet.split("\n")) if t.strip()), 0)
            anchor = h.snippet.split("\n")[first].strip()[:120]
            self.items.append(Evidence(h.path, h.start_line, h.end_line, h.start_line + first, "matches the message",
                                       policy.W_IMPORTED, anchor=anchor, from_index=True, language=h.language))


def _title_terms(t: runners.FailingTest) -> list[str]:
    """How a jest/mocha title appears in its test file: quoted as the `it(` argument. Not a quoting the
    source cannot hold verbatim: a title with a backslash or a control character (a data-driven title,
    `it(input, ..)`; in a literal those are escapes), or with the quote itself. Each term nothing holds
    costs a pass over the index's text."""
    title = t.name.strip()[:200]
    if "\\" in title or any(ord(c) < 32 or ord(c) == 127 for c in title):
        return []
    return [f"{q}{title}{q}" for q in ("'", '"', "`") if q not in title]


def lookup_fragments(message: str) -> list[str]:
    """The template fragments, plus the first and last four words of each long one: a long message is often
    one string literal split over lines in the source (`'found no dependencies ' +` / `'a supported
    registry'`), which no whole-fragment lookup finds. The full message ranks the rows found (_run_score)."""
    out = template_fragments(message)
    for frag in list(out):
        words = frag.split()
        if len(words) >= 6:
            for part in (" ".join(words[:4]), " ".join(words[-4:])):
                if len(part) >= 12 and part not in out:
                    out.append(part)
    return out


def _builtin_error(name: str) -> bool:
    return name in {"ValueError", "TypeError", "KeyError", "IndexError", "AttributeError", "RuntimeError",
                    "AssertionError", "Exception", "Error", "NotImplementedError", "StopIteration", "OSError",
                    "RangeError", "ReferenceError", "SyntaxError", "ZeroDivisionError", "NameError", "ImportError"}


def _run_score(row: dict, message: str) -> tuple[float, bool, int]:
    """(score, looks like a raise site in code, file line of the run) of one chunk for a message."""
    run, line = shared_run(message, row["text"])
    if run < MIN_RUN_CHARS:
        return 0.0, False, row["start_line"]
    lines = row["text"].split("\n")
    raising = bool(_RAISE_WORDS.search("\n".join(lines[max(0, line - 4): line + 5])))
    return float(run), raising and _is_code(row["path"]), row["start_line"] + line


def _is_code(path: str) -> bool:
    """Only code raises: a translation catalog (sphinx's 70 `.po` files quote every logged message), a doc or
    a data file that holds the message is never its raise site."""
    from hippo.index.chunking.languages import CODE_LANGUAGES

    return not pathkind.reads_as_doc(path) and _language(path) in CODE_LANGUAGES


def _raise_line(row: dict, name: str) -> int:
    pat = re.compile(r"\b(?:raise|throw|new)\s+(?:\w+\.)*" + re.escape(name) + r"\(")
    for i, text in enumerate(row["text"].split("\n")):
        if pat.search(text):
            return row["start_line"] + i
    return row["start_line"]


def _language(path: str) -> str:
    from hippo.index.chunking.languages import detect_language

    return detect_language(path) or "text"


def _best_line(lines: list[str], start: int, end: int, clues: frozenset[str]) -> int:
    """The line of start..end sharing the most words with the failure, rarer words within the range first
    (the definition's first line when none does): what a long suspect is cut around."""
    from hippo.push.diagnosis.suspects import words

    found = {n: words(lines[n - 1]) & clues for n in range(start, min(end, len(lines)) + 1)}
    spread = Counter(w for ws in found.values() for w in ws)
    best, best_score = start, 0.0
    for n, ws in found.items():
        # a word on every line of a table (`tokens`, `keyword`) tells less than one on a single line
        score = sum(1.0 / spread[w] for w in ws) + len(ws)
        if score > best_score:
            best, best_score = n, score
    return best


def _hits(searcher: DiagnosisIndex, live: LiveFiles, chosen) -> list[dict]:
    """Hit dicts (the search result shape plus `why`), text from the live files."""
    paths = sorted({ev.path for ev, *_ in chosen})
    dates = _dates(searcher, live, paths)
    out = []
    for ev, lo, hi, text in chosen:
        out.append({"id": f"{ev.path}:{lo}-{hi}", "path": ev.path, "start_line": lo, "end_line": hi,
                    "language": ev.language or _language(ev.path), "score": round(min(1.0, policy.adjust(ev) / 100), 2),
                    "snippet": text, "last_modified": dates.get(ev.path, ""), "stale": False, "symbol": "",
                    "truncated": False, "why": redact(ev.why)[0]})  # it may quote a name from the output
    return out


def _dates(searcher: DiagnosisIndex, live: LiveFiles, paths: list[str]) -> dict[str, str]:
    """Last commit date of clean files (the index's cache, per blob), the file's mtime for edited ones."""
    out: dict[str, str] = {}
    clean = {}
    for p in paths:
        rec = searcher.state.files.get(p)
        if rec is not None and rec.blob and not live.changed_since_index(p):
            clean[p] = rec.blob
        else:
            try:
                out[p] = date.fromtimestamp((live.root / p).stat().st_mtime).isoformat()
            except OSError:
                pass
    out.update(searcher.commit_dates.get(clean))
    return out


def _summary(sig: Signals) -> str:
    if sig.errors:
        e = sig.errors[0]
        return f"{e.etype}: {e.message}"[:200]
    if sig.failed_tests:
        return f"failing test {sig.failed_tests[0]}"[:200]
    return "failed command"
