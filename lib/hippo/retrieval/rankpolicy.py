"""How search orders what it found: every weight in one place, each named, plus the two judgements they
need, what a path holds (code, prose, type declarations, generated metadata, tests, release notes) and
what a query asks for (code, docs, types, tests, release notes, one symbol's definition).

The order of evidence: for a question about code, the implementation first; prose, `.d.ts`/`.pyi`
declarations and generated metadata (PKG-INFO, egg-info, lockfiles, minified bundles) below it unless the
query asks for them; a chunk that only imports names says little; a chunk that defines the symbol the
query names says most. Stdlib only (hooks import it through search).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from hippo.core import pathkind

# --- first stage: fused rank blended with confidence -----------------------------------------------
# Tuned on bench/quality (click + npm): the vector list adds recall for paraphrased questions but its
# near-misses crowd out exact matches when weighted like full-text.
VECTOR_WEIGHT = 0.3  # RRF weight of the vector list in hybrid mode (full-text lists weigh 1.0)
DEFINITION_LIST_WEIGHT = 1.0  # RRF weight of the chunks defining a name the query uses
USAGE_LIST_WEIGHT = 0.5  # RRF weight of the source chunks using a name the how-question gives and nothing defines
NAMED_LIST_WEIGHT = 0.5  # RRF weight of the definitions whose names carry the question's words (namematch)
RRF_K = 60
RANK_W = 0.45  # first = RANK_W * fused rank + (1 - RANK_W) * confidence (+ keyword/phrase bonuses)
VEC_CONF = 0.6  # how much cosine similarity alone can vouch for a chunk
COS_FLOOR, COS_SPAN = 0.15, 0.5  # cosine -> 0..1 vector confidence
COVERAGE_CONF = 0.85  # confidence of a chunk holding every query term
COVERAGE_TERMS = 6  # a chunk needs at most this many of the query's terms for full coverage
KEYWORD_CONF = 0.9  # confidence of a chunk holding every --keyword
AGREE_BONUS = 0.1  # vector and words agree
PHRASE_CONF, PHRASE_CONF_STEP = 0.45, 0.15  # a chunk holding phrases of pasted output
KEYWORD_BONUS = 0.1
PHRASE_BONUS = 0.25

# --- second stage: the reranker's weights (rerank.py) ----------------------------------------------
# Multipliers by what the path holds, when the query does not ask for that kind.
DOC_UNDER_CHANGE = 0.65  # docs under a change request: the page describing X is not where X changes
DOC_UNDER_CODE_QUESTION = 0.6  # docs under "how does X work" / "where is X handled" / a symbol name
TYPES_UNDER_CODE_QUESTION = 0.55  # .d.ts / .pyi: the declaration, not the code that does it
GENERATED = 0.35  # PKG-INFO, egg-info, lockfiles, minified or generated files: copies, not sources
GENERATED_CONF = 0.6
CHANGELOG = 0.5  # release notes repeat every feature's words
CHANGELOG_CONF = 0.7
TEST = 0.6  # tests and vendored code, unless the query asks for them
TEST_CONF = 0.8
IMPORT_ONLY = 0.55  # a chunk of nothing but imports names things; it does not do them
IMPORT_ONLY_CONF = 0.7
# Definitions: the chunk defines a name the query uses.
DEFINITION_OF_SYMBOL_QUERY = 0.6  # the query is that name alone: its definition goes first
DEFINITION_OF_OTHER_OWNER = 0.25  # `Class.method` asked, `Other.method` found
DEFINITION_IN_QUESTION = 0.15  # the name appears in a longer question
DEFINITION_CONF = 0.9
NAMED_DEFINITION = 0.1  # defines a name carrying the question's words (namematch: time_remaining for "remaining time")
NAMED_CONF = 0.6  # ... and vouches for it as much (its words may differ from the question's: decoder/decoded)
SYMBOL_WORDS = 0.08  # a code unit whose name carries the question's words (save/load for "saving and loading")
# "How does X work" asks what the code does: a chunk with no logic in it (a struct's fields, an enum, a dict
# literal, a documented getter, a class header with its docstring) describes X rather than doing it.
DECLARATIVE = 0.5  # multiplier for a code chunk with no logic line, under a how/why question ...
LOGIC_LINES = 2  # ... rising linearly to 1 at this many logic lines (branches, loops, returns, calls)
# ... and its answer is often a few functions, none of them sure of itself: a how/why question shows at least
# this many blocks (above search's absolute floor) even when a confident one (a doc page, a well-worded comment)
# would set the bar above the rest, and no single hit stands alone.
HOW_MIN_SHOWN = 3
# ... and a long function answers it in several of its chunks (rich's `Traceback.extract`: five chunks match
# "collect stack frames and local variables", none of them well): the best chunk of a code unit gains this share
# of its other chunks' scores, each next one counting SPREAD_DECAY times less (search shows the unit's header
# above a chunk from its middle).
SPREAD = 0.25
SPREAD_DECAY = 0.3
SPREAD_NAMED_OWNER = 0.5  # a class named this well by the question (namematch) is a unit: its methods lift its header

# File ranking's neighbours of the best file (filerank.Neighbours): a share of its best chunk's score.
# Fitted on the codesearch tuning split (bench/codesearch/tune.py --only COCHANGE,GRAPH_LINK): co-change 0.3
# beat 0 and 0.6; graph links changed nothing at 0.15 or 0.3, so they are off and searches skip the walk.
COCHANGE = 0.3  # changed together with the best file in COCHANGE_SATURATION or more past commits
COCHANGE_SATURATION = 4
COCHANGE_MIN_COMMITS = 2  # one shared commit says little
GRAPH_LINK = 0.0  # holds what the best chunk's definition calls, or what calls it
GRAPH_MAX_FILES = 8  # more linked files than this: the link says nothing

# --- the optional cross-encoder (rerank.CrossEncoderReranker) --------------------------------------
CROSS_ENCODER_DEPTH = 30  # candidates it reads
CROSS_ENCODER_SHARE = 0.5  # final = (1 - share) * feature score + share * cross-encoder score (both 0..1)

KINDS = ("code", "doc", "types", "generated", "changelog", "test")

DOC_LANGUAGES = frozenset({"markdown", "rst", "text"})
ASKS_FOR_TESTS = re.compile(r"\b(tests?|spec|fixtures?|vendor|example|mock|pytest|jest|bench\w*)\b", re.IGNORECASE)
# Benchmark suites exercise the code the way tests do (rich's benchmarks/ parse styles to time them).
BENCH_DIR = re.compile(r"(?:^|/)(?:bench|benches|benchmarks?)/", re.IGNORECASE)
ASKS_FOR_CHANGELOG = re.compile(r"\b(change[ _-]?log|release[ _-]?notes?|news|history|what('s| has)? changed|"
                                r"changes? (in|since|for) (v(ersion)?\s*)?\d)", re.IGNORECASE)
ASKS_FOR_DOCS = re.compile(r"\b(docs?|documentation|documented|documents?|readme|guide|tutorial|manual|explain\w*|"
                           r"describe[sd]?)\b", re.IGNORECASE)
ASKS_FOR_TYPES = re.compile(r"\b(types?|typings?|typed|declarations?|d\.ts|pyi|stubs?|signatures?|interfaces?)\b",
                            re.IGNORECASE)
ASKS_FOR_METADATA = re.compile(r"\b(pkg-info|metadata|egg-info|dist-info|lock ?files?|lockfile|minified|generated)\b",
                               re.IGNORECASE)
WANTS_CODE = re.compile(r"\b(change|alter|modify|fix|implement\w*|refactor|edit|patch|rewrite|function|method|"
                        r"class|defined?|definition|raised?|throws?)\b", re.IGNORECASE)
# "how does X work", "where is X handled", "where would I change X", "what decides X", "which code ..."
CODE_QUESTION = re.compile(
    r"^\W*(how\s+(does|do|is|are|can|should|would|did)\b|why\s+(does|do|is|are|did|would)\b|where\b|"
    r"which\s+(code|function|method|class|file|module)"
    r"|what\s+(decides|determines|controls|handles|sets|computes|parses|builds|calls)\b)"
    r"|\b(work|works|handled|implemented|decided|computed|parsed|validated|called|raised|thrown|stored|"
    r"initiali[sz]ed|configured|happens?)\b", re.IGNORECASE)
# A question about what code does: "how does X work", "how are X decided", "why is X dropped", "what happens when".
BEHAVIOUR_QUESTION = re.compile(r"^\W*(how\b(?!\s+(?:would|should|can|could|do)\s+(?:i|we)\b)|why\b|what\s+happens\b)",
                                re.IGNORECASE)
# A line of code that decides or does something, in any of the indexed languages.
LOGIC_LINE = re.compile(r"\b(if|elif|else|for|while|loop|match|switch|case|return|yield|await|try|except|catch|"
                        r"finally|raise|throw|break|continue|defer|select)\b|=>|\?;|\.then\(")
# ... or runs something: a statement that calls (`self.jar.extract_cookies(r, q)`, `x = f(y)`, `let n = a.b()?`),
# not a field, a literal's entry (`"bold": Style(bold=True)`, an enum's `Entry(DirEntry),`) or a definition's header
CALL_LINE = re.compile(r"^(?:(?:let|const|var|mut|return)\s+)*[A-Za-z_$][\w$.\[\]>#-]*"
                       r"(?:\s*(?:=|:=|\+=|-=)\s*(?:await\s+|new\s+|&)?[A-Za-z_$][\w$.:#]*)?\s*\(")
DEFINITION_LINE = re.compile(r"^(?:(?:export|default|pub(?:\([^)]*\))?|async|static|private|public|protected|"
                             r"override|unsafe|const)\s+)*(?:def|fn|func|function\*?|class|struct|enum|trait|type|"
                             r"interface|impl|mod)\b")
COMMENT_LINE = re.compile(r"^\s*(//|#|\*|--|<!--)")
# A request to change code (a commit subject, an issue title) starts with the change: "Add ...", "fix(http): ...",
# "Please drop ...". Only the start counts: "what should I know about ... added" asks about docs.
CHANGE_REQUEST = re.compile(
    r"^\W*(?:(?:feat|fix|perf|refactor|chore|build|style|types?|security|core|\w+)(?:\([^)]*\))?!?:\s*)?"
    r"(?:please\s+|(?:where|how)\s+(?:would|do|should|can|could)\s+(?:i|we)\s+)?"
    r"(?:add|new(?!\w)|remove|rename|support|allow|expose|drop|avoid|handle|raise|return|lazily|deprecate|prevent|ensure|"
    r"enable|disable|make|move|use|improve|clean\s*up|cleanup|simplify|replace|update|change|fix|fixed|"
    r"implement|refactor|respect|skip|stop|keep|set|pass|accept|reject|check|validate|catch|throw|wrap|extract|"
    r"optimi[sz]e|speed\s*up|reduce|increase|import|display|show|clarif|review|parse|convert|emit|log)\w*\b",
    re.IGNORECASE)
# A query that is one name: `ExitStatus`, `Client.send`, `parse_args()`, `lib::fmt`, `Foo#bar`.
SYMBOL_QUERY = re.compile(r"^`?([A-Za-z_$][\w$]*(?:(?:\.|::|#)[A-Za-z_$][\w$]*)*)(?:\(\))?`?$")
# A name inside a sentence: backticked, dotted, snake_case, camelCase or PascalCase with an inner capital.
CODE_NAME = re.compile(r"`([^`\s]{2,80})`|\b([A-Za-z_$][\w$]*(?:(?:\.|::)[A-Za-z_$][\w$]*)+|[a-z$][\w$]*_[\w$]+|"
                       r"_[\w$]+|[a-z$]+[A-Z][\w$]*|[A-Z][a-z0-9]+[A-Z][\w$]*)")
IMPORT_LINE = re.compile(
    r"^\s*(import\b|from\s+\S+\s+import\b|export\s+(\*|\{[^}]*\})\s+from\b|(const|let|var)\s+[^=]+=\s*require\(|"
    r"require\(|use\s+[\w:{}, *]+;|extern\s+crate\b|mod\s+\w+;|#\s*include\b|package\s+\w+|[\"'][\w./@-]+[\"'],?$|"
    r"[(){}\[\],;]+$|\w+\s+[\"'][\w./@-]+[\"']$|[\w, ]+,?$|//|#(?!\s*include)|/?\*)")


# Words that open a definition line, across the indexed languages.
DEFINITION_KEYWORDS = ("class", "def", "function", "func", "fn", "struct", "enum", "trait", "type", "interface")


def defines(text: str, name: str) -> bool:
    """Whether `text` has a line defining `name` (`class Name`, `def name(`, `func (r *T) Name(` ...)."""
    pat = (r"^[ \t]*(?:export\s+)?(?:default\s+)?(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?"
           r"(?:class|def|function\*?|func(?:\s*\([^)]*\))?|fn|struct|enum|trait|type|interface)\s+"
           + re.escape(name) + r"(?![\w$])")
    return re.search(pat, text, re.M) is not None


@dataclass(frozen=True)
class Intent:
    """What the query asks for, judged once per search."""

    docs: bool = False
    types: bool = False
    tests: bool = False
    changelog: bool = False
    metadata: bool = False
    code_question: bool = False  # how does X work / where is X handled / names code
    change_request: bool = False
    behaviour: bool = False  # how does X work / why is X / what happens when: asks what code does
    symbol: str = ""  # the query is this one name
    names: tuple[str, ...] = ()  # code names the query uses (the symbol, or names inside a sentence)


def read_intent(query: str, pasted: bool = False) -> Intent:
    q = query.strip()
    m = SYMBOL_QUERY.match(q)
    symbol = m.group(1) if m and not pasted else ""
    names: list[str] = [symbol] if symbol else []
    if not symbol and not pasted:
        for a, b in CODE_NAME.findall(q):
            name = (a or b).strip("`().:")
            if name and SYMBOL_QUERY.match(name) and name not in names:
                names.append(name)
    docs = bool(ASKS_FOR_DOCS.search(q))
    change = not pasted and not docs and bool(CHANGE_REQUEST.search(q))
    code_q = not pasted and not docs and bool(symbol or CODE_QUESTION.search(q) or WANTS_CODE.search(q) or change)
    return Intent(docs=docs, types=bool(ASKS_FOR_TYPES.search(q)), tests=bool(ASKS_FOR_TESTS.search(q)),
                  changelog=bool(ASKS_FOR_CHANGELOG.search(q)), metadata=bool(ASKS_FOR_METADATA.search(q)),
                  code_question=code_q, change_request=change, symbol=symbol, names=tuple(names[:8]),
                  behaviour=code_q and not change and bool(BEHAVIOUR_QUESTION.search(q)))


def path_kind(path: str, language: str = "") -> str:
    """What a file holds, for ranking: one of KINDS, each from core.pathkind's table."""
    if pathkind.is_generated(path):
        return "generated"
    if pathkind.is_type_declaration(path):
        return "types"
    if pathkind.is_changelog(path):
        return "changelog"
    if pathkind.is_low_signal(path):  # tests, examples, vendored or generated folders
        return "test"
    if language in DOC_LANGUAGES or pathkind.is_doc(path) or pathkind.is_prose_name(path):
        return "doc"
    return "code"


def chunk_kind(path: str, language: str = "", symbol: str = "") -> str:
    """path_kind, and a test module inside a source file (Rust's `mod tests`: every symbol `tests.x`) or code
    under a benchmarks folder counts as a test."""
    kind = path_kind(path, language)
    if kind == "code" and BENCH_DIR.search(path):
        return "test"
    if kind == "code" and symbol:
        parts = [p.strip() for p in symbol.split(",") if p.strip()]
        if parts and any("." in p for p in parts) and all(_test_module(p) for p in parts):
            return "test"
    return kind


def _test_module(part: str) -> bool:
    """`tests.x`, or anything in (or the header of) a module named like one (`fmt_tests`, `fmt_tests.parse`)."""
    head = part.split(".", 1)[0]
    return (head in ("tests", "test") and "." in part) or head.endswith(("_tests", "_test"))


def logic_lines(text: str, language: str = "") -> int:
    """How many lines of a chunk decide or do something (LOGIC_LINE, CALL_LINE), outside comments, docstrings
    and definitions' header lines."""
    if language in DOC_LANGUAGES:
        return 0
    n = 0
    lines = text.split("\n")
    # a chunk that opens inside a block comment (a long JSDoc cut by the chunker; got's have no leading `*`):
    # everything up to the first `*/` that no `/*` opened is comment
    cut = next((i for i, ln in enumerate(lines) if "*/" in ln), -1)
    if cut >= 0 and not any("/*" in ln for ln in lines[: cut + 1]):
        lines = lines[cut + 1:]
    closer = ""  # the end of the docstring or block comment being skipped
    in_string = False  # inside a double-quoted string carried over lines (Rust's `\` continuations)
    for ln in lines:
        st = ln.strip()
        if in_string:
            st, in_string = _outside_strings(st, True)
        if closer:
            if closer in st:
                closer = ""
            continue
        opener = st[:3] if st[:3] in ('"""', "'''") else "/*" if st.startswith("/*") else ""
        if opener:
            end = '*/' if opener == "/*" else opener
            if end not in st[len(opener):]:
                closer = end
            continue
        if not st or COMMENT_LINE.match(st) or DEFINITION_LINE.match(st):
            continue
        st, in_string = _outside_strings(st, False)
        if LOGIC_LINE.search(st) or (CALL_LINE.match(st) and not st.endswith(",")):
            n += 1
    return n


_DQ = re.compile(r'"(?:[^"\\]|\\.)*"')
_SQ = re.compile(r"'(?:[^'\\]|\\.)*'")
_DQ_END = re.compile(r'^(?:[^"\\]|\\.)*"')


def _outside_strings(st: str, in_string: bool) -> tuple[str, bool]:
    """A code line with its quoted strings emptied (help text saying "for each result" is not a loop), and
    whether a double-quoted string is still open at its end (a Rust string continued with a backslash)."""
    if in_string:
        m = _DQ_END.match(st)
        if m is None:
            return "", True
        st = st[m.end():]
    st = _SQ.sub("''", _DQ.sub("\0", st))
    lone = st.find('"')  # a string opened here and not closed on this line
    if lone >= 0:
        return st[:lone].replace("\0", '""'), True
    return st.replace("\0", '""'), False


_OVERVIEW_OPENERS = ('"""', "'''", "/*", "//!")


def module_overview(text: str, start_line: int) -> bool:
    """A file's opening chunk that starts with its documentation (a module docstring, a header doc comment):
    it says how the module works in prose, so a how-question does not read it as declarations."""
    if start_line != 1:
        return False
    for ln in text.split("\n"):
        st = ln.strip()
        if not st or st.startswith("#!") or (st.startswith("#") and "coding" in st):
            continue
        return st.startswith(_OVERVIEW_OPENERS)
    return False


def spread_bonus(others: list[float]) -> float:
    """What a code unit's best chunk gains from its other matching chunks' scores (best first)."""
    return SPREAD * sum(f * SPREAD_DECAY ** i for i, f in enumerate(sorted(others, reverse=True)))


def logic_weight(lines: int) -> float:
    """The multiplier a code chunk with this many logic lines gets under a how/why question."""
    return DECLARATIVE + (1.0 - DECLARATIVE) * min(1.0, lines / LOGIC_LINES) if LOGIC_LINES > 0 else 1.0


def kind_weights(kind: str, intent: Intent) -> tuple[float, float]:
    """(score multiplier, confidence multiplier) for a chunk of this kind under this query."""
    if kind == "generated" and not intent.metadata:
        return GENERATED, GENERATED_CONF
    if kind == "types" and intent.code_question and not intent.types:
        return TYPES_UNDER_CODE_QUESTION, 1.0
    if kind == "changelog" and not intent.changelog:  # release notes are prose too
        return CHANGELOG * kind_weights("doc", intent)[0], CHANGELOG_CONF
    if kind == "test" and not intent.tests:
        return TEST, TEST_CONF
    if kind == "doc" and not intent.docs:
        if intent.change_request:
            return DOC_UNDER_CHANGE, 1.0
        if intent.code_question:
            return DOC_UNDER_CODE_QUESTION, 1.0
    return 1.0, 1.0


def is_import_only(text: str, language: str = "") -> bool:
    """A chunk whose every line imports, re-exports or is blank/comment (at least two import lines)."""
    if language in DOC_LANGUAGES:
        return False
    lines = [ln for ln in text.split("\n") if ln.strip()]
    if len(lines) < 2:
        return False
    # every line first, stopping at the first that is not one (most chunks: the first or second line); a warm
    # search asks this of every candidate, and counting the imports of whole chunks first cost ~30 ms a query
    if not all(IMPORT_LINE.match(ln) for ln in lines):
        return False
    return sum(1 for ln in lines if _IMPORT_WORD.match(ln) or "require(" in ln) >= 2


_IMPORT_WORD = re.compile(r"^\s*(import|from|export|use|extern|mod|#\s*include|package)\b")
