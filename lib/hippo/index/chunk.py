"""The Chunk: one contiguous, line-exact piece of a file. Shared by chunking, indexing and search."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass


@dataclass(frozen=True)
class Chunk:
    """A contiguous run of lines of one file.

    `text` is exactly lines `start_line..end_line` (1-based, inclusive) of the file, joined with
    "\\n" and without a trailing newline, so `text.count("\\n") == end_line - start_line`.
    """

    path: str  # relative to the repo root, POSIX separators
    start_line: int
    end_line: int
    language: str  # "python", "markdown", "text", ...
    text: str
    symbol: str = ""  # qualified name of the unit, e.g. "AuthService.validate_token"
    kind: str = ""  # function | class | method | section | window | module | group ...
    breadcrumb: str = ""  # Markdown/RST heading path, e.g. "Install > Linux"

    @property
    def content_hash(self) -> str:
        """Hash of the text alone: the key for reusing an embedding wherever the text recurs."""
        return hashlib.sha1(self.text.encode("utf-8", "surrogatepass")).hexdigest()


def chunk_id(path: str, content_hash: str, occurrence: int = 0) -> str:
    """Stable id from path + content (+ which repeat of identical content within the file)."""
    raw = f"{path}\0{content_hash}\0{occurrence}".encode("utf-8", "surrogatepass")
    return hashlib.sha1(raw).hexdigest()[:20]
