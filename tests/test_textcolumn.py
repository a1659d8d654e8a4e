"""The in-memory text column (index/textcolumn.py): the rows holding a literal, as a scan finds them."""
from __future__ import annotations

import pytest

from hippo.index.textcolumn import TextColumn


def column(texts: list[str]) -> TextColumn:
    data, offsets = b"", [0]
    for t in texts:
        data += t.encode()
        offsets.append(len(data))
    return TextColumn.build(memoryview(b"prefix" + data), [o + 6 for o in offsets], list(range(100, 100 + len(texts))))


def scan(texts: list[str], term: str, limit: int) -> list[int]:
    return [k for k, t in enumerate(texts) if term in t][:limit]


TEXTS = ["def parse(x):", "", "raise KeyError(", "x", "KeyError(y) KeyError(z)", "ab", "cd", "é → ü", "abcd"]


@pytest.mark.parametrize("term", ["KeyError(", "KeyError", "bc", "abc", "b", "ab", "→", "é → ü", "parse(x):",
                                  "(x):raise", "nothing holds this", "d"])
@pytest.mark.parametrize("limit", [1, 2, 10])
def test_rows_holding_is_what_a_row_by_row_scan_finds(term, limit):
    # "bc" and "(x):raise" occur in the concatenated bytes only across row boundaries ("ab" + "cd")
    assert column(TEXTS).rows_holding(term, limit) == scan(TEXTS, term, limit)


def test_row_ids_follow_the_rows_and_an_empty_column_finds_nothing():
    col = column(TEXTS)
    assert [col.row_ids[k] for k in col.rows_holding("KeyError(", 5)] == [102, 104]
    assert column([]).rows_holding("x", 3) == []
    with pytest.raises(ValueError):
        TextColumn.build(b"ab", [0, 1, 2], [7])


def test_terms_sharing_a_middle_answer_as_each_alone():
    texts = ["it('parses a title', () => {", 'it("other title", fn)', "`other title`", "x 'parses a title'"]
    col = column(texts)
    terms = [f"{q}{t}{q}" for t in ("parses a title", "other title", "absent title") for q in "'\"`"] + ["ab", "x"]
    for limit in (1, 5):
        assert col.rows_holding_each(terms, limit) == {t: scan(texts, t, limit) for t in terms}


def test_many_terms_at_once_answer_as_a_row_by_row_scan_would():
    """Quoted titles found from their shared middle (overlapping, at row edges, a quote in the next row),
    terms holding a term no row holds, duplicates and a middle found too often to share a pass."""
    import random

    import hippo.index.textcolumn as textcolumn

    rnd = random.Random(5)
    pieces = ["'", '"', "`", "a", "ab", "is not a constructor", "X", " ", "é"]
    texts = ["".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 12))) for _ in range(300)]
    col = column(texts)
    middles = ["a", "ab", "aa", "is not a constructor", "X is", "é", "ab'a", "zz", "'a'"]
    terms = [q + m + r for m in middles for q in "'\"`" for r in "'\"`"] + ["X is not a constructor", "zzz", "é"] * 2
    for cap in (2, 4096):
        textcolumn.MAX_SHARED_HITS = cap
        try:
            for limit in (0, 1, 3, 50):
                assert col.rows_holding_each(terms, limit) == {t: scan(texts, t, limit) for t in terms}
        finally:
            textcolumn.MAX_SHARED_HITS = 4096


def test_a_subset_holds_just_its_rows():
    col = column(TEXTS)
    keep = [0, 2, 4, 8]
    sub = col.subset(keep)
    assert sub.row_ids == [col.row_ids[k] for k in keep]
    assert [sub.text(i) for i in range(len(keep))] == [TEXTS[k] for k in keep]
    kept = [TEXTS[k] for k in keep]
    for term in ("KeyError(", "abcd", "cd", "→", "(x):raise"):  # "cd" only in row 6, left out
        assert sub.rows_holding(term, 5) == scan(kept, term, 5)
    assert col.subset([]).rows_holding("x", 3) == []
