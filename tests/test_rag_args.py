"""/rag argument parsing and glob checks: options, quoting, hostile text stays inert data."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hippo.core.errors import BadQueryError
from hippo.retrieval.rag_args import check_glob, parse_rag_args, tokenize


def test_plain_query():
    a = parse_rag_args("where is the retry policy configured")
    assert a.query == "where is the retry policy configured"
    assert (a.keywords, a.globs, a.exact, a.k) == ((), (), False, None)


def test_options_anywhere_and_equals_form():
    a = parse_rag_args("--k 3 token expiry --glob 'src/**/*.py' --exact --glob=docs/*.md")
    assert a.query == "token expiry"
    assert a.globs == ("src/**/*.py", "docs/*.md")
    assert a.exact is True and a.k == 3


def test_quoted_phrases_become_keywords():
    a = parse_rag_args('where is "TokenExpiredError" raised --keyword ERR_503')
    assert a.query == "where is TokenExpiredError raised"
    assert a.keywords == ("TokenExpiredError", "ERR_503")


def test_double_dash_ends_options():
    a = parse_rag_args("what does -- --exact mean")
    assert a.query == "what does --exact mean" and a.exact is False


@pytest.mark.parametrize("text, msg", [
    ("", "empty"),
    ("   \n\t ", "empty"),
    ("--exact", "empty"),
    ("foo --k", "needs a value"),
    ("foo --k many", "whole number"),
    ("foo --k 0", "between 1 and 50"),
    ("foo --k 51", "between 1 and 50"),
    ("foo --glob /etc/*", "absolute"),
    ("foo --glob ../other/**", "outside the repository"),
    ("foo --glob src/../../x", "outside the repository"),
    ("foo --glob C:/x/*.py", "absolute"),
    ("foo --glob '[abc'", "unbalanced"),
])
def test_bad_input_has_clear_message(text, msg):
    with pytest.raises(BadQueryError, match=msg):
        parse_rag_args(text)


@pytest.mark.parametrize("hostile, query", [
    ("$(touch /tmp/pwned)", "$(touch /tmp/pwned)"),
    ("`touch /tmp/pwned`", "touch /tmp/pwned"),
    ("a'b\"c", 'ab"c'),  # inside '…' a double quote is just a character
    ("x; rm -rf ~ && echo $HOME", "x; rm -rf ~ && echo $HOME"),
    ("line one\nline two\r\n$(id)", "line one line two $(id)"),
    ("'unterminated quote $(id)", "unterminated quote $(id)"),
])
def test_hostile_text_is_only_query_data(hostile, query):
    # Nothing is expanded or executed: the characters come back as plain query text.
    assert parse_rag_args(hostile).query == query


def test_glob_normalisation():
    assert check_glob("./src/*.py") == "src/*.py"
    assert check_glob("src\\win\\*.py") == "src/win/*.py"
    assert check_glob("**/*.md") == "**/*.md"
    assert check_glob("a..b/*.py") == "a..b/*.py"  # '..' inside a name is fine


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_parser_never_crashes(text):
    try:
        a = parse_rag_args(text)
    except BadQueryError:
        return
    assert a.query and a.query == a.query.strip()


@given(st.text(alphabet=st.characters(blacklist_characters="'\"`"), max_size=100))
def test_tokenize_without_quotes_is_split(text):
    assert [t for t, _ in tokenize(text)] == text.split()
