"""`hippo init`: idempotent, never clobbers user text, dry-run writes nothing, detection for SessionStart."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from hippo.core.errors import HippoError
from hippo.surfaces.cli import cli
from hippo.surfaces.init_rules import (
    BEGIN,
    END,
    RULES_FILE,
    condensed_rules,
    install_rules,
    rules_installed,
    rules_text,
)

USER_TEXT = "# My project\n\nRun `make test` before committing.\n"


def test_template_covers_every_rule():
    text = rules_text()
    for needle in ("[[path:line]]", "search_codebase", "/rag", "could not find", "stale",
                   "user pasted", "Never follow instructions", "file_pattern", "keywords"):
        assert needle in text, needle
    assert len(text.splitlines()) < 80  # Claude Code asks for short memory files


def test_condensed_rules_are_short_and_complete():
    short = condensed_rules()
    assert len(short) < 1000
    for needle in ("[[path:line]]", "say so instead of guessing", "stale", "pasted", "data, never"):
        assert needle in short


def test_append_keeps_user_text_and_is_idempotent(tmp_path: Path):
    (tmp_path / "CLAUDE.md").write_text(USER_TEXT)
    first = install_rules(tmp_path)
    assert first.action == "appended"
    text = (tmp_path / "CLAUDE.md").read_text()
    assert text.startswith(USER_TEXT)
    assert text.count(BEGIN) == 1 and text.rstrip().endswith(END)
    assert rules_text().strip() in text
    second = install_rules(tmp_path)
    assert second.action == "unchanged" and second.diff == ""
    assert (tmp_path / "CLAUDE.md").read_text() == text


def test_update_replaces_only_our_block(tmp_path: Path):
    after = "\n## Later section written by the user\nkeep me\n"
    stale_block = f"{BEGIN}\nold rules v0\n{END}\n"
    (tmp_path / "CLAUDE.md").write_text(USER_TEXT + "\n" + stale_block + after)
    res = install_rules(tmp_path)
    assert res.action == "updated"
    text = (tmp_path / "CLAUDE.md").read_text()
    assert "old rules v0" not in text
    assert text.startswith(USER_TEXT + "\n" + BEGIN)
    assert text.endswith(END + "\n" + after)
    assert "-old rules v0" in res.diff


def test_creates_claude_md_when_missing(tmp_path: Path):
    res = install_rules(tmp_path)
    assert res.action == "created" and res.path == tmp_path / "CLAUDE.md"
    assert (tmp_path / "CLAUDE.md").read_text().startswith(BEGIN)
    assert res.diff.startswith("--- /dev/null")


def test_dry_run_writes_nothing(tmp_path: Path):
    (tmp_path / "CLAUDE.md").write_text(USER_TEXT)
    res = install_rules(tmp_path, dry_run=True)
    assert res.action == "appended"
    assert (tmp_path / "CLAUDE.md").read_text() == USER_TEXT
    assert res.diff.startswith("--- a/CLAUDE.md\n+++ b/CLAUDE.md")
    assert "+" + BEGIN in res.diff


def test_rules_are_never_installed_twice(tmp_path: Path):
    """`init --rules-file` after `init` (or the other way round) says where the rules already are."""
    install_rules(tmp_path)
    with pytest.raises(HippoError, match="already in CLAUDE.md"):
        install_rules(tmp_path, rules_file=True)
    assert not (tmp_path / RULES_FILE).exists()
    other = tmp_path / "other"
    other.mkdir()
    install_rules(other, rules_file=True)
    with pytest.raises(HippoError, match=r"already in \.claude/rules/hippo\.md.*--rules-file"):
        install_rules(other)
    assert not (other / "CLAUDE.md").exists()


def test_rules_file_mode_and_no_clobber(tmp_path: Path):
    res = install_rules(tmp_path, rules_file=True)
    assert res.path == tmp_path / RULES_FILE and res.action == "created"
    assert install_rules(tmp_path, rules_file=True).action == "unchanged"
    assert not (tmp_path / "CLAUDE.md").exists()
    # A rules file hippo did not write is never overwritten.
    other = tmp_path / "other"
    (other / RULES_FILE).parent.mkdir(parents=True)
    (other / RULES_FILE).write_text("team rules\n")
    with pytest.raises(HippoError, match="not written by hippo"):
        install_rules(other, rules_file=True)
    assert (other / RULES_FILE).read_text() == "team rules\n"


def test_damaged_block_is_refused(tmp_path: Path):
    (tmp_path / "CLAUDE.md").write_text(USER_TEXT + BEGIN + "\nhalf a block, no end marker\n")
    before = (tmp_path / "CLAUDE.md").read_text()
    with pytest.raises(HippoError, match="damaged"):
        install_rules(tmp_path)
    assert (tmp_path / "CLAUDE.md").read_text() == before


def test_uses_existing_dot_claude_claude_md(tmp_path: Path):
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "CLAUDE.md").write_text(USER_TEXT)
    res = install_rules(tmp_path)
    assert res.path == tmp_path / ".claude" / "CLAUDE.md"
    assert not (tmp_path / "CLAUDE.md").exists()


def test_rules_installed_detection(tmp_path: Path):
    home = tmp_path / "home"
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "CLAUDE.md").write_text(USER_TEXT)
    assert not rules_installed(proj, home=home)
    install_rules(proj, rules_file=True)
    assert rules_installed(proj, home=home)
    proj2 = tmp_path / "proj2"
    proj2.mkdir()
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / "CLAUDE.md").write_text(f"{BEGIN}\nx\n{END}\n")
    assert rules_installed(proj2, home=home)


def test_rules_installed_is_stdlib_only(tmp_path: Path):
    code = ("import sys; from hippo.surfaces.init_rules import rules_installed; rules_installed(sys.argv[1]); "
            "bad = {'click', 'lancedb', 'fastembed', 'numpy', 'pyarrow', 'mcp'} & set(sys.modules); "
            "print(sorted(bad))")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_cli_init_dry_run_then_real(tmp_path: Path):
    (tmp_path / "CLAUDE.md").write_text(USER_TEXT)
    runner = CliRunner()
    res = runner.invoke(cli, ["init", "--dry-run", "--repo", str(tmp_path)])
    assert res.exit_code == 0, res.output
    assert res.output.startswith("--- a/CLAUDE.md")
    assert (tmp_path / "CLAUDE.md").read_text() == USER_TEXT
    res = runner.invoke(cli, ["init", "--repo", str(tmp_path)])
    assert res.exit_code == 0 and res.output.startswith("Appended hippo's rules to")
    res = runner.invoke(cli, ["init", "--repo", str(tmp_path)])
    assert res.exit_code == 0 and "already up to date" in res.output
    (tmp_path / RULES_FILE).parent.mkdir(parents=True)
    (tmp_path / RULES_FILE).write_text("mine\n")
    res = runner.invoke(cli, ["init", "--rules-file", "--repo", str(tmp_path)])
    assert res.exit_code == 2 and "already in CLAUDE.md" in res.output  # refused before any write
