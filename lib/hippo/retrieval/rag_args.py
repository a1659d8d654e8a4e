"""Parse `/rag` argument strings and check user-supplied globs.

Shared by the /rag hook and the MCP server. Arguments arrive as one raw string typed by a
user (or, for MCP, chosen by the model), so nothing here ever reaches a shell: the string
is split by a small quote-aware tokenizer and every token is plain data. Stdlib only.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from hippo.core.errors import BadQueryError

MAX_K = 50
MAX_GLOB_LEN = 300
MAX_QUERY_LEN = 2000


@dataclass(frozen=True)
class RagArgs:
    """What the user asked for: free text plus the options /rag understands."""

    query: str
    keywords: tuple[str, ...] = ()
    globs: tuple[str, ...] = ()
    exact: bool = False
    k: int | None = None
    warnings: tuple[str, ...] = field(default=())


def tokenize(text: str) -> list[tuple[str, bool]]:
    """Split on whitespace, honouring '…', "…" and `…` quoting.

    Returns (token, was_quoted) pairs. An unclosed quote runs to the end of the string
    instead of failing: the input is a question, not a program.
    """
    tokens: list[tuple[str, bool]] = []
    buf: list[str] = []
    quoted = False
    in_token = False
    quote: str | None = None
    for ch in text:
        if quote is not None:
            if ch == quote:
                quote = None
            else:
                buf.append(ch)
            continue
        if ch in "'\"`":
            quote = ch
            quoted = True
            in_token = True
        elif ch.isspace():
            if in_token:
                tokens.append(("".join(buf), quoted))
            buf, quoted, in_token = [], False, False
        else:
            buf.append(ch)
            in_token = True
    if in_token:
        tokens.append(("".join(buf), quoted))
    return tokens


def check_glob(pattern: str, name: str = "file_pattern") -> str:
    """Return a normalised repo-relative glob or raise BadQueryError saying what is wrong.

    Globs are matched against paths relative to the repository root, so an absolute
    pattern or one that climbs out with `..` can never match and is almost always a
    mistake (or an attempt to read outside the repo): reject it with a clear message.
    """
    p = pattern.strip()
    if not p:
        raise BadQueryError(f"{name} is empty; omit it or give a glob such as 'src/**/*.py'.")
    if len(p) > MAX_GLOB_LEN:
        raise BadQueryError(f"{name} is longer than {MAX_GLOB_LEN} characters.")
    if "\x00" in p or any(ord(c) < 32 for c in p):
        raise BadQueryError(f"{name} contains control characters.")
    p = p.replace("\\", "/")
    if p.startswith("/") or p.startswith("~") or re.match(r"^[A-Za-z]:", p):
        raise BadQueryError(
            f"{name} {pattern!r} is absolute; use a path relative to the repository root, e.g. 'src/**/*.py'."
        )
    if ".." in p.split("/"):
        raise BadQueryError(f"{name} {pattern!r} points outside the repository ('..' is not allowed).")
    if p.count("[") != p.count("]"):
        raise BadQueryError(f"{name} {pattern!r} has an unbalanced '[' or ']'.")
    if p.count("{") != p.count("}"):
        raise BadQueryError(f"{name} {pattern!r} has an unbalanced '{{' or '}}'.")
    while p.startswith("./"):
        p = p[2:]
    return p


def check_query(query: str) -> str:
    q = " ".join(query.split())
    if not q:
        raise BadQueryError("The query is empty: say what to look for, e.g. 'where is the retry policy configured'.")
    if len(q) > MAX_QUERY_LEN:
        q = q[:MAX_QUERY_LEN]
    return q


def _take_value(tokens: list[tuple[str, bool]], i: int, name: str) -> tuple[str, int]:
    tok, quoted = tokens[i]
    if not quoted and "=" in tok and tok.startswith(f"--{name}="):
        return tok.split("=", 1)[1], i + 1
    if i + 1 >= len(tokens):
        raise BadQueryError(f"--{name} needs a value.")
    return tokens[i + 1][0], i + 2


def parse_rag_args(text: str) -> RagArgs:
    """Turn `/rag` arguments into a RagArgs; raise BadQueryError for unusable input.

    Understood options: --glob PATTERN (repeatable), --exact, --k N, --keyword K
    (repeatable). Quoted phrases are also used as keywords (they boost ranking and are
    what --exact filters on). Everything else is the natural-language query. `--` ends
    option parsing.
    """
    tokens = tokenize(text or "")
    words: list[str] = []
    keywords: list[str] = []
    globs: list[str] = []
    exact = False
    k: int | None = None
    i = 0
    options_done = False
    while i < len(tokens):
        tok, quoted = tokens[i]
        opt = None if (quoted or options_done) else tok.split("=", 1)[0]
        if opt == "--":
            options_done = True
            i += 1
        elif opt == "--exact":
            exact = True
            i += 1
        elif opt in ("--glob", "--keyword", "--k"):
            name = opt[2:]
            value, i = _take_value(tokens, i, name)
            if name == "glob":
                globs.append(check_glob(value))
            elif name == "keyword":
                if value.strip():
                    keywords.append(value.strip())
            else:
                try:
                    k = int(value)
                except ValueError:
                    raise BadQueryError(f"--k wants a whole number, got {value!r}.") from None
                if not 1 <= k <= MAX_K:
                    raise BadQueryError(f"--k must be between 1 and {MAX_K}, got {k}.")
        else:
            if quoted and tok.strip():
                keywords.append(tok.strip())
            words.append(tok)
            i += 1
    query = check_query(" ".join(words))
    # Keep order, drop duplicates.
    kw = tuple(dict.fromkeys(keywords))
    return RagArgs(query=query, keywords=kw, globs=tuple(dict.fromkeys(globs)), exact=exact, k=k)
