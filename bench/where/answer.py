"""Which files an answer names, in the order a reader meets them: result snippets, then candidate pointers."""
from __future__ import annotations

import xml.etree.ElementTree as ET


def files_named(text: str) -> list[str]:
    """Distinct paths from a `<search_results>` document (results' <source_file>, then <candidate path=>)."""
    start = text.find("<search_results>")
    if start < 0:
        return []
    end = text.find("</search_results>", start)
    root = ET.fromstring(text[start: end + len("</search_results>")])
    out: list[str] = []
    for el in root.iter():
        path = None
        if el.tag == "source_file":
            path = (el.text or "").strip()
        elif el.tag == "candidate":
            path = el.get("path")
        if path and path not in out:
            out.append(path)
    return out


def recall_at(files: list[str], gold: list[str], k: int = 10) -> float:
    top = set(files[:k])
    return sum(1 for g in gold if g in top) / len(gold)


def mrr_at(files: list[str], gold: list[str], k: int = 10) -> float:
    for i, f in enumerate(files[:k], 1):
        if f in gold:
            return 1.0 / i
    return 0.0
