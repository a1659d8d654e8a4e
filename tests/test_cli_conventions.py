"""The CLI behaves as ripgrep/llm users expect: -h, -k/-n, -C everywhere, output format independent of
pipes, grep-like exit codes, progress with rate and ETA, a skip summary, and `--full` that does not grow
the index. Subprocesses use the fake embedder (HIPPO_MODEL=fake_embedder:FakeEmbedder), so nothing here needs the real model."""
from __future__ import annotations

import io
import json
from pathlib import Path

import click
import pytest

from cli_helpers import hippo, index_until_signal
from helpers_index import sample_repo
from hippo.surfaces import cli

REPO_COMMANDS = ["index", "search", "status", "init", "mcp", "serve", "publish", "brief"]


@pytest.fixture
def indexed(tmp_path: Path) -> Path:
    root = sample_repo(tmp_path)
    assert hippo(["index", "-q"], root).returncode == 0
    return root


# ---------------------------------------------------------------- option names


@pytest.mark.parametrize("command", ["", *REPO_COMMANDS])  # `python -m hippo hook` bypasses click (fast path)
def test_dash_h_is_help_everywhere(command: str, tmp_path: Path) -> None:
    res = hippo([command, "-h"] if command else ["-h"], tmp_path)
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("Usage: hippo") and "-h, --help" in res.stdout


@pytest.mark.parametrize("command", REPO_COMMANDS)
def test_every_repo_command_takes_dash_c(command: str) -> None:
    params = {p.name: p for p in cli.cli.commands[command].params}
    assert {"-C", "--repo"} <= set(params["repo"].opts), params["repo"].opts
    assert params["repo_alias"].hidden and params["repo_alias"].opts == ["--root"]  # old name still parses


def test_dash_c_and_the_hidden_root_alias_work_from_another_directory(indexed: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for flag in ("-C", "--repo", "--root"):
        res = hippo(["status", flag, str(indexed), "--json"], elsewhere, real=flag == "-C")
        assert res.returncode == 0, res.stderr
        assert json.loads(res.stdout)["root"] == str(indexed)
    res = hippo(["search", "retry backoff", "-C", str(indexed)], elsewhere)
    assert res.returncode == 0 and "src/web/retry.js" in res.stdout


@pytest.mark.parametrize("flag", ["-k", "-n", "--k"])
def test_k_and_n_limit_the_results(indexed: Path, flag: str) -> None:
    res = hippo(["search", "token user retry", flag, "1", "-f", "json"], indexed)
    assert res.returncode == 0, res.stderr
    assert len(json.loads(res.stdout)["results"]) == 1
    wide = json.loads(hippo(["search", "token user retry", "-f", "json"], indexed).stdout)["results"]
    assert len(wide) > 1  # so the limit above is what cut the list


# ---------------------------------------------------------------- output format


@pytest.mark.slow  # real processes or a big index: `make check` runs it, `make test-fast` skips it
def test_piped_output_is_text_unless_another_format_is_asked_for(indexed: Path) -> None:
    text = hippo(["search", "fetchWithRetry backoff"], indexed, real=True)  # stdout is a real pipe here
    assert text.returncode == 0
    assert text.stdout.startswith("1. src/web/retry.js:") and "<search_results>" not in text.stdout
    xml = hippo(["search", "fetchWithRetry backoff", "--format", "xml"], indexed)
    assert xml.stdout.startswith("<search_results>")
    js = hippo(["search", "fetchWithRetry backoff", "-f", "json"], indexed)
    assert json.loads(js.stdout)["results"][0]["path"] == "src/web/retry.js"


def test_text_footer_outside_git_is_not_cut(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    root.mkdir()
    (root / "notes.py").write_text("def rotate_keys():\n    return 'rotated keys'\n")
    assert hippo(["index", "-q"], root).returncode == 0
    res = hippo(["search", "rotate keys"], root)
    assert res.returncode == 0, res.stderr
    footer = res.stdout.strip().splitlines()[-1]
    assert "indexed none (not a git commit)" in footer and footer.endswith("]"), footer


# ---------------------------------------------------------------- exit codes


def test_exit_codes_are_grep_like(indexed: Path, tmp_path: Path) -> None:
    none = hippo(["search", "zqxjv wqpmz"], indexed)
    assert none.returncode == 1 and "No high-confidence results" in none.stdout
    none_json = hippo(["search", "zqxjv wqpmz", "-f", "json"], indexed)
    assert none_json.returncode == 1 and json.loads(none_json.stdout)["results"] == []
    usage = hippo(["search", "x", "--no-such-flag"], indexed)
    assert usage.returncode == 2 and "No such option" in usage.stderr
    bad_glob = hippo(["search", "x", "-g", "../outside/**"], indexed)
    assert bad_glob.returncode == 2 and "Traceback" not in bad_glob.stderr
    empty = tmp_path / "not-indexed"
    empty.mkdir()
    runtime = hippo(["search", "anything"], empty)
    assert runtime.returncode == 2 and runtime.stderr.strip() == "Error: No index here yet. Run `hippo index`."
    assert hippo(["status"], empty).returncode == 2


@pytest.mark.slow  # real processes (a signal needs one)
def test_ctrl_c_exits_130_and_sigterm_143(tmp_path: Path) -> None:
    """A real signal to the real CLI process, sent by the process itself at a known point (no timing)."""
    root = sample_repo(tmp_path)
    for sig, code in (("SIGINT", 130), ("SIGTERM", 143)):
        res = index_until_signal(root, sig, at="append_rows")  # a first build appends
        assert res.returncode == code, (sig, res.returncode, res.stderr)
        assert "Traceback" not in res.stderr
        assert "Run `hippo index` to resume" in res.stderr
        assert "interrupted" not in res.stderr and "stopped (SIGTERM)" not in res.stderr  # one message, not two


# ---------------------------------------------------------------- progress and skips


def test_progress_shows_elapsed_rate_and_a_real_eta() -> None:
    from rich.console import Console

    clock = {"t": 100.0}
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, width=160, color_system=None)
    bar, update = cli._progress_bar(False, console=console, get_time=lambda: clock["t"])
    update("vectors", 0, 1000)
    clock["t"] += 10.0
    update("vectors", 250, 1000)  # 25 chunks/s, 750 to go: 30 s left
    console.print(bar.get_renderable())
    out = buf.getvalue()
    assert "25.0 chunks/s" in out and "eta 0:30" in out, out
    assert "-:--:--" not in out and "0:00:10" in out, out  # elapsed


def test_a_finished_phase_stops_moving() -> None:
    """Once embedding starts, the chunking row is done: its elapsed time and rate no longer change."""
    from rich.console import Console

    clock = {"t": 100.0}
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, width=160, color_system=None)
    bar, update = cli._progress_bar(False, console=console, get_time=lambda: clock["t"])
    update("files", 0, 100)
    clock["t"] += 4.0
    update("files", 80, 100)  # 20 files unchanged: the phase ends short of its total
    update("vectors", 0, 500)

    def files_row() -> str:
        buf.truncate(0)
        buf.seek(0)
        console.print(bar.get_renderable())
        return next(line for line in buf.getvalue().splitlines() if "chunking files" in line)

    first = files_row()
    clock["t"] += 60.0
    assert files_row() == first and "done" in first and "100/100" in first, first


def test_first_run_says_the_model_is_being_prepared(tmp_path: Path, monkeypatch) -> None:
    from fake_embedder import FakeEmbedder
    from hippo.index import embedding
    from hippo.index.indexer import Indexer

    root = tmp_path / "r"
    root.mkdir()
    (root / "a.py").write_text("def a():\n    return 1\n")
    seen = []
    monkeypatch.setattr(embedding, "needs_preparing", lambda model: True)
    ix = Indexer(root, progress=lambda phase, done, total: seen.append(phase))
    ix._embedder = None
    monkeypatch.setattr(Indexer, "embedder", lambda self: FakeEmbedder())
    ix.run()
    assert seen.index("model-prepare") < len(seen) - 1 and seen.count("model-prepare") == 1
    assert "one time" in cli.MODEL_PREPARE


def test_keyword_ready_notice_is_printed_when_vectors_remain(tmp_path: Path) -> None:
    root = tmp_path / "many"
    root.mkdir()
    for i in range(cli.KEYWORD_READY_MIN_CHUNKS + 10):  # a chunk per file: enough vectors left to say so
        (root / f"mod_{i}.py").write_text(f"def f{i}(x):\n    return x + {i}\n")
    res = hippo(["index"], root)
    assert res.returncode == 0, res.stderr
    assert f"keyword search ready ({cli.KEYWORD_READY_MIN_CHUNKS + 10} files); vectors filling in" in res.stderr
    assert "Ctrl-C is safe, `hippo index` resumes" in res.stderr
    again = hippo(["index"], root)
    assert "keyword search ready" not in again.stderr  # nothing left to embed: nothing to announce


def test_skips_are_summarised_and_listed_with_verbose(tmp_path: Path) -> None:
    root = tmp_path / "skips"
    root.mkdir()
    (root / "main.py").write_text("def main():\n    return 1\n")
    (root / "huge.txt").write_text("x" * 1_200_000)
    (root / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4)
    (root / "blob.dat").write_bytes(b"\x00\x01\x02" * 100)
    res = hippo(["index"], root)
    assert res.returncode == 0, res.stderr
    assert "Skipped 3 files: 2 binary, 1 over 1 MB (list them: --verbose)." in res.stdout, res.stdout
    assert "huge.txt" not in res.stdout
    verbose = hippo(["index", "--full", "-v"], root)
    assert "skipped (too_large): huge.txt" in verbose.stdout
    assert "skipped (binary): logo.png" in verbose.stdout and "skipped (binary): blob.dat" in verbose.stdout
    dry = hippo(["index", "--dry-run", "-v"], root)
    assert "Skipped 3 files: 2 binary, 1 over 1 MB" in dry.stdout and "skipped (too_large): huge.txt" in dry.stdout


def test_skip_summary_wording() -> None:
    assert cli.skip_summary({}, 1_000_000) == ""
    assert cli.skip_summary({"binary": 9, "too_large": 3}, 1_000_000) == "skipped 12 files: 9 binary, 3 over 1 MB"
    assert cli.skip_summary({"too_large": 1}, 2_500_000) == "skipped 1 file: 1 over 2.5 MB"
    assert cli.skip_summary({"lockfile": 1, "symlink": 2}, 1_000_000) == "skipped 3 files: 2 symlinks, 1 lock file"


# ---------------------------------------------------------------- the index does not grow


def test_repeated_full_runs_do_not_grow_the_index(tmp_path: Path) -> None:
    from hippo.index.state import load_state
    from hippo.index.store import Store

    root = sample_repo(tmp_path)
    measured = []
    for _ in range(3):
        res = hippo(["index", "--full", "-q"], root)
        assert res.returncode == 0, res.stderr
        store = Store(root / ".hippo", load_state(root / ".hippo").dim)
        try:
            rows, cached = store.count(), store.vectors().count_rows()
        finally:
            store.close()
        files = [p for p in (root / ".hippo").rglob("*") if p.is_file()]
        measured.append((rows, cached, len(files), sum(p.stat().st_size for p in files)))
    (rows, cached, nfiles, size), *later = measured
    assert rows > 0 and all(m[:3] == (rows, cached, nfiles) for m in later), measured
    assert all(m[3] <= size * 1.05 for m in later), measured  # same data; only state.json sizes wobble


def test_click_usage_error_exit_code_is_two() -> None:
    assert click.UsageError("x").exit_code == 2 == cli.EXIT_ERROR
