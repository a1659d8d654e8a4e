"""Hybrid retrieval: vector kNN + full-text (raw and code-aware), fused with reciprocal rank fusion, then
keyword boosts, exact and glob filters, down-weighting of tests/vendored code, merging of adjacent chunks,
dynamic top-k and a character budget. Every answer says how fresh it is.

Retrieval goes through `hippo.index.store.Store` (which builds every LanceDB query and all SQL); this module
ranks and fuses what it returns. lancedb/numpy are imported when a Searcher opens, not at module import,
so `from hippo.retrieval.search import Hit` stays cheap for hooks.
"""
from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from hippo.core import gitutil, indexdir
from hippo.core.config import Settings, load_settings
from hippo.core.errors import BadQueryError, DamagedIndexError, NoIndexError
from hippo.core.indexdir import IndexDir
from hippo.core.textutil import query_terms, text_terms
from hippo.index.state import IndexState, load_state
from hippo.retrieval import namematch, pasted, rerank
from hippo.retrieval import rankpolicy as policy
from hippo.retrieval.filerank import FileEvidence, Neighbours, rank_files
from hippo.retrieval.results import Candidate, Hit, SearchResponse

__all__ = ["Searcher", "search", "Hit", "SearchResponse"]

CANDIDATES = 60  # per retriever
DEFINITIONS = 8  # chunks defining each name the query uses
NAMED = 16  # defined names carrying the question's words (namematch) whose definitions join the candidates
NAMED_ROWS = 2  # definitions read per such name
USAGES = 8  # chunks using a name nothing defines that join a how-question's candidates ...
USAGE_SCAN = 120  # ... out of this many holding it (tests and docs included, table order)
HEADER_SCAN_NAMES = 4  # names looked for by their definition line (a class header inside a method's chunk)
MAX_QUERY_CHARS = 2000
TRUNCATION_MARK = "// ... (content truncated)"
MIN_CONFIDENCE = 0.32  # below this for every hit: say "no high-confidence results"
KEEP_CONF_SHARE = 0.55  # a block is shown when its confidence is at least this share of the best one's
ALONE_CONF, ALONE_GAP = 0.85, 0.3  # one very strong hit stands alone when the next is this much weaker
NEAR_DUPLICATE = 0.8  # share of a block's lines another shown block already holds: not shown twice
MAX_CANDIDATES = 10  # pointer lines after the snippets (one per file)
MAX_FILES_NAMED = 12  # snippets' files + pointers: enough for a change that touches several files
MIN_POINTERS = 4  # make room for this many by dropping late repeat blocks of files already shown
PROTECTED_HITS = 5  # ... but never any of the first five snippets
WEAK_POINTERS = 5  # when nothing is confident: a few pointers beside the "no high-confidence results" message
CANDIDATE_FLOOR = 0.3  # a file needs this share of the best file's evidence to be listed ...
CHANGE_FLOOR = 0.1  # ... or this share for a change request, whose answer is files (a co-change partner
# with no matching chunk scores at most rankpolicy.COCHANGE of the best file: under CANDIDATE_FLOOR)
HEADER_REACH = 400  # a hit opening inside a function's body shows its header when it is at most this far above
HEADER_LINES = 4  # ... up to this many header lines (decorators, a signature over several lines)
RESULT_SLOT_CHARS = 220  # XML around one result's snippet (tags, id, lines, language, date): less than it takes


@dataclass
class _Cand:
    row: dict
    rrf: float = 0.0
    cos: float | None = None
    conf: float = 0.0
    final: float = 0.0
    definition: float = 0.0  # defines a name the query uses (rerank.definition_strength)
    logic: int = -1  # lines that decide or do something, counted for how/why questions (rankpolicy.logic_lines)
    named: float = 0.0  # defines a name carrying the question's words (namematch strength)


@dataclass
class _Block:
    """A merged run of chunks on its way to becoming a Hit, with the scores that order and gate it."""

    hit: Hit
    rank: float
    conf: float


def validate_globs(globs: Sequence[str]) -> list[str]:
    """Globs are repo-relative gitignore-style patterns; anything reaching outside the repo is refused.
    One validator serves the CLI, /rag and the MCP tool (rag_args.check_glob)."""
    from hippo.retrieval.rag_args import check_glob

    return [check_glob(g, name="Glob") for g in globs if g and g.strip()]


class StateWatch:
    """Tells a long-lived reader (warm server, MCP server) when state.json changed since it last looked.

    One stat per query: a writer rewrites state.json after every committed batch, so an unchanged stamp
    means the open Searcher is still current.
    """

    def __init__(self, index_dir: Path) -> None:
        self.path = IndexDir(Path(index_dir)).state
        self.seen = self.stamp()

    def stamp(self) -> float | None:
        try:
            return self.path.stat().st_mtime
        except OSError:
            return None

    def changed(self) -> bool:
        now = self.stamp()
        changed, self.seen = now != self.seen, now
        return changed


class Searcher:
    """An open index. Cheap to query many times; the query server keeps one warm.

    Every reader (CLI, MCP, warm server, hooks) opens the index here, so this is where an index dir the
    writer would refuse (a planted `.hippo/`) is refused, and where damage becomes DamagedIndexError.
    """

    def __init__(self, root: Path, settings: Settings | None = None, embedder=None) -> None:
        from hippo.core import integrity
        from hippo.core.integrity import refuse_planted

        self.root = Path(root)
        self.settings = settings or load_settings(self.root)
        self.index_dir = IndexDir.of(self.root, self.settings).path
        refuse_planted(self.root, self.index_dir)
        indexdir.make_private(self.index_dir)  # an index an older hippo left readable to all is closed on open
        self._embedder = embedder
        self.commit_dates = gitutil.CommitDates(self.root)  # shared with the failure diagnosis
        self.state = self._load_state()
        mark = integrity.damage_mark(self.index_dir)
        if mark:  # a reader already found it damaged; the rebuild has not finished yet
            raise DamagedIndexError(mark)
        from hippo.index.store import Store

        self.store = Store(self.index_dir, self.state.dim)
        if not self.store.has_chunks():
            if self.state.chunk_count:  # rows were committed, so the table existed
                self.store.require_chunks()
            raise NoIndexError()

    def _load_state(self) -> IndexState:
        state = load_state(self.index_dir)
        if state is None or not IndexDir(self.index_dir).db.exists():
            raise NoIndexError.at(self.index_dir)
        return state

    def refresh(self) -> None:
        """Pick up the latest committed index version (the writer may have moved on).

        Table first, then state: the writer marks state.json "vectors incomplete" before it adds rows, so a
        state read after the table can only be more cautious than the rows we now see, never less.
        """
        self.store.refresh()  # also empties the store's substring-scan cache
        self.__dict__.pop("_reader", None)  # .hippoignore may have changed too
        state = load_state(self.index_dir)
        if state is None:
            return
        if (state.model_id, state.dim) != (self.state.model_id, self.state.dim):
            # Rebuilt with another model: a long-lived server must not embed queries with the old one.
            from hippo.index.store import Store

            self._embedder = None
            self.store.close()
            self.store = Store(self.index_dir, state.dim)
        self.state = state

    def embedder(self):
        if self._embedder is None:
            from hippo.core.errors import HippoError
            from hippo.index.embedding import load_embedder, model_id_for

            if model_id_for(self.settings.model) != self.state.model_id:
                raise HippoError(f"The index was built with {self.state.model_id} but the configured model is "
                                 f"{self.settings.model}. Run `hippo index` to rebuild.")
            self._embedder = load_embedder(self.settings.model, threads=self.settings.threads)
        return self._embedder

    # --- public ----------------------------------------------------------------------------------
    def search(self, query: str, *, keywords: Sequence[str] = (), globs: Sequence[str] = (), exact: bool = False,
               k: int | None = None, budget_chars: int | None = None, mode: str = "hybrid",
               rerank_ms: int | None = None) -> SearchResponse:
        """Raises DamagedIndexError when the table files are damaged (the caller has the index rebuilt).

        `rerank_ms`: how long the configured cross-encoder may take (None: no limit; hooks pass their budget,
        and a model not loaded yet is then skipped rather than loaded)."""
        with self.store.reading():
            return self._search(query, keywords=keywords, globs=globs, exact=exact, k=k,
                                budget_chars=budget_chars, mode=mode, rerank_ms=rerank_ms)

    def _search(self, query: str, *, keywords: Sequence[str], globs: Sequence[str], exact: bool,
                k: int | None, budget_chars: int | None, mode: str, rerank_ms: int | None = None) -> SearchResponse:
        started = time.perf_counter()
        query = (query or "").strip()
        keywords = [kw.strip() for kw in keywords if kw and kw.strip()]
        if not query and not keywords:
            raise BadQueryError("Empty query: say what you are looking for, e.g. `hippo search \"where are tokens checked\"`.")
        if mode not in ("hybrid", "vector", "keyword"):
            raise BadQueryError(f"Unknown search mode {mode!r} (hybrid, vector, keyword).")
        if exact and not keywords:
            raise BadQueryError("--exact needs at least one --keyword to match.")
        query = query[:MAX_QUERY_CHARS] or " ".join(keywords)
        globs = validate_globs(globs)
        k = max(1, min(int(k or self.settings.default_k), 50))
        budget = int(budget_chars or self.settings.budget_chars)

        from hippo.index.store import Filter

        pred = self._path_filter(globs)
        if pred is not None and not pred.paths:
            return self._respond(query, [], 0, started, mode, f"No indexed files match {', '.join(globs)}.")
        all_rows = self.store.count()
        # state.json says when every row has its vector; only a partial index needs the filtered count
        embedded = all_rows if self.state.vectors_complete else self.store.count(Filter(embedded=True))
        use_vectors = mode in ("hybrid", "vector") and embedded > 0
        # Pasted output (tracebacks, logs): search its message, not its boilerplate (see pasted.py).
        is_pasted = pasted.looks_pasted(query)
        focus = (pasted.focus_text(query) or query) if is_pasted else query
        phrases = pasted.phrases(query) if is_pasted else []
        cands: dict[str, _Cand] = {}
        qvec = None
        if use_vectors:
            qvec = self.embedder().embed_query(focus)
            self._fuse(cands, self.store.nearest(qvec, CANDIDATES, pred),
                       weight=policy.VECTOR_WEIGHT if mode == "hybrid" else 1.0)
        if mode in ("hybrid", "keyword"):
            self._fuse(cands, self.store.fulltext(" ".join([focus, *keywords]), CANDIDATES, pred))
            if phrases:
                self._fuse(cands, self._phrase_scan(phrases, pred))
                self._fuse(cands, self.store.fulltext(" ".join(dict.fromkeys(" ".join(phrases).split())),
                                                      CANDIDATES, pred))
        if keywords:
            self._fuse(cands, self._keyword_scan(keywords, pred, case_sensitive=exact))
        intent = policy.read_intent(query, pasted=is_pasted)
        if intent.names and mode in ("hybrid", "keyword"):
            undefined = self._fuse_definitions(cands, intent, pred)
            if intent.behaviour and undefined:
                self._fuse_usages(cands, undefined, pred)
        if intent.code_question and not intent.symbol and mode in ("hybrid", "keyword"):
            # questions about code only: a reworded statement ("the CLI exits 2 on a bad option") is answered
            # by its text; name matches there outranked it (bench/quality spec rows, 0.85 -> 0.70 R@1)
            self._fuse_named(cands, focus, pred)
        if exact:
            cands = {i: c for i, c in cands.items() if all(kw in c.row["text"] for kw in keywords)}
        total = len(cands)
        self._score(cands.values(), focus, keywords, qvec, phrases, intent)
        if self.settings.rerank_model and cands:
            self._cross_encode(list(cands.values()), focus, rerank_ms)
        hits, message, pointers = self._select(cands.values(), query, k, budget,
                                               query_terms(focus + " " + " ".join(keywords)))
        strategy = {"hybrid": "hybrid (semantic + keyword)", "vector": "semantic only",
                    "keyword": "keyword only"}[mode]
        if mode != "keyword" and not use_vectors:
            strategy = "keyword only (vectors not built yet)"
        resp = self._respond(query, hits, total, started, strategy, message, embedded, all_rows)
        resp.candidates = pointers
        return resp

    def chunks_at(self, path: str, line: int) -> list[dict]:
        """Indexed chunks of `path` that cover `line` (for error frames pointing at a file:line)."""
        return self.store.chunks_at(path, line)

    # --- retrieval -------------------------------------------------------------------------------
    def _path_filter(self, globs: list[str]):
        """A store Filter for the indexed files the globs select (no paths: nothing matches), or None."""
        if not globs:
            return None
        import pathspec

        from hippo.index.store import Filter

        spec = pathspec.PathSpec.from_lines("gitignore", globs)
        return Filter(paths=tuple(p for p in self.state.files if spec.match_file(p)))

    def _phrase_scan(self, phrases: list[str], pred) -> list[dict]:
        """Chunks holding a run of the pasted message's words (one regex pass over the text column)."""
        top = phrases[:12]
        rows = self.store.regex_scan(pasted.phrase_regex(top), CANDIDATES * 3, pred)

        def hits(r: dict) -> int:
            norm = pasted.normalise(r["text"])
            return sum(len(ph) for ph in top if ph in norm)

        return sorted(rows, key=hits, reverse=True)[:CANDIDATES]

    def _keyword_scan(self, keywords: list[str], pred, case_sensitive: bool) -> list[dict]:
        """Chunks holding the keywords (every one, case-sensitive, for --exact; else any)."""
        rows = self.store.substring_scan(keywords, CANDIDATES * 4, pred, case_sensitive=case_sensitive,
                                         require_all=case_sensitive)

        # Chunks holding more of the keywords, and holding them more often, rank first.
        def weight(r: dict) -> int:
            low = r["text"].lower()
            return sum(low.count(kw.lower()) > 0 for kw in keywords) * 1000 + sum(low.count(kw.lower()) for kw in keywords)

        return sorted(rows, key=weight, reverse=True)[:CANDIDATES]

    def _fuse_definitions(self, cands: dict[str, _Cand], intent: policy.Intent, pred) -> list[str]:
        """The chunks defining the names the query uses join the candidates, and every candidate learns
        whether it defines one. The store's symbol index names most definitions; a class whose header the
        chunker merged into its first method's chunk (`Request.__init__`) is found by its header line."""
        wanted = list(dict.fromkeys(n for name in intent.names
                                    for n in (name.replace("::", ".").replace("#", "."),
                                              re.split(r"\.|::|#", name)[-1])))
        found = self.store.identifier_lookup(wanted, DEFINITIONS, pred)
        rows = [r for n in wanted for r in found.get(n, [])]
        strength = {r["id"]: rerank.definition_strength(r.get("symbol") or "", intent.names) for r in rows}
        # one scan of the text column, for at most HEADER_SCAN_NAMES bare names the symbol index missed
        headless = [n for n in intent.names if n.isidentifier()
                    and not any(strength.get(r["id"], 0) >= 1 for r in found.get(n, []))][:HEADER_SCAN_NAMES]
        if headless:
            phrases = [f"{kw} {n}" for n in headless for kw in policy.DEFINITION_KEYWORDS]
            for n_rows in self.store.literal_lookup(phrases, DEFINITIONS, pred).values():
                for r in n_rows:
                    if any(policy.defines(r["text"], n) for n in headless):
                        rows.append(r)
                        strength[r["id"]] = 1.0
        rows.sort(key=lambda r: -strength.get(r["id"], 0.0))
        self._fuse(cands, list({r["id"]: r for r in rows}.values()), weight=policy.DEFINITION_LIST_WEIGHT)
        for c in cands.values():
            c.definition = max(strength.get(c.row["id"], 0.0),
                               rerank.definition_strength(c.row.get("symbol") or "", intent.names))
        # the bare names nothing defines (an option, a hook's or event's name): returned for _fuse_usages
        return [n for n in intent.names if n.isidentifier() and not any(
            strength.get(r["id"], 0) >= 1 or rerank.definition_strength(r.get("symbol") or "", [n]) >= 1
            for r in rows)]

    def _fuse_usages(self, cands: dict[str, _Cand], names: list[str], pred) -> None:
        """For a how-question naming something the repository uses but never defines ("how are beforeRequest
        hooks called": a hook's name), the source chunks that use it join the candidates, those that do most
        with it first (rankpolicy.logic_lines): tests and docs that repeat the name fill the full-text list."""
        from hippo.index.store import AT_COLUMNS

        found = self.store.literal_lookup(names[:HEADER_SCAN_NAMES], USAGE_SCAN, pred,
                                          columns=(*AT_COLUMNS, "embedded", "vector"))
        rows = [r for n in names for r in found.get(n, [])
                if policy.chunk_kind(r["path"], r.get("language") or "", r.get("symbol") or "") == "code"
                and (r.get("language") or "") not in policy.DOC_LANGUAGES]
        rows.sort(key=lambda r: (-policy.logic_lines(r["text"], r.get("language") or ""), r["path"], r["start_line"]))
        self._fuse(cands, list({r["id"]: r for r in rows}.values())[:USAGES], weight=policy.USAGE_LIST_WEIGHT)

    def _fuse_named(self, cands: dict[str, _Cand], query: str, pred) -> None:
        """The definitions whose names carry the question's words (namematch) join the candidates, the
        best-matching name first: recall for the code that answers "how does X work" when its text shares
        few words with the question. Names come from the code graph (every definition, methods inside a
        class's chunk too) and the chunks' symbols."""
        from hippo.index.store import AT_COLUMNS
        from hippo.retrieval import codegraph

        version = self.store.table_version()
        cached = self.__dict__.get("_name_index")
        if cached is None or cached[0] != version:
            try:
                by_name = codegraph.graph_for(self.store).by_name
            except Exception:  # noqa: BLE001 - an index without a graph still has its symbols
                by_name = {}
            names = set(by_name) | set(self.store.symbol_names())
            cached = self.__dict__["_name_index"] = (version, namematch.NameIndex.build(names), by_name)
        _v, index, by_name = cached
        best = index.best(query, NAMED)
        picks = [n for n, _s, _t in best]
        if not picks:
            return
        strength = {n: t for n, _s, t in best}
        spots = [(d.path, d.start) for n in picks for d in by_name.get(n, [])[:NAMED_ROWS]]
        cols = (*AT_COLUMNS, "embedded", "vector")  # their vectors give them a cosine like the kNN list's rows
        at = self.store.chunks_covering(spots, pred, columns=cols)
        found = self.store.identifier_lookup([n for n in picks if n not in by_name], NAMED_ROWS, pred, columns=cols)
        rows: list[dict] = []
        named: dict[str, float] = {}
        for n in picks:
            mine = [at[(d.path, d.start)] for d in by_name.get(n, [])[:NAMED_ROWS] if (d.path, d.start) in at]
            for r in mine + found.get(n, []):
                rows.append(r)
                named[r["id"]] = max(named.get(r["id"], 0.0), strength[n])
        self._fuse(cands, list({r["id"]: r for r in rows}.values()), weight=policy.NAMED_LIST_WEIGHT)
        for i, t in named.items():
            cands[i].named = t

    @staticmethod
    def _fuse(cands: dict[str, _Cand], rows: list[dict], weight: float = 1.0) -> None:
        for rank, row in enumerate(rows):
            c = cands.get(row["id"])
            if c is None:
                c = cands[row["id"]] = _Cand(row=row)
            c.rrf += weight / (policy.RRF_K + rank + 1)
            if "_cos" in row:
                c.cos = row["_cos"]

    # --- scoring ---------------------------------------------------------------------------------
    def _score(self, cands, query: str, keywords: list[str], qvec, phrases: Sequence[str] = (),
               intent: policy.Intent | None = None) -> None:
        """First stage (fused rank + confidence), then the feature reranker (rerank.score)."""
        cands = list(cands)
        if not cands:
            return
        import numpy as np

        intent = intent or policy.read_intent(query, pasted=bool(phrases))
        if qvec is not None:
            missing = [c for c in cands if c.cos is None and c.row.get("embedded")]
            for c in missing:
                c.cos = float(np.dot(np.asarray(c.row["vector"], dtype=np.float32), qvec))
        terms = query_terms(query + " " + " ".join(keywords))
        stems = {rerank.stem(t) for t in terms if len(t) > 2}
        best_rrf = max(c.rrf for c in cands)
        for c in cands:
            r = c.row
            present = text_terms(f"{r['text']} {r['path']} {r.get('symbol', '')} {r.get('breadcrumb', '')}")
            # Saturating: a long query is not penalised for words no single chunk could hold.
            coverage = min(1.0, len(terms & present) / min(len(terms), policy.COVERAGE_TERMS)) if terms else 0.0
            n_phr = sum(1 for ph in phrases if ph in pasted.normalise(r["text"])) if phrases else 0
            vec_conf = (min(1.0, max(0.0, (c.cos - policy.COS_FLOOR) / policy.COS_SPAN))
                        if c.cos is not None else 0.0)
            kw_cov = (sum(1 for kw in keywords if kw.lower() in r["text"].lower()) / len(keywords)) if keywords else 0.0
            conf = max(policy.VEC_CONF * vec_conf, policy.COVERAGE_CONF * coverage ** 1.5, policy.KEYWORD_CONF * kw_cov)
            if vec_conf and coverage:
                conf = min(1.0, conf + policy.AGREE_BONUS * min(vec_conf, coverage))
            if n_phr:
                conf = max(conf, min(1.0, policy.PHRASE_CONF + policy.PHRASE_CONF_STEP * n_phr))
            first = (policy.RANK_W * (c.rrf / best_rrf) + (1 - policy.RANK_W) * conf
                     + policy.KEYWORD_BONUS * kw_cov + policy.PHRASE_BONUS * min(n_phr, 3) / 3)
            lang = r.get("language") or ""
            # an in-file test module is a test for a question about code; for a change request or pasted
            # text it is evidence for its file (a change to the file changes its tests: fd's where-task
            # "Support multiple `--exec` instances", read as pasted, lost its file's rank)
            in_file = intent.code_question and not intent.change_request
            kind = policy.chunk_kind(r["path"], lang, r.get("symbol") or "" if in_file else "")
            c.logic = policy.logic_lines(r["text"], lang) if intent.behaviour and not \
                policy.module_overview(r["text"], int(r.get("start_line") or 0)) else -1
            feats = rerank.Features(first=first, conf=conf, kind=kind,
                                    import_only=policy.is_import_only(r["text"], lang), definition=c.definition,
                                    named=c.named, logic=c.logic,
                                    symbol_words=rerank.words_in_name(r.get("symbol") or "", stems))
            scored = rerank.score(feats, intent)
            c.conf, c.final = scored.conf, scored.final
        if intent.behaviour and policy.SPREAD:
            _spread(cands)

    def _cross_encode(self, cands: list[_Cand], query: str, budget_ms: int | None) -> None:
        """Blend the configured cross-encoder's score into the top candidates' (rankpolicy.CROSS_ENCODER_*).
        Within a budget it reads only as many candidates as the last measured speed allows, and never loads
        the model; a cross-encoder that fails leaves the feature ranking as it was."""
        from hippo.core.errors import HippoError

        top = sorted(cands, key=lambda c: (-c.final, c.row["path"], c.row["start_line"]))[:policy.CROSS_ENCODER_DEPTH]
        n = len(top)
        if budget_ms is not None:
            per = rerank.measured_ms_per_pair(self.settings.rerank_model)
            if per is None:
                return
            n = min(n, int(budget_ms / per))
        if n < 2:
            return
        try:
            enc = rerank.cross_encoder(self.settings.rerank_model, threads=self.settings.threads or None)
            scores = enc.scores(query, [c.row["text"] for c in top[:n]])
        except (HippoError, OSError, ValueError, RuntimeError) as exc:
            from hippo.core.runtime import log

            log(self.index_dir, "cross-encoder skipped", exc)
            return
        best = max(c.final for c in top[:n]) or 1.0
        share = policy.CROSS_ENCODER_SHARE
        for c, s in zip(top[:n], scores, strict=True):  # it vouches for relevance: rank and confidence
            c.final = best * ((1 - share) * c.final / best + share * s)
            c.conf = (1 - share) * c.conf + share * s

    def _select(self, cands, query: str, k: int, budget: int,
                terms: set[str] = frozenset()) -> tuple[list[Hit], str | None, list[Candidate]]:
        """Snippets of the best chunks within the budget, then pointers to the best files not shown."""
        ranked = sorted(cands, key=lambda c: c.final, reverse=True)
        files = rank_files(((c.row, c.final) for c in ranked), terms, query, self._neighbours())
        intent = policy.read_intent(query, pasted=pasted.looks_pasted(query))
        files_answer = intent.change_request and not intent.symbol  # one name asks for its definition
        file_floor = CHANGE_FLOOR if files_answer else CANDIDATE_FLOOR
        if not ranked or ranked[0].conf < MIN_CONFIDENCE and max(c.conf for c in ranked) < MIN_CONFIDENCE:
            return [], (f"No high-confidence results found for {query[:120]!r}; the candidates, if any, are weak. "
                        "Try other words, a --keyword, or a broader --glob."), _candidates(files, set())[:WEAK_POINTERS]
        # Snippets stay in chunk order: lifting blocks of files with more evidence cost the first hit on
        # paraphrased questions (bench/quality), so file evidence orders the pointers only.
        blocks = _distinct(_merge_rows(ranked[: k * 4]))
        top_conf = max(b.conf for b in blocks)
        floor = MIN_CONFIDENCE * 0.8
        gated = [b for b in blocks if b.conf >= max(floor, top_conf * KEEP_CONF_SHARE)]
        behaviour = intent.behaviour
        if behaviour:  # a how/why question: the first few blocks above the floor, whatever the best one's conf
            first = {id(b) for b in [b for b in blocks if b.conf >= floor][: policy.HOW_MIN_SHOWN]}
            gated = [b for b in blocks if id(b) in first or b in gated]
        chosen = gated[:k]
        if (len(chosen) > 1 and not behaviour and chosen[0].conf >= ALONE_CONF
                and chosen[1].conf < chosen[0].conf - ALONE_GAP):
            chosen = chosen[:1]  # one very strong hit stands alone
        # a question about code (not a change request, whose answer is files: room for pointers matters more)
        heads = self._headers([b.hit for b in chosen]) if intent.code_question and not intent.change_request else {}
        keep = _apply_budget([b.hit for b in chosen], budget - sum(_header_chars(h) for h in heads.values()),
                             sorted(terms))
        for h in keep:
            if h.id in heads:
                _prepend_header(h, heads[h.id])
        # a change request's answer is files: room for pointers up to MAX_FILES_NAMED, other questions MIN_POINTERS
        keep = _make_room_for_pointers(keep, files, k, budget, file_floor,
                                       MAX_FILES_NAMED if files_answer else MIN_POINTERS)
        # Pointers are paid for by what the snippets left of the budget and by the result slots (of k) left
        # unused, so an answer is never longer than one with k full results; a file whose snippet did not
        # fit becomes a pointer.
        pointers = _candidates(files, {h.path for h in keep}, file_floor)[: max(0, MAX_FILES_NAMED - len({h.path for h in keep}))]
        allowance = _allowance(keep, k, budget)
        while pointers and _pointers_cost(pointers) > allowance:
            pointers.pop()
        keep = self._annotate(keep)
        return keep, None, pointers

    def _headers(self, hits: list[Hit]) -> dict[str, list[tuple[int, str]]]:
        """For each hit that opens inside a function's body (a later chunk of a long method), the header
        lines of that function: the answer to "how does X work" is often the middle of a long method, and a
        snippet from there does not say which method it is. A header an earlier hit already shows, or that
        is more than HEADER_REACH lines above, is left out."""
        from hippo.retrieval import codegraph

        try:
            graph = codegraph.graph_for(self.store)
        except Exception:  # noqa: BLE001 - an index without a graph: snippets as they are
            return {}
        want: dict[str, list[tuple[str, int, int]]] = {}
        shown: list[tuple[str, int, int]] = []
        starts = self._unit_starts([h for h in hits if h.path not in graph.files])
        for h in hits:
            f = graph.files.get(h.path)
            if f is None:  # a language the graph does not read (Go, Rust): the chunker's unit, by its header
                at = starts.get(h.id)
                if (at is not None and at < h.start_line and h.start_line - at <= HEADER_REACH
                        and not any(p == h.path and a <= at <= b for p, a, b in shown)):
                    want[h.id] = [(h.path, at, h.start_line)]
                    shown.append((h.path, at, h.start_line))
                shown.append((h.path, h.start_line, h.end_line))
                continue
            # the functions the hit opens inside, outermost first (a callback inside a long function: both)
            around = sorted((d for d in (f.defs if f is not None else ()) if d.kind in ("function", "method")
                             and d.start < h.start_line <= d.end and h.start_line - d.start <= HEADER_REACH
                             and not any(p == h.path and a <= d.start <= b for p, a, b in shown)),
                            key=lambda d: d.start)
            heads = [around[0], around[-1]] if len(around) > 1 else around
            if heads:
                want[h.id] = [(h.path, d.start, h.start_line) for d in heads]
                shown.append((h.path, heads[0].start, h.start_line))
            shown.append((h.path, h.start_line, h.end_line))
        if not want:
            return {}
        rows = self.store.chunks_covering([(p, n) for spots in want.values() for p, n, _ in spots])
        out: dict[str, list[tuple[int, str]]] = {}
        for hid, spots in want.items():
            lines: list[tuple[int, str]] = []
            for path, start, until in spots:
                row = rows.get((path, start))
                if row is not None:
                    lines += header_lines(row["text"], int(row["start_line"]), start, until)
            if lines:
                out[hid] = sorted(dict(lines).items())
        return out

    def _unit_starts(self, hits: list[Hit]) -> dict[str, int]:
        """For hits whose symbol is one code unit (`Command.getCompletions`), the line defining it in the same
        file, from the chunks the symbol index says define it."""
        names = {h.id: h.symbol for h in hits if h.symbol and "," not in h.symbol}
        if not names:
            return {}
        found = self.store.identifier_lookup(sorted(set(names.values())), DEFINITIONS)
        out: dict[str, int] = {}
        for h in hits:
            sym = names.get(h.id)
            if not sym:
                continue
            tail = re.split(r"\.|::|#", sym)[-1]
            for r in sorted(found.get(sym, []), key=lambda r: r["start_line"]):
                if r["path"] != h.path or r["start_line"] >= h.start_line or r.get("symbol") != sym:
                    continue
                for i, line in enumerate(r["text"].split("\n")):
                    if policy.defines(line, tail):
                        out[h.id] = int(r["start_line"]) + i
                        break
                if h.id in out:
                    break
        return out

    def _neighbours(self) -> Neighbours:
        """Co-change partners (read once per indexed commit, on the same key the failure diagnosis uses)
        and call-graph links, for file ranking."""
        from hippo.index import cochange

        key = (self.state.indexed_commit, len(self.state.files))
        cached = self.__dict__.get("_cochange")
        if cached is None or cached[0] != key:
            try:
                partners = cochange.load(self.index_dir).get("with", {})
            except Exception:  # noqa: BLE001 - history is a hint
                partners = {}
            indexed = self.state.files
            if indexed:  # a partner deleted (or no longer indexed) since it changed with a file is no answer
                partners = {p: {q: n for q, n in with_.items() if q in indexed} for p, with_ in partners.items()}
            cached = (key, partners)
            self.__dict__["_cochange"] = cached
        return Neighbours(cochange=cached[1], linked=self._graph_links if policy.GRAPH_LINK else None)

    def _graph_links(self, row: dict) -> set[str]:
        """Non-test files holding what the definition at the start of `row` calls, or what calls it
        (exact resolutions only)."""
        from hippo.core.pathkind import is_test
        from hippo.retrieval import codegraph

        try:
            graph = codegraph.graph_for(self.store)
        except Exception:  # noqa: BLE001 - the graph is a hint
            return set()
        d = graph.def_at(row["path"], int(row["start_line"]))
        if d is None:
            return set()
        out = {t.path for _call, found, how in graph.callees(d) if how == codegraph.EXACT for t in found}
        out |= {call.path for call, _how in graph.callers([d], exact_only=True)}
        return {p for p in out if p != row["path"] and not is_test(p)}

    def _annotate(self, hits: list[Hit]) -> list[Hit]:
        """Check every hit against its live file and fill in last_modified; returns the hits to show.

        The one place every surface (CLI, MCP, /rag, warm server) gets its hits from, so no surface shows
        indexed text the file no longer holds: a hit whose file changed since indexing is compared with
        the live text (redacted as the indexer redacts); lines that moved are shown at their new numbers,
        and a hit whose lines are gone (or whose file is gone or unreadable) is dropped. Text a team base
        carried that no file holds never reaches a caller this way either.
        """
        dates = self.commit_dates.get({h.path: rec.blob for h in hits
                                       if (rec := self.state.files.get(h.path)) and rec.blob})
        reader = self.__dict__.get("_reader")
        if reader is None:  # the one read gate (repo_read): no symlink, FIFO, secret name, oversized file
            from hippo.core.repo_read import RepoReader

            reader = self.__dict__["_reader"] = RepoReader(self.root, self.settings)
        shown: list[Hit] = []
        for h in hits:
            live = self.root / h.path
            rec = self.state.files.get(h.path)
            try:
                st = live.stat()
            except OSError:
                continue  # the file is gone
            if rec is None or st.st_size != rec.size or st.st_mtime_ns != rec.mtime_ns:
                # the index applied .gitignore when it took the file; the name rules are checked again
                if not _relive(reader.read_bytes(h.path, check_ignored=False), h):
                    continue
                dates.pop(h.path, None)  # the commit date is of the indexed blob, not of this text
            h.last_modified = dates.get(h.path) or date.fromtimestamp(st.st_mtime).isoformat()
            shown.append(h)
        return shown

    def _respond(self, query, hits, total, started, strategy, message, embedded: int | None = None,
                 all_rows: int | None = None) -> SearchResponse:
        meta = {
            "total_hits": total, "returned_hits": len(hits),
            "latency_ms": int((time.perf_counter() - started) * 1000),
            "search_strategy": strategy,
            "indexed_commit": (self.state.indexed_commit or "")[:12] or "none (not a git commit)",
        }
        if embedded is not None and all_rows and embedded < all_rows:
            from hippo.index.status import vectors_note  # says whether a builder is alive, not just the percentage

            meta["index_status"] = vectors_note(self.index_dir, self.state, embedded, all_rows)
        return SearchResponse(query=query, hits=hits, meta=meta, message=message)


def _spread(cands: list[_Cand]) -> None:
    """A code unit (one function or method, the chunker's symbol) several of whose chunks are candidates: its
    best chunk gains a share of the others' scores (rankpolicy.spread_bonus). Only chunks that do something
    count (at least LOGIC_LINES logic lines): a long type's or options class's documented fields do not add up.
    A class whose name carries the question's words (namematch, at least SPREAD_NAMED_OWNER) is such a unit
    too: its header chunk (often a docstring alone) gains from its methods' chunks."""
    units: dict[tuple[str, str], list[_Cand]] = {}
    for c in cands:
        sym = c.row.get("symbol") or ""
        if (sym and "," not in sym and c.logic >= policy.LOGIC_LINES
                and policy.chunk_kind(c.row["path"], c.row.get("language") or "", sym) == "code"):
            units.setdefault((c.row["path"], sym), []).append(c)
    heads = {(c.row["path"], c.row.get("symbol") or ""): c for c in cands
             if c.named >= policy.SPREAD_NAMED_OWNER and "," not in (c.row.get("symbol") or ",")}
    gains: list[tuple[_Cand, float]] = []
    for group in units.values():
        if len(group) > 1:
            group.sort(key=lambda c: (-c.final, c.row["start_line"]))
            gains.append((group[0], policy.spread_bonus([c.final for c in group[1:]])))
    members: dict[tuple[str, str], list[float]] = {}
    for (path, sym), group in units.items():
        owner = (path, sym.rsplit(".", 1)[0])
        if "." in sym and owner in heads:
            members.setdefault(owner, []).extend(c.final for c in group)
    gains += [(heads[key], policy.spread_bonus(finals)) for key, finals in members.items()]
    for c, gain in gains:
        c.final += gain


def _merge_rows(cands: list[_Cand]) -> list[_Block]:
    """Merge overlapping or adjacent chunks of one file into one block, best first."""
    by_path: dict[str, list[_Cand]] = {}
    for c in cands:
        by_path.setdefault(c.row["path"], []).append(c)
    hits: list[_Block] = []
    for path, group in by_path.items():
        group.sort(key=lambda c: c.row["start_line"])
        run: list[_Cand] = []
        for c in group:
            if run and c.row["start_line"] > max(x.row["end_line"] for x in run) + 1:
                hits.append(_block(path, run))
                run = []
            run.append(c)
        if run:
            hits.append(_block(path, run))
    hits.sort(key=lambda b: (-b.rank, b.hit.path, b.hit.start_line))
    return hits


def _line_set(text: str) -> set[str]:
    return {" ".join(ln.split()) for ln in text.split("\n") if len(ln.strip()) > 3}


def _distinct(blocks: list[_Block]) -> list[_Block]:
    """Blocks whose text another, better block already shows (README and its PKG-INFO copy, a vendored
    duplicate) are dropped: a search never shows the same text twice."""
    out: list[_Block] = []
    seen: list[set[str]] = []
    for b in blocks:
        lines = _line_set(b.hit.snippet)
        if lines and any(len(lines & s) >= NEAR_DUPLICATE * min(len(lines), len(s)) for s in seen):
            continue
        out.append(b)
        seen.append(lines)
    return out


def _block(path: str, run: list[_Cand]) -> _Block:
    lines: dict[int, str] = {}
    for c in run:
        for n, text in enumerate(c.row["text"].split("\n"), start=int(c.row["start_line"])):
            lines.setdefault(n, text)
    start, end = min(lines), max(lines)
    best = max(run, key=lambda c: c.final)
    symbols = [c.row.get("symbol") or "" for c in sorted(run, key=lambda c: -c.final)]
    hit = Hit(id=best.row["id"], path=path, start_line=start, end_line=end, language=best.row.get("language") or "",
              score=round(min(1.0, max(c.final for c in run)), 4),
              snippet="\n".join(lines.get(n, "") for n in range(start, end + 1)),
              symbol=next((s for s in symbols if s), ""))
    # rank orders blocks; conf gates dynamic top-k
    return _Block(hit=hit, rank=max(c.final for c in run), conf=max(c.conf for c in run))


def header_lines(text: str, text_start: int, start: int, until: int) -> list[tuple[int, str]]:
    """(line number, text) of a definition's header in a chunk's text: from its first line (decorators,
    `def`, `async fn`, a method's name) to the line that opens its body (ends with `:`, `{` or `=>`), at
    most HEADER_LINES lines and never reaching `until`."""
    lines = text.split("\n")
    out: list[tuple[int, str]] = []
    for n in range(start, min(until, start + HEADER_LINES)):
        i = n - text_start
        if not 0 <= i < len(lines):
            break
        out.append((n, lines[i]))
        code = lines[i].split("#", 1)[0] if lines[i].lstrip()[:1] != "#" else ""
        if code.rstrip().endswith((":", "{", "=>")):
            break
    return out


def _header_chars(lines: list[tuple[int, str]]) -> int:
    return sum(len(t) + 1 + len(_elision(100)) + 1 for _, t in lines)


def _prepend_header(h: Hit, header: list[tuple[int, str]]) -> None:
    """Show the enclosing function's header above a hit from the middle of its body, the lines between
    elided; the hit's lines now start at the header."""
    if not header or header[0][0] >= h.start_line:
        return
    shown = _shown_lines(h)
    out: list[str] = []
    for i, (n, t) in enumerate(header):
        if i and n > header[i - 1][0] + 1:
            out.append(_elision(n - header[i - 1][0] - 1))
        out.append(t)
    gap = h.start_line - header[-1][0] - 1
    h.snippet = "\n".join(out + ([_elision(gap)] if gap > 0 else []) + h.snippet.split("\n"))
    h.start_line = header[0][0]
    h._kept_lines = [*header, *shown]  # type: ignore[attr-defined]  # what _relive compares


def _candidates(files: list[FileEvidence], shown: set[str], share: float = CANDIDATE_FLOOR) -> list[Candidate]:
    """Pointers to the best files without a snippet, in file-evidence order, one per file: the best chunk's
    lines and symbol, and the file's evidence put on a result's scale (the top file's best chunk sets it), so
    the scores descend in the order the pointers come."""
    if not files:
        return []
    floor = share * files[0].score
    scale = files[0].best_final / files[0].score if files[0].score > 0 else 1.0
    out: list[Candidate] = []
    for f in files:
        if f.path in shown:
            continue
        if f.score < floor or len(out) >= MAX_CANDIDATES:
            break
        row = f.best
        out.append(Candidate(path=f.path, start_line=int(row["start_line"]), end_line=int(row["end_line"]),
                             symbol=(row.get("symbol") or next(iter(f.symbols), ""))[:80],
                             score=round(min(1.0, f.score * scale), 4)))
    return out


def _allowance(hits: list[Hit], k: int, budget: int) -> int:
    return budget - sum(len(h.snippet) for h in hits) + RESULT_SLOT_CHARS * max(0, k - len(hits))


def _make_room_for_pointers(hits: list[Hit], files: list[FileEvidence], k: int, budget: int,
                            share: float = CANDIDATE_FLOOR, files_named: int = MIN_POINTERS) -> list[Hit]:
    """Drop the last repeat blocks of files already shown (never one of the first PROTECTED_HITS) until
    pointers fit, at least MIN_POINTERS of them and as many as bring the files named to `files_named`: a
    file's fourth snippet is worth less than naming four more files."""
    hits = list(hits)
    room = max(MIN_POINTERS, files_named - len({h.path for h in hits}))
    want = _candidates(files, {h.path for h in hits}, share)[:room]
    while want and _pointers_cost(want) > _allowance(hits, k, budget):
        repeats = [i for i in range(PROTECTED_HITS, len(hits)) if hits[i].path in {h.path for h in hits[:i]}]
        if not repeats:
            break
        hits.pop(repeats[-1])
    return hits


def _pointer_cost(c: Candidate) -> int:
    """Characters the pointer adds to the XML answer (the largest of the three formats)."""
    from hippo.retrieval.render import candidate_element

    return len(candidate_element(c)) + 1


def _pointers_cost(pointers: Sequence[Candidate]) -> int:
    from hippo.retrieval.render import CANDIDATES_CLOSE, CANDIDATES_OPEN

    return sum(_pointer_cost(c) for c in pointers) + (len(CANDIDATES_OPEN) + len(CANDIDATES_CLOSE) + 2 if pointers else 0)


def _apply_budget(hits: list[Hit], budget: int, terms: Sequence[str] = ()) -> list[Hit]:
    """Keep whole hits while they fit; trim the one that overflows.

    A block that is too big is trimmed around the lines that contain the query's terms (a merged block can
    open with unrelated one-liners and reach the matching code only far below): those lines and their
    neighbours are kept, every elided run inside is marked `// ... (N lines)` and start/end_line shrink to
    what is shown. A block with no matching line is cut at a line boundary with TRUNCATION_MARK.
    """
    out, left = [], budget
    per_hit_cap = max(budget // 2, 600)
    stems = _stems(terms)
    for h in hits:
        cap = min(left, per_hit_cap)
        if cap < 200:
            break
        if len(h.snippet) > cap:
            lines = h.snippet.split("\n")
            matches = _matching_lines(lines, stems)
            if matches:
                _trim_around(h, lines, matches, cap)
            else:
                kept, size = [], 0
                for line in lines:
                    if size + len(line) + 1 > cap - len(TRUNCATION_MARK) - 1:
                        break
                    kept.append(line)
                    size += len(line) + 1
                if not kept:
                    kept = [lines[0][: max(cap - len(TRUNCATION_MARK) - 1, 0)]]
                h.end_line = h.start_line + len(kept) - 1
                h.snippet = "\n".join(kept + [TRUNCATION_MARK])
            h.truncated = True
        out.append(h)
        left -= len(h.snippet)
    return out


def _stems(terms: Sequence[str]) -> list[str]:
    """Crude stems so "expired tokens rejected" finds `expire`, `token`, `reject`."""
    return sorted({t if len(t) <= 4 else t[: max(4, len(t) - 3)] for t in (x.lower() for x in terms) if t})


def _matching_lines(lines: list[str], stems: list[str]) -> dict[int, int]:
    """Line index -> how many different query stems the line contains (lines with none are left out)."""
    found: dict[int, int] = {}
    if not stems:
        return found
    for i, line in enumerate(lines):
        words = text_terms(line)
        n = sum(1 for st in stems if any(w.startswith(st) for w in words))
        if n:
            found[i] = n
    return found


def _elision(n: int) -> str:
    return f"// ... ({n} line{'s' if n != 1 else ''})"


def _trim_around(h: Hit, lines: list[str], matches: dict[int, int], cap: int) -> None:
    """Keep the best-matching lines first, then grow context around each of them (two lines below for every
    line above: the body follows the line that names the thing) until `cap` characters, markers included."""
    mark = len(_elision(len(lines))) + 1  # every kept island may need one marker after it
    size = len(TRUNCATION_MARK) + 1
    keep: set[int] = set()
    for i in sorted(matches, key=lambda i: (-matches[i], i)):  # every matching line that fits, best first
        if size + len(lines[i]) + 1 + mark <= cap:
            keep.add(i)
            size += len(lines[i]) + 1 + mark
    if not keep:  # even the best line is too long: keep its head
        i = max(matches, key=lambda i: (matches[i], -i))
        lines = lines[:]
        lines[i] = lines[i][: max(cap - size - mark, 0)]
        keep.add(i)
    # Grow outward from each anchor, one direction at a time, until that direction hits a line that no
    # longer fits (so islands never split and the reserved markers stay enough).
    fronts = {(a, step): a for a in sorted(keep) for step in (1, -1)}
    while fronts:
        for key in list(fronts):
            a, step = key
            for _ in range(2 if step == 1 else 1):
                j = fronts[key] + step
                if j < 0 or j >= len(lines) or j in keep:
                    fronts.pop(key)
                    break
                if size + len(lines[j]) + 1 > cap:
                    fronts.pop(key)
                    break
                keep.add(j)
                size += len(lines[j]) + 1
                fronts[key] = j
    chosen = sorted(keep)
    out: list[str] = []
    kept_lines: list[tuple[int, str]] = []
    for n, i in enumerate(chosen):
        if n and i > chosen[n - 1] + 1:
            out.append(_elision(i - chosen[n - 1] - 1))
        out.append(lines[i])
        kept_lines.append((h.start_line + i, lines[i]))
    if chosen[-1] < len(lines) - 1:
        out.append(TRUNCATION_MARK)
    first = h.start_line
    h.start_line, h.end_line = first + chosen[0], first + chosen[-1]
    h.snippet = "\n".join(out)
    h._kept_lines = kept_lines  # type: ignore[attr-defined]  # what _relive compares


MAX_RELOCATIONS = 50  # places in the live file tried for a hit whose lines moved


def _shown_lines(hit: Hit) -> list[tuple[int, str]]:
    """(line number, text) of every file line the hit's snippet shows, markers left out."""
    kept = getattr(hit, "_kept_lines", None)
    if kept is not None:  # trimmed around matches: the shown lines at their own numbers
        return list(kept)
    lines = hit.snippet.split("\n")
    if hit.truncated:
        lines = lines[:-1]
    return [(hit.start_line + i, line) for i, line in enumerate(lines)]


def _same_line(live: str, shown: str) -> bool:
    # a line longer than a chunk may hold, or cut by the budget, is shown as its head
    return live == shown or (bool(shown) and live.startswith(shown) and len(live) > len(shown))


def _relive(data: bytes | None, hit: Hit) -> bool:
    """Make `hit` true to the live file (None: unreadable or refused). True when its lines are there, at
    their numbers or moved as one block (the hit is renumbered); False when they are not."""
    if data is None:
        return False
    from hippo.index.chunking.lines import split_lines
    from hippo.index.indexer import indexed_text

    live = split_lines(indexed_text(data))
    shown = _shown_lines(hit)
    if not shown:
        return False

    def holds(delta: int) -> bool:
        return all(0 <= n - 1 + delta < len(live) and _same_line(live[n - 1 + delta], text) for n, text in shown)

    if holds(0):
        return True
    first_n, first = next(((n, t) for n, t in shown if t.strip()), shown[0])
    deltas = sorted((i + 1 - first_n for i, line in enumerate(live) if _same_line(line, first)), key=abs)
    for delta in deltas[:MAX_RELOCATIONS]:
        if holds(delta):
            hit.start_line += delta
            hit.end_line += delta
            kept = getattr(hit, "_kept_lines", None)
            if kept is not None:
                hit._kept_lines = [(n + delta, t) for n, t in kept]  # type: ignore[attr-defined]
            return True
    return False


def search(root: Path, query: str, **kw) -> SearchResponse:
    """One-shot search (opens the index, queries, returns)."""
    settings = kw.pop("settings", None)
    embedder = kw.pop("embedder", None)
    return Searcher(Path(root), settings, embedder=embedder).search(query, **kw)
