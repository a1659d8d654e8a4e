"""Chunking: turn one file's text into line-exact `Chunk`s. Pure: no I/O, no model.

Code goes through tree-sitter (`code.py`), Markdown/RST through headings (`markup.py`), anything
else, and code that fails to parse, through overlapping line windows (`lines.py`).

Guarantees for every chunk: 1-based inclusive `start_line..end_line`; `text` is exactly those
lines joined by "\\n" ("\\r\\n" counts as one break, the "\\r" is dropped), except that a single
line longer than `MAX_CHUNK_CHARS` is cut to that many characters (minified code, data blobs:
the chunk still names the full line range). Chunks come in file order and together cover every
non-blank line; blank lines at chunk edges are trimmed. Only plain-text windows overlap.
"""
from __future__ import annotations

from dataclasses import replace

from hippo.index.chunk import Chunk
from hippo.index.chunking.languages import CODE_LANGUAGES, MARKUP_LANGUAGES, detect_language, sniff_shebang
from hippo.index.chunking.lines import MAX_CHARS, MAX_CHUNK_CHARS, MAX_LINES, Budget, Lines, split_lines, window_chunks

__all__ = ["Budget", "MAX_CHARS", "MAX_CHUNK_CHARS", "MAX_LINES", "chunk_file",
           "detect_language", "split_lines"]


def chunk_file(path: str, text: str, *, language: str | None = None,
               budget: Budget | None = None, graph: list | None = None) -> list[Chunk]:
    """Chunks of `text`, the content of repo-relative POSIX `path`.

    Args:
        path: repo-relative path; picks the language and is copied into each chunk.
        text: the decoded file content.
        language: override `detect_language(path)`.
        budget: size limits; the default is ~1,500 chars / 60 lines per chunk. max_chars is
            clamped to MAX_CHUNK_CHARS.
        graph: when a list, the file's code graph (`chunking.graph.FileGraph`) is appended to it
            for languages with graph rules, from the same parse as the chunks.
    """
    lines = split_lines(text)
    if not any(ln.strip() for ln in lines):
        return []
    lang = language or detect_language(path) or "text"
    if lang == "text" and lines:
        lang = sniff_shebang(lines[0]) or lang
    budget = budget or Budget()
    if budget.max_chars > MAX_CHUNK_CHARS:  # the hard cap wins over any budget
        budget = replace(budget, max_chars=MAX_CHUNK_CHARS)
    doc = Lines(path, lang, lines, budget)
    if lang in CODE_LANGUAGES:
        from hippo.index.chunking.code import chunk_code  # keeps tree-sitter off the import path

        chunks = chunk_code(doc, lang, graph)
        if chunks is not None:
            return chunks
        return window_chunks(doc)
    if lang in MARKUP_LANGUAGES:
        from hippo.index.chunking.markup import chunk_markup

        return chunk_markup(doc, lang)
    return window_chunks(doc)
