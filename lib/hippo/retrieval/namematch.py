"""Definitions whose names carry a question's words, as candidates of their own.

"How does the progress bar estimate the remaining time" is answered by `time_remaining`, but the chunk
defining it may share too few words with the question for full-text search, or be crowded out by prose
that shares more, so it never becomes a candidate. The index's symbol table knows every defined name;
this module reads a question's words against the words of those names (`_calculate_column_widths` ->
calculate, column, widths) and names the definitions that carry most of them, rare words counting more.
Words match on a shared head (`proxies`/`proxy`, `decoded`/`decoder`, `suggest`/`SuggestionsFor`).
Stdlib only.
"""
from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass

from hippo.core.textutil import STOP_WORDS, split_identifier

# Name words that say nothing about what a definition does.
GENERIC = frozenset({"get", "set", "is", "has", "new", "make", "do", "to", "from", "for", "with", "of", "on", "by",
                     "the", "and", "or", "in", "at", "self", "this", "init", "impl", "default", "value", "data",
                     "obj", "object", "item", "items", "arg", "val", "fn", "func", "cb", "callback", "internal",
                     "helper", "util", "utils", "base", "main", "run", "handle", "handler", "test"})
# The shared stop words minus those that name what code does (`Find`, `show_help`).
STOPS = STOP_WORDS - {"find", "show"}
QUESTION_WORDS = frozenset({"work", "works", "working", "handled", "happen", "happens", "decided", "done", "implemented",
                            "change", "would", "where", "which", "what", "how", "does", "code", "called"})
IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*")
MIN_SHARE = 0.5  # of a name's words the question must carry (`spawn_senders` for "send results")
HEAD = 4  # words are bucketed by their first HEAD letters
MIN_SHARED = 4  # two words match when they share this many first letters ...
SLACK = 2  # ... and the shorter one at most this many more (proxy/proxies, parse/parsed, send/senders)


def words_of(name: str) -> list[str]:
    """Lower-cased words of a name's last part (`Client._merge_url` -> merge, url)."""
    last = re.split(r"[.:#]", name)[-1]
    return [w.lower() for w in split_identifier(last.strip("_$")) if w and not w.isdigit()]


def same_word(a: str, b: str) -> bool:
    if a == b:
        return True
    shared = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        shared += 1
    return shared >= MIN_SHARED and shared >= min(len(a), len(b)) - SLACK


def question_words(query: str) -> list[str]:
    """The content words of a question (identifiers split), in order, once each."""
    out: list[str] = []
    for tok in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", query):
        for w in [tok, *split_identifier(tok)]:
            low = w.lower().strip("_")
            if len(low) > 2 and low not in STOPS and low not in QUESTION_WORDS and low not in out:
                out.append(low)
    return out


@dataclass
class NameIndex:
    """Every defined name (last part) by the heads of its words, with how many names share each word."""

    words: dict[str, tuple[str, ...]]  # name -> its content words
    by_head: dict[str, set[str]]  # first HEAD letters of a word -> names holding such a word
    df: dict[str, int]  # word -> names holding it
    total: int

    @classmethod
    def build(cls, names: Iterable[str]) -> NameIndex:
        words: dict[str, tuple[str, ...]] = {}
        by_head: dict[str, set[str]] = {}
        df: dict[str, int] = {}
        for name in names:
            if not IDENTIFIER.fullmatch(name):  # a heading a prose chunk is named by, not a definition
                continue
            ws = tuple(dict.fromkeys(w for w in words_of(name) if w not in GENERIC and len(w) > 1))
            if not ws or name in words:
                continue
            words[name] = ws
            for w in ws:
                df[w] = df.get(w, 0) + 1
                by_head.setdefault(w[:HEAD], set()).add(name)
        return cls(words, by_head, df, max(1, len(words)))

    def idf(self, word: str) -> float:
        return math.log(1.0 + self.total / (1.0 + self.df.get(word, 0)))

    def best(self, query: str, limit: int) -> list[tuple[str, float, float]]:
        """Up to `limit` names carrying the question's words, best first, as (name, score, strength): the
        score is the summed rarity of the question words a name carries, times the root of the share of the
        name's words they cover (a name of three words matching one is weaker than a name of one); the
        strength (0..1, what the reranker reads) is that share, halved for a name of one word. A name needs
        MIN_SHARE of its words matched."""
        qwords = question_words(query)
        if not qwords:
            return []
        scored: dict[str, tuple[float, float]] = {}
        for name in {n for q in qwords for n in self.by_head.get(q[:HEAD], ())}:
            ws = self.words[name]
            matched = [w for w in ws if any(same_word(w, q) for q in qwords)]
            if not matched or len(matched) / len(ws) < MIN_SHARE:
                continue
            rarity = sum(self.idf(w) for w in matched)
            share = len(matched) / len(ws)
            scored[name] = (rarity * share ** 0.5, share * min(1.0, len(matched) / 2))
        ranked = sorted(scored.items(), key=lambda kv: (-kv[1][0], kv[0]))[:limit]
        return [(name, score, strength) for name, (score, strength) in ranked]


_BY_LENGTH: list = [(None, {})]  # [(the names list last banded, its names by length)], swapped whole


def closest_name(name: str, names: list[str], cutoff: float = 0.75) -> str | None:
    """difflib.get_close_matches(name, names, 1, cutoff)[0], or None: the same answer, asked only of the
    names whose length lets them reach `cutoff` (a ratio is at most 2 * shorter / (both lengths)), so a
    typo's lookup does not compare against every name a big repository defines. The bands are kept for
    the last `names` list (the store hands out one per table version)."""
    import difflib

    banded, bands = _BY_LENGTH[0]
    if banded is not names:
        bands = {}
        for n in names:
            bands.setdefault(len(n), []).append(n)
        _BY_LENGTH[0] = (names, bands)
    size = len(name)
    fits = [n for length, group in bands.items()
            if size + length and 2 * min(size, length) / (size + length) >= cutoff for n in group]
    close = difflib.get_close_matches(name, fits, n=1, cutoff=cutoff)
    return close[0] if close else None
