"""The `hippo` command line. Thin: validates flags, calls the library, maps errors to exit codes.

Heavy imports (lancedb, fastembed, numpy) happen inside command bodies only.
"""
from __future__ import annotations

import errno
import os
import sys
from pathlib import Path

import click

from hippo import __version__
from hippo.errors import BadQueryError, HippoError


def _root(path: str | None) -> Path:
    from hippo.gitutil import find_root

    return find_root(Path(path or ".").resolve())


class _Group(click.Group):
    """Turns HippoError into a one-line message instead of a traceback."""

    def invoke(self, ctx: click.Context):  # type: ignore[override]
        try:
            return super().invoke(ctx)
        except BadQueryError as exc:
            raise click.UsageError(_shown(exc)) from None
        except HippoError as exc:
            raise click.ClickException(_shown(exc)) from None
        except (OSError, RuntimeError, ValueError) as exc:  # lancedb reports ENOSPC as RuntimeError("... os error 28")
            if getattr(exc, "errno", None) != errno.ENOSPC and "os error 28" not in str(exc):
                raise
            raise click.ClickException("No space left on device for the index; free some space and run "
                                       "`hippo index` again (the previous index is kept).") from None


def _shown(value: object) -> str:
    """Text safe for a terminal: a file name's bidi overrides and control characters appear escaped."""
    from hippo.render import display

    return display(value)


@click.group(cls=_Group)
@click.version_option(__version__, prog_name="hippo")
def cli() -> None:
    """hippo: a local, always-fresh memory of this repository for Claude Code."""


def _progress_bar(quiet: bool):
    """A rich progress bar on a TTY (stderr), nothing in quiet mode."""
    if quiet or not sys.stderr.isatty():
        return None, (lambda phase, done, total: None)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    bar = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TimeRemainingColumn(), transient=False)
    tasks: dict[str, int] = {}
    labels = {"files": "chunking files", "vectors": "embedding chunks"}

    def update(phase: str, done: int, total: int) -> None:
        if phase not in tasks:
            tasks[phase] = bar.add_task(labels.get(phase, phase), total=total)
        bar.update(tasks[phase], completed=done, total=total)

    return bar, update


@cli.command()
@click.option("--full", is_flag=True, help="Rebuild from scratch instead of updating what changed.")
@click.option("--dry-run", is_flag=True, help="Show what would be indexed (counts by extension and folder).")
@click.option("--quiet", "-q", is_flag=True, help="No progress output (for hooks and scripts).")
@click.option("--no-vectors", is_flag=True, help="Only the keyword phase; embed later with another `hippo index`.")
@click.option("--repo", type=click.Path(file_okay=False), help="Repository root (default: the current one).")
@click.option("--allow-home", is_flag=True, help="Index even a home directory or / that is not a git repository.")
def index(full: bool, dry_run: bool, quiet: bool, no_vectors: bool, repo: str | None, allow_home: bool) -> None:
    """Index this repository (incremental by default: only what changed since the last run)."""
    from hippo.home_guard import refusal
    from hippo.indexer import index_repo

    root = _root(repo)
    reason = None if allow_home else refusal(root)
    if reason:
        raise HippoError(reason)
    if not (full or dry_run):  # team index: start from the nearest published snapshot (docs/team.md)
        from hippo.config import load_settings

        settings = load_settings(root)
        if settings.shared_index:
            from hippo.team import say, sync_base

            say(sync_base(root, settings).message)
    bar, progress = _progress_bar(quiet or dry_run)
    if bar is not None:
        bar.start()
    try:  # damage is found and rebuilt over inside the indexer (report.repaired)
        report = index_repo(root, full=full, dry_run=dry_run, progress=progress, vectors=not no_vectors)
    finally:
        if bar is not None:
            bar.stop()
    if report.repaired:
        click.echo(f"hippo: the index was damaged ({report.repaired}); rebuilt it from scratch.", err=True)
    for notice in report.notices:
        click.echo(f"hippo: {_shown(notice)}", err=True)
    if dry_run:
        d = report.dry_run or {}
        click.echo(f"Would index {d.get('files', 0)} files ({d.get('bytes', 0) / 1e6:.1f} MB) in {_shown(root.name)}/")
        click.echo("By extension: " + ", ".join(f"{k} {v}" for k, v in list(d.get("by_extension", {}).items())[:20]))
        click.echo("By top folder: " + ", ".join(f"{k} {v}" for k, v in list(d.get("by_top_folder", {}).items())[:20]))
        if report.skipped:
            click.echo("Skipped: " + ", ".join(f"{k} {v}" for k, v in sorted(report.skipped.items())))
        return
    if quiet:
        return
    if report.files_changed == 0 and report.files_deleted == 0 and not report.chunks_embedded:
        click.echo(f"Index is up to date ({report.files_total} files, {report.seconds:.2f}s).")
        return
    click.echo(f"Indexed {report.files_changed} changed and {report.files_deleted} deleted files of "
               f"{report.files_total}: {report.chunks_written} chunks written, {report.chunks_embedded} embedded, "
               f"{report.vectors_reused} vectors reused in {report.seconds:.1f}s"
               f"{' (rebuilt)' if report.rebuilt else ''}.")


@cli.command()
@click.argument("query", nargs=-1)
@click.option("--keyword", "-w", "keywords", multiple=True, help="Boost chunks containing this symbol/string (repeatable).")
@click.option("--glob", "-g", "globs", multiple=True, help="Only files matching this gitignore-style pattern (repeatable).")
@click.option("--exact", is_flag=True, help="Keep only chunks that contain every --keyword (case-sensitive).")
@click.option("--k", "k", type=click.IntRange(1, 50), default=None, help="At most this many results.")
@click.option("--format", "fmt", type=click.Choice(["xml", "json", "text"]), default=None,
              help="Output format (default: text on a terminal, xml otherwise).")
@click.option("--mode", type=click.Choice(["hybrid", "vector", "keyword"]), default="hybrid", hidden=True)
@click.option("--budget", type=click.IntRange(200, 200_000), default=None, help="Total characters of snippets.")
@click.option("--repo", type=click.Path(file_okay=False), help="Repository root (default: the current one).")
def search(query, keywords, globs, exact, k, fmt, mode, budget, repo) -> None:
    """Search the index: hybrid semantic + keyword, line-exact results."""
    from hippo import render
    from hippo.errors import DamagedIndexError
    from hippo.results import SearchResponse
    from hippo.service import client

    root = _root(repo)
    # The repo's warm server answers when it is up (no lancedb import here); else this process does and
    # leaves a server warm for the next call (HIPPO_NO_SERVER=1: never).
    request = {"query": " ".join(query), "keywords": list(keywords), "globs": list(globs), "exact": exact,
               "k": k, "budget_chars": budget, "mode": mode}
    try:
        data = client.search(root, request)
    except DamagedIndexError as exc:  # rebuild (keyword phase now, vectors in the background), then answer
        from hippo.config import load_settings
        from hippo.indexer import repair

        repair(root, load_settings(root), exc, wait=True)
        click.echo(f"hippo: the index was damaged ({exc.detail}); rebuilt it.", err=True)
        data = client.search(root, request)
    resp = SearchResponse.from_dict(data)
    global _fast_exit
    _fast_exit = True  # a search wrote nothing: main() may skip the interpreter teardown
    fmt = fmt or ("text" if sys.stdout.isatty() else "xml")
    click.echo({"xml": render.to_xml, "json": render.to_json, "text": render.to_text}[fmt](resp))


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("--repo", type=click.Path(file_okay=False), help="Repository root (default: the current one).")
def status(as_json: bool, repo: str | None) -> None:
    """Files, chunks, model, indexed commit, freshness, size and last update of the index."""
    import json as _json

    from hippo.status import index_status

    info = index_status(_root(repo))
    if as_json:
        click.echo(_json.dumps(info, indent=2))
        return
    if not info.get("indexed"):
        raise HippoError("No index here yet. Run `hippo index`.")
    for key, label in (("root", "repository"), ("files", "files"), ("chunks", "chunks"), ("model", "model"),
                       ("indexed_commit", "indexed commit"), ("branch", "branch"), ("behind", "freshness"),
                       ("vectors", "vectors"), ("size_mb", "index size (MB)"), ("updated", "last update"),
                       ("index_dir", "stored in")):
        if info.get(key) not in (None, ""):
            click.echo(f"{label:>16}: {_shown(info[key])}")


# --- plugin bundle: `hippo mcp`, `hippo init` (see docs/plugin.md) ---------------------------

@cli.command()
@click.option("--repo", type=click.Path(file_okay=False), help="Repository root (default: $HIPPO_PROJECT_DIR, "
              "$CLAUDE_PROJECT_DIR, then the current one).")
def mcp(repo: str | None) -> None:
    """Run the MCP stdio server exposing search_codebase (Claude Code starts it via .mcp.json)."""
    from hippo.mcp_server import project_root, serve

    serve(_root(repo) if repo else project_root())


@cli.command()
@click.option("--rules-file", is_flag=True, help="Write .claude/rules/hippo.md instead of appending to CLAUDE.md.")
@click.option("--dry-run", is_flag=True, help="Print the diff, change nothing.")
@click.option("--repo", type=click.Path(file_okay=False), help="Repository root (default: the current one).")
def init(rules_file: bool, dry_run: bool, repo: str | None) -> None:
    """Install hippo's search and citation rules into this project's Claude Code memory."""
    from hippo.init_rules import install_rules

    res = install_rules(_root(repo), rules_file=rules_file, dry_run=dry_run)
    if dry_run:
        click.echo(res.diff or f"{res.path.name}: already up to date, nothing to change.", nl=bool(not res.diff))
        return
    shown = _shown(res.path)
    click.echo({"created": f"Created {shown} with hippo's rules.",
                "appended": f"Appended hippo's rules to {shown}.",
                "updated": f"Updated hippo's rules block in {shown}.",
                "unchanged": f"hippo's rules in {shown} are already up to date."}[res.action])


@cli.command()
@click.argument("event", type=click.Choice(["session-start", "tool-failure", "session-end", "prompt-expansion"]))
def hook(event: str) -> None:
    """Run a Claude Code hook handler (payload on stdin). Always exits 0."""
    from hippo.hooks.main import run

    sys.exit(run(event, sys.stdin.buffer.read()))


@cli.command()
@click.option("--root", "repo", default=None, help="Repository root (default: the current one).")
@click.option("--idle", type=float, default=None, help="Exit after this many idle seconds.")
def serve(repo: str | None, idle: float | None) -> None:
    """Warm per-repo query server for hooks, `hippo search` and the MCP tool (started on first need)."""
    from hippo.service.server import serve as run_server

    sys.exit(run_server(_root(repo), idle))


# --- team index: `hippo publish` (see docs/team.md) -------------------------------------------

@cli.command()
@click.option("--allow-dirty", is_flag=True, help="Publish even if the work tree differs from HEAD.")
@click.option("--force", is_flag=True, help="Publish again even if HEAD already has a snapshot.")
@click.option("--repo", type=click.Path(file_okay=False), help="Repository root (default: the current one).")
def publish(allow_dirty: bool, force: bool, repo: str | None) -> None:
    """Index HEAD and upload it to the shared index location (CI side; needs `shared_index`)."""
    from hippo.config import load_settings
    from hippo.team import publish as run_publish

    root = _root(repo)
    rep = run_publish(root, load_settings(root), allow_dirty=allow_dirty, force=force)
    if rep.skipped:
        click.echo(f"{rep.commit[:12]} is already published ({rep.publish_id}, {rep.chunks} chunks).")
        return
    idx = rep.index
    click.echo(f"Published {rep.commit[:12]} as {rep.publish_id}: {rep.chunks} chunks, {rep.files} files, "
               f"{rep.bytes / 1e6:.1f} MB ({getattr(idx, 'chunks_embedded', 0)} chunks embedded) "
               f"in {rep.seconds:.1f}s.")


_fast_exit = False


def main() -> None:
    try:
        cli(prog_name="hippo")
    except SystemExit as exc:
        code = exc.code
    else:
        code = 0
    if _fast_exit and "lancedb" in sys.modules:  # lancedb/onnxruntime teardown costs ~0.2 s after a search
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code if isinstance(code, int) else (0 if code is None else 1))
    sys.exit(code)


if __name__ == "__main__":  # pragma: no cover
    main()
