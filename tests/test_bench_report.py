"""bench/run.py rewrites docs/benchmarks.md; the sections other benchmarks own must survive it."""
from bench.run import foreign_sections


def test_other_benchmarks_sections_are_kept_and_ours_replaced():
    old = "# Benchmarks\n## Summary\nold summary\n## Speed\nold speed\n## Session-start brief\nbrief table\n"
    new = ["# Benchmarks", "## Summary", "new summary", "## Speed", "new speed"]
    kept = foreign_sections(old, new)
    assert kept == ["", "## Session-start brief", "brief table"]
    assert "old summary" not in kept and "old speed" not in kept


def test_first_report_has_nothing_to_keep():
    assert foreign_sections("", ["## Summary"]) == []
