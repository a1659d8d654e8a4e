"""hippo.index.chunking.headings: the one Markdown/RST heading parser, shared by the chunker and the brief."""
from __future__ import annotations

from pathlib import Path

import pytest

from hippo.index.chunking import chunk_file, headings
from hippo.push.brief.conventions import sections
from regex_shape import literal_patterns, problems


@pytest.mark.parametrize("line, want", [
    ("# Title", (1, "Title")),
    ("###### Six", (6, "Six")),
    ("####### seven", None),  # more than six is a paragraph
    ("#Tight", None),  # no space after the run
    ("   ## Indented", (2, "Indented")),  # up to three spaces
    ("    # code", None),  # four is an indented code block
    ("\t# tab", None),
    ("## Closed ##", (2, "Closed")),  # a closing run after a space is not part of the title
    ("# C# and F#", (1, "C# and F#")),  # ... one glued to a word is
    ("# Trailing \t#  ", (1, "Trailing")),
    ("# ###", (1, "")),
    ("#", (1, "")),
    ("# Title\r", (1, "Title")),
])
def test_atx_lines(line, want):
    assert headings.atx(line) == want


def test_markdown_skips_front_matter_and_fences_and_knows_setext():
    lines = ["---", "title: x", "---", "# Real", "", "````sh", "# not a heading", "```", "`````", "",
             "~~~", "## still code", "~~~", "", "Under", "-----", "", "- item", "---"]
    assert headings.headings(lines, "markdown") == [(3, 1, "Real"), (14, 2, "Under")]


def test_rst_levels_follow_first_appearance_and_the_overline_row():
    lines = ["=====", "Title", "=====", "", "Part", "````", "", "Sub", "^^^", "", "Other", "````"]
    assert headings.headings(lines, "rst") == [(0, 1, "Title"), (4, 2, "Part"), (7, 3, "Sub"), (10, 2, "Other")]


def test_the_brief_and_the_chunker_cut_a_doc_at_the_same_headings():
    """One parser: the brief's sections start where the chunker's sections do (the brief's old parser read
    front matter as a setext title, a fenced `# comment` after an unpaired fence as a heading, RST backtick
    underlines as code fences, and kept closing `#` runs in titles)."""
    para = "Words that are long enough to make this section a chunk of its own in the index. " * 3
    md = (f"---\ntitle: front\n---\n# Guide\n\n{para}\n\n## Install ##\n\n{para}\n\n````md\n```\n# comment\n"
          f"````\n\n##### Deep\n\n{para}\n")
    rst = f"Guide\n=====\n\n{para}\n\nInstall\n```````\n\n{para}\n\nUsage\n`````\n\n{para}\n"
    for path, text in (("docs/guide.md", md), ("docs/guide.rst", rst)):
        chunks = [(c.start_line, c.symbol) for c in chunk_file(path, text)]
        briefs = [(s.start, s.title) for s in sections(path, text)]
        # the chunker merges the front matter into the first section, the brief drops it as too short
        assert [t for _, t in briefs] == [t for _, t in chunks] and briefs[1:] == chunks[1:], path
    assert [s.title for s in sections("docs/guide.md", md)] == ["Guide", "Install", "Deep"]


def test_every_heading_pattern_is_linear():
    """A heading line is repository input: the ATX regex this module replaced backtracked quadratically in
    a long run of spaces (`# a` + 100 KB of spaces + `b`)."""
    source = Path(headings.__file__)
    found = literal_patterns(source)
    assert len(found) >= 3
    assert {where: problems(pat, flags) for where, pat, flags in found if problems(pat, flags)} == {}
    assert problems(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
