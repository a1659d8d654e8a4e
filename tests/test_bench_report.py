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


def test_readme_figures_are_rewritten_between_their_markers(tmp_path):
    from bench.run import update_readme

    readme = tmp_path / "README.md"
    readme.write_text("vectors at <!-- bench:vector-rate -->about 45 chunks/s<!-- /bench:vector-rate --> on\n"
                      "<!-- bench:machine -->2 cores<!-- /bench:machine -->; again <!-- bench:vector-rate -->x"
                      "<!-- /bench:vector-rate -->.\n")
    found = update_readme({"vector-rate": "37 chunks/s", "machine": "2 cores (Xeon), load 3.1", "absent": "-"}, readme)
    assert found == ["vector-rate", "machine"]
    assert readme.read_text() == ("vectors at <!-- bench:vector-rate -->37 chunks/s<!-- /bench:vector-rate --> on\n"
                                  "<!-- bench:machine -->2 cores (Xeon), load 3.1<!-- /bench:machine -->; again "
                                  "<!-- bench:vector-rate -->37 chunks/s<!-- /bench:vector-rate -->.\n")


def test_the_readme_quotes_the_benchmark_run():
    """The README's vector rate and machine are the ones bench/run.py writes (make bench), not hand-typed."""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    assert text.count("<!-- bench:vector-rate -->") >= 2 and text.count("<!-- bench:machine -->") >= 2
