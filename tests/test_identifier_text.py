"""The full-text column's identifier expansion: same text as ever, each distinct identifier split once."""
from __future__ import annotations

import pytest

from hippo.core import textutil


def test_identifier_text_splits_compound_names_and_keeps_the_whole() -> None:
    text = "def getUserName(user_name): return HTTPServer.x"
    assert textutil.identifier_text(text, "pkg/io_utils.py") == (
        "def get User Name getUserName user name user_name return HTTP Server HTTPServer x "
        "pkg io utils io_utils py")


def test_each_distinct_identifier_is_split_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A 10k-file repository holds ~8 million identifier occurrences of far fewer names; splitting every
    occurrence anew was about a tenth of the keyword phase's CPU."""
    calls: list[str] = []
    real = textutil.split_identifier

    def counting(tok: str) -> list[str]:
        calls.append(tok)
        return real(tok)

    monkeypatch.setattr(textutil, "split_identifier", counting)
    if hasattr(textutil, "_expanded"):
        textutil._expanded.cache_clear()
    chunk = "for item in items:\n    item.loadUser(item, self.loadUser)\n" * 50
    first = textutil.identifier_text(chunk)
    second = textutil.identifier_text(chunk)
    assert first == second and first.startswith("for item in items item load User loadUser item self")
    assert sorted(calls) == sorted({"for", "item", "in", "items", "loadUser", "self"})


def test_text_terms_matches_splitting_every_occurrence():
    from hippo.core.textutil import split_identifier, text_terms

    def every_occurrence(text: str) -> set[str]:
        import re

        out: set[str] = set()
        for tok in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text):
            out.add(tok.lower())
            out.update(p.lower() for p in split_identifier(tok))
        return out

    for text in ["def getUserName(self): return self.user_name", "HTTPServer x = HTTPServer(); __init__ _x9 9z",
                 "", "a.b.c getUserName getUserName XMLHttpRequest ünïcode_name", "class Foo_Bar(BazQux2): pass"]:
        assert text_terms(text) == every_occurrence(text)
    assert {"get", "user", "name", "getusername"} <= text_terms("getUserName")
