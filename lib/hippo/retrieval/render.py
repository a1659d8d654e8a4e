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


_INVALID_XML = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _strip_invalid_xml_chars(text: str) -> str:
    """XML 1.0 forbids most control characters, even in CDATA; replace them so the document stays well-formed."""
    return _INVALID_XML.sub("\ufffd", text)


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
    if resp.message and not resp.hits:  # "no high-confidence results" comes before the weak pointers
        lines.append(resp.message)
    if resp.candidates:
        lines.append("More candidates (not shown):" if resp.hits else "Weak candidates:")
        lines.extend(f"  {candidate_line(c)}" for c in resp.candidates)
        lines.append("")
    if resp.message and resp.hits:
        lines.append(resp.message)
    m = resp.meta
    lines.append(f"[{m.get('returned_hits', len(resp.hits))} of {m.get('total_hits', '?')} hits, "
                 f"{m.get('latency_ms', '?')} ms, {m.get('search_strategy', '')}"
                 f"{', indexed ' + _short_commit(m['indexed_commit']) if m.get('indexed_commit') else ''}"
                 f"{', ' + m['index_status'] if m.get('index_status') else ''}]")
    return "\n".join(lines)


def failure_xml(hits: list[dict], candidates: list[dict] = ()) -> str:  # type: ignore[assignment]
    """The failure hook's `<search_results>`: per result only the seed's fields (source_file, lines,
    language, last_modified, score) and `why`, the one-line reason it is evidence; no id or meta block.
    `candidates` (path, start_line, end_line, symbol, score, why) follow as `<more_candidates>` pointers."""
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
    if candidates:
        out.append("<more_candidates>")
        for c in candidates:
            attrs = (f"path={quoteattr(display(c['path']))} lines=\"{int(c['start_line'])}-{int(c['end_line'])}\""
                     f" symbol={quoteattr(display(c.get('symbol') or ''))}"
                     f" score={quoteattr(format(float(c.get('score') or 0), '.2f'))}")
            if c.get("why"):
                attrs += f" why={quoteattr(display(_strip_invalid_xml_chars(str(c['why']))))}"
            out.append(f"<candidate {attrs}/>")
        out.append("</more_candidates>")
    out.append("</search_results>")
    return "\n".join(out)


# --- structural answers (hippo.retrieval.structure: def / callers / callees) ---------------------------------------
def _code_lines(text: str, indent: str = "    ") -> list[str]:
    return [f"{indent}{_UNSAFE_IN_CODE.sub(_escape_char, src)}" for src in text.splitlines()]


def _target(t: dict) -> str:
    return f"{display(t['path'])}:{t['start_line']}-{t['end_line']}  {display(t['symbol'])}"


def structure_text(data: dict) -> str:
    """`hippo def/callers/callees` for a terminal: `path:start-end  symbol` lines, code indented."""
    lines: list[str] = []
    op = data.get("op")
    defs = data.get("definitions") or []
    for n, d in enumerate(defs if op == "def" else defs[:1], 1):
        lines.append(f"{n}. {_target(d)}  ({d['kind']})" if op == "def" else f"{_target(d)}  ({d['kind']})")
        lines.extend(_code_lines(d.get("text") or ""))
        lines.append("")
    if op == "callers" and data.get("results"):
        used = any(r["resolved"] == "value" for r in data["results"])
        lines.append(f"{'called or used' if used else 'called'} from {len(data['results'])} place(s):")
        for r in data["results"]:
            inside = f"in {display(r['symbol'])} ({r['start_line']}-{r['end_line']})" if r["symbol"] else "at module level"
            weak = {"exact": "", "value": "  [used as a value: read, handed on or registered]"}.get(r["resolved"], "  [by name only]")
            lines.append(f"  {display(r['path'])}:{r['line']}  {inside}{weak}")
            lines.extend(_code_lines(r.get("text") or "", "      "))
    if op == "callees" and data.get("results"):
        lines.append("calls:")
        for r in data["results"]:
            where = "; ".join(_target(t) for t in r["targets"]) or "(not defined in this repository)"
            weak = "  [by name only]" if r["resolved"] == "name" else ""
            lines.append(f"  line {r['line']}  {display(r['callee'])} -> {where}{weak}")
    if data.get("message"):
        lines.append(str(data["message"]))
    return "\n".join(lines).rstrip("\n")


def structure_json(data: dict) -> str:
    """Stable schema: {"op", "name", "definitions": [{path, symbol, kind, start_line, end_line, text}],
    "results": [...], "message", "indexed_commit"}."""
    return _json_safe(json.dumps(data, ensure_ascii=False, indent=2))


def structure_xml(data: dict) -> str:
    """`<structure_results op name>`: `<definition path lines symbol kind>` with its head as CDATA, then
    `<caller path line symbol lines resolved>` or `<callee line name resolved>` with `<target/>` pointers."""
    out = [f"<structure_results op={quoteattr(str(data.get('op')))} name={quoteattr(display(data.get('name', '')))}>"]
    for d in data.get("definitions") or []:
        out.append(f"  <definition path={quoteattr(display(d['path']))} lines=\"{int(d['start_line'])}-{int(d['end_line'])}\""
                   f" symbol={quoteattr(display(d['symbol']))} kind={quoteattr(str(d['kind']))}>{_cdata(d.get('text') or '')}"
                   "</definition>")
    for r in data.get("results") or []:
        if data.get("op") == "callers":
            out.append(f"  <caller path={quoteattr(display(r['path']))} line=\"{int(r['line'])}\""
                       f" symbol={quoteattr(display(r['symbol']))} lines=\"{int(r['start_line'])}-{int(r['end_line'])}\""
                       f" resolved={quoteattr(str(r['resolved']))}>{_text(r.get('text') or '')}</caller>")
        else:
            targets = "".join(f"<target path={quoteattr(display(t['path']))} lines=\"{int(t['start_line'])}-"
                              f"{int(t['end_line'])}\" symbol={quoteattr(display(t['symbol']))}/>" for t in r["targets"])
            out.append(f"  <callee line=\"{int(r['line'])}\" name={quoteattr(display(r['callee']))}"
                       f" resolved={quoteattr(str(r['resolved']))}>{targets}</callee>")
    if data.get("message"):
        out.append(f"  <message>{_text(data['message'])}</message>")
    out.append("</structure_results>")
    return "\n".join(out)
