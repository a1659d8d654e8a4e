"""Render a SearchResponse as the seed's XML payload, a stable JSON schema, or text for people.

Stdlib only (hooks call this). Retrieved text is untrusted data: every value is XML-escaped and snippets
go in CDATA with any `]]>` split so repository content can never close our tags.
"""
from __future__ import annotations

import json
import re

from hippo.retrieval.results import SearchResponse

META_KEYS = ("total_hits", "returned_hits", "latency_ms", "search_strategy", "indexed_commit",
             "index_status")


# Characters that change how a name is displayed instead of being part of it: C0/C1 controls (a file named
# "\x1b[2J" clears the terminal), bidi overrides and isolates (U+202E shows "evil\u202egnp.py" as
# "evilyp.png"), zero-width and line-separator characters, and lone surrogates (undecodable file names).
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ud800-\udfff]")


_UNSAFE_IN_CODE = re.compile(_UNSAFE.pattern.replace("\x00-\x1f", "\x00-\x08\x0a-\x1f"))  # tabs are code
_UNSAFE_IN_JSON = re.compile(_UNSAFE.pattern.replace("\x00-\x1f", ""))  # json.dumps escaped C0 already


def _escape_char(m: re.Match[str]) -> str:
    code = ord(m.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def display(name: object) -> str:
    """A file name (or any short label) as text that shows what it is: unsafe characters become `\u202e`."""
    return _UNSAFE.sub(_escape_char, str(name))


def _json_safe(text: str) -> str:
    """JSON text with unsafe characters as \\u escapes: the value decodes to the real name, the text shows it."""
    return _UNSAFE_IN_JSON.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)


def escape(text: str) -> str:
    """XML character data (hand-written: xml.sax.saxutils pulls in urllib and http.client, ~50 ms per hook)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def quoteattr(text: str) -> str:
    """A double-quoted XML attribute value."""
    return '"' + escape(text).replace('"', "&quot;").replace("\n", "&#10;").replace("\t", "&#9;") + '"'


def _cdata(text: str) -> str:
    # "]]>" cannot appear inside CDATA: end the section between "]]" and ">" and reopen it.
    safe = _strip_invalid_xml_chars(text).replace("]]>", "]]]]><![CDATA[>")
    return f"<![CDATA[\n{safe}\n]]>"


def _strip_invalid_xml_chars(text: str) -> str:
    """XML 1.0 forbids most control characters, even in CDATA; replace them so the document stays well-formed."""
    return "".join(
        ch if ch in "\t\n\r" or (" " <= ch <= "\ud7ff") or ("\ue000" <= ch <= "\ufffd")
        or ("\U00010000" <= ch <= "\U0010ffff") else "\ufffd"
        for ch in text
    )


def _text(value: object) -> str:
    return escape(_strip_invalid_xml_chars(str(value)))


# Public names for the hook that frames other repository text (the brief, commit subjects) as data.
escape_text = _text
cdata = _cdata


def to_xml(resp: SearchResponse) -> str:
    """The `<search_results>` document Claude receives (format in docs/plugin.md)."""
    out = ["<search_results>", "  <meta>"]
    for key in META_KEYS:
        if key in resp.meta and resp.meta[key] not in (None, ""):
            out.append(f"    <{key}>{_text(resp.meta[key])}</{key}>")
    out.append("  </meta>")
    for hit in resp.hits:
        attrs = f"id={quoteattr(display(hit.id))} score={quoteattr(f'{hit.score:.2f}')}"
        if hit.stale:
            attrs += ' stale="true"'
        out.append(f"  <result {attrs}>")
        out.append(f"    <source_file>{escape(display(hit.path))}</source_file>")
        out.append(f"    <lines>{hit.start_line}-{hit.end_line}</lines>")
        out.append(f"    <language>{_text(hit.language)}</language>")
        if hit.symbol:
            out.append(f"    <symbol>{escape(display(hit.symbol))}</symbol>")
        if hit.last_modified:
            out.append(f"    <last_modified>{_text(hit.last_modified)}</last_modified>")
        out.append(f"    <snippet>{_cdata(hit.snippet)}</snippet>")
        out.append("  </result>")
    out.extend(_candidates_xml(resp))
    if resp.message:
        out.append(f"  <message>{_text(resp.message)}</message>")
    out.append("</search_results>")
    return "\n".join(out)


CANDIDATES_NOTE = "more files that match, not shown; read one before relying on it"


def candidate_element(c) -> str:
    """One pointer as an empty `<candidate/>` element; every value is an escaped attribute."""
    attrs = f"path={quoteattr(display(c.path))} lines=\"{c.start_line}-{c.end_line}\""
    if c.symbol:
        attrs += f" symbol={quoteattr(display(c.symbol))}"
    return f"    <candidate {attrs} score={quoteattr(f'{c.score:.2f}')}/>"


CANDIDATES_OPEN = f"  <more_candidates note={quoteattr(CANDIDATES_NOTE)}>"
CANDIDATES_CLOSE = "  </more_candidates>"


def _candidates_xml(resp: SearchResponse) -> list[str]:
    if not resp.candidates:
        return []
    return [CANDIDATES_OPEN, *(candidate_element(c) for c in resp.candidates), CANDIDATES_CLOSE]


def candidate_line(c) -> str:
    """The text form of one pointer: `path:start-end  symbol  (score)`."""
    sym = f"  {display(c.symbol)}" if c.symbol else ""
    return f"{display(c.path)}:{c.start_line}-{c.end_line}{sym}  ({c.score:.2f})"


def to_json(resp: SearchResponse) -> str:
    """Stable schema: {"query", "results": [{path, start_line, end_line, language, score, last_modified,
    stale, snippet, symbol, id}], "candidates": [{path, start_line, end_line, symbol, score}], "meta": {...},
    "message"}."""
    results = [
        {"path": h.path, "start_line": h.start_line, "end_line": h.end_line, "language": h.language,
         "score": round(h.score, 4), "last_modified": h.last_modified, "stale": h.stale,
         "snippet": h.snippet, "symbol": h.symbol, "id": h.id}
        for h in resp.hits
    ]
    candidates = [{"path": c.path, "start_line": c.start_line, "end_line": c.end_line, "symbol": c.symbol,
                   "score": round(c.score, 4)} for c in resp.candidates]
    return _json_safe(json.dumps({"query": resp.query, "results": results, "candidates": candidates,
                                  "meta": resp.meta, "message": resp.message}, ensure_ascii=False, indent=2))


def _short_commit(value: object) -> str:
    """A sha shortened to 10 characters; anything else (e.g. "none (not a git commit)") whole."""
    text = str(value)
    return text[:10] if len(text) >= 7 and all(c in "0123456789abcdef" for c in text) else text


def to_text(resp: SearchResponse) -> str:
    """Readable listing for a terminal."""
    lines = []
    for n, h in enumerate(resp.hits, 1):
        flag = "  [stale: file changed since indexing]" if h.stale else ""
        sym = f"  {display(h.symbol)}" if h.symbol else ""
        lines.append(f"{n}. {display(h.path)}:{h.start_line}-{h.end_line}  ({h.language}, score {h.score:.2f}"
                     f"{', ' + h.last_modified if h.last_modified else ''}){sym}{flag}")
        for src in h.snippet.splitlines():  # a terminal must not run escape sequences from the repository
            lines.append(f"    {_UNSAFE_IN_CODE.sub(_escape_char, src)}")
        lines.append("")
    if resp.candidates:
        lines.append("More candidates (not shown):")
        lines.extend(f"  {candidate_line(c)}" for c in resp.candidates)
        lines.append("")
    if resp.message:
        lines.append(resp.message)
    m = resp.meta
    lines.append(f"[{m.get('returned_hits', len(resp.hits))} of {m.get('total_hits', '?')} hits, "
                 f"{m.get('latency_ms', '?')} ms, {m.get('search_strategy', '')}"
                 f"{', indexed ' + _short_commit(m['indexed_commit']) if m.get('indexed_commit') else ''}"
                 f"{', ' + m['index_status'] if m.get('index_status') else ''}]")
    return "\n".join(lines)


def failure_xml(hits: list[dict]) -> str:
    """The failure hook's `<search_results>`: per result only the seed's fields (source_file, lines,
    language, last_modified, score) and `why`, the one-line reason it is evidence; no id or meta block."""
    out = ["<search_results>"]
    for h in hits:
        attrs = f"score={quoteattr(format(float(h.get('score') or 0), '.2f'))}"
        if h.get("why"):
            attrs += f" why={quoteattr(display(_strip_invalid_xml_chars(str(h['why']))))}"
        out.append(f"<result {attrs}>")
        out.append(f"<source_file>{escape(display(h['path']))}</source_file><lines>{int(h['start_line'])}-"
                   f"{int(h['end_line'])}</lines><language>{_text(h.get('language') or '')}</language>"
                   + (f"<last_modified>{_text(h['last_modified'])}</last_modified>" if h.get("last_modified") else ""))
        out.append(f"<snippet>{_cdata(h['snippet'])}</snippet>")
        out.append("</result>")
    out.append("</search_results>")
    return "\n".join(out)
