"""The `hippo` command line. Thin: validates flags, calls the library, maps errors to exit codes.

Heavy imports (lancedb, fastembed, numpy) happen inside command bodies only.
"""
from __future__ import annotations

import contextlib
import errno
import os
import sys
from pathlib import Path

import click

from hippo import __version__
from hippo.core.errors import BadQueryError, HippoError

# Exit codes, as grep and ripgrep use them (README "Exit codes"): 0 found / done, 1 a search found nothing,
# 2 any error (usage or runtime), 130 interrupted by Ctrl-C, 143 stopped by SIGTERM.
EXIT_NO_RESULTS = 1
EXIT_ERROR = 2
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143

CONTEXT = {"help_option_names": ["-h", "--help"]}


class HippoClickError(click.ClickException):
    exit_code = EXIT_ERROR


class _Terminated(BaseException):
    """Raised by the SIGTERM handler so `finally` blocks run (progress bar, lock) before exiting."""


def _root(path: str | None) -> Path:
    from hippo.core.gitutil import find_root

    return find_root(Path(path or ".").resolve())


def repo_option(help_text: str = "Repository root (default: the current one)."):
    """`--repo/-C` on every subcommand that takes a repository (like `git -C`); `--root` stays a hidden alias."""
    def deco(fn):
        fn = click.option("--root", "repo_alias", type=click.Path(file_okay=False), hidden=True)(fn)
        return click.option("--repo", "-C", "repo", type=click.Path(file_okay=False), help=help_text)(fn)
    return deco


def _repo(repo: str | None, repo_alias: str | None) -> str | None:
    return repo or repo_alias


class _Group(click.Group):
    """Turns HippoError into a one-line message instead of a traceback, and Ctrl-C into exit 130."""

    def invoke(self, ctx: click.Context):  # type: ignore[override]
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            click.echo("\nhippo: interrupted.", err=True)
            raise click.exceptions.Exit(EXIT_INTERRUPTED) from None
        except _Terminated:
            click.echo("hippo: stopped (SIGTERM).", err=True)
            raise click.exceptions.Exit(EXIT_TERMINATED) from None
        except BadQueryError as exc:
            raise click.UsageError(_shown(exc)) from None
        except HippoError as exc:
            raise HippoClickError(_shown(exc)) from None
        except (OSError, RuntimeError, ValueError) as exc:  # lancedb reports ENOSPC as RuntimeError("... os error 28")
            if getattr(exc, "errno", None) != errno.ENOSPC and "os error 28" not in str(exc):
                raise
            raise HippoClickError("No space left on device for the index; free some space and run "
                                  "`hippo index` again (the previous index is kept).") from None


def _shown(value: object) -> str:
    """Text safe for a terminal: a file name's bidi overrides and control characters appear escaped."""
    from hippo.retrieval.render import display

    return display(value)


@contextlib.contextmanager
def _sigterm_unwinds():
    """SIGTERM unwinds like Ctrl-C while a command runs (the index stays resumable either way: every batch
    is one commit); the previous handler is back afterwards."""
    import signal

    def handler(signum, frame):  # noqa: ARG001
        raise _Terminated()

    try:
        previous = signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread (e.g. a test runner's worker thread)
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@click.group(cls=_Group, context_settings=CONTEXT)
@click.version_option(__version__, "--version", "-V", prog_name="hippo")
def cli() -> None:
    """hippo: a local, always-fresh memory of this repository for Claude Code."""


SKIP_LABELS = {"too_large": "over {mb} MB", "binary": "binary", "secret": "secret-bearing", "lockfile": "lock file{s}",
               "minified": "minified", "generated": "generated", "vendored": "vendored", "build output": "build output",
               "symlink": "symlink{s}",
               "unreadable": "unreadable", "outside_root": "outside the repository",
               "ignored": "ignored (.hippoignore, extra_ignores or built-in)"}


def skip_summary(skipped: dict[str, int], max_file_bytes: int) -> str:
    """ "skipped 12 files: 3 over 1 MB, 9 binary" (biggest reasons first), or "" when nothing was skipped."""
    total = sum(skipped.values())
    if not total:
        return ""
    mb = f"{max_file_bytes / 1e6:g}"
    parts = [f"{n} {SKIP_LABELS.get(reason, reason).format(mb=mb, s='s' if n != 1 else '')}"
             for reason, n in sorted(skipped.items(), key=lambda kv: (-kv[1], kv[0]))]
    return f"skipped {total} file{'s' if total != 1 else ''}: " + ", ".join(parts)


def _progress_bar(quiet: bool, console=None, get_time=None):
    """A rich progress bar on a TTY (stderr): elapsed time, rate and an ETA once a rate is known.

    `console`/`get_time` let tests draw it into a buffer with a clock they control."""
    if quiet or (console is None and not sys.stderr.isatty()):
        return None, (lambda phase, done, total: None)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, TextColumn, TimeElapsedColumn
    from rich.text import Text

    units = {"files": "files", "vectors": "chunks"}

    class Rate(ProgressColumn):
        """Average since the phase started: steadier than rich's windowed speed for batchy updates."""

        def render(self, task):
            if not task.elapsed or not task.completed:
                return Text("")
            return Text(f"{task.completed / task.elapsed:.1f} {task.fields.get('unit', '')}/s", style="cyan")

    class Eta(ProgressColumn):
        def render(self, task):
            if task.finished:
                return Text("done", style="green")
            if not task.elapsed or not task.completed or task.total is None:
                return Text("eta …", style="dim")
            left = (task.total - task.completed) / (task.completed / task.elapsed)
            m, sec = divmod(int(left + 0.5), 60)
            h, m = divmod(m, 60)
            return Text(f"eta {h}:{m:02d}:{sec:02d}" if h else f"eta {m}:{sec:02d}", style="yellow")

    extra = {k: v for k, v in (("console", console), ("get_time", get_time)) if v is not None}
    bar = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                   Rate(), Eta(), transient=False, **extra)
    tasks: dict[str, int] = {}
    labels = {"files": "chunking files", "vectors": "embedding chunks"}

    def update(phase: str, done: int, total: int) -> None:
        if phase == "keyword-ready":
            if total >= KEYWORD_READY_MIN_CHUNKS:
                bar.console.print(KEYWORD_READY.format(files=done, chunks=total))
            return
        if phase == "model-prepare":
            bar.console.print(MODEL_PREPARE)
            return
        if phase not in tasks:
            for earlier in tasks.values():  # a phase that ended stops: no clock, rate or eta still moving
                bar.update(earlier, completed=bar.tasks[earlier].total)
                bar.stop_task(earlier)
            tasks[phase] = bar.add_task(labels.get(phase, phase), total=total, unit=units.get(phase, "items"))
        bar.update(tasks[phase], completed=done, total=total)

    return bar, update


KEYWORD_READY = ("keyword search ready ({files} files); vectors filling in for {chunks} chunks — Ctrl-C is safe, "
                 "`hippo index` resumes")
MODEL_PREPARE = ("preparing the embedding model from the installed wheel (one time, up to a minute on a busy laptop; "
                 "later runs load it in a second or two)")
KEYWORD_READY_MIN_CHUNKS = 200  # below this the vectors take seconds: the notice would only be noise


@cli.command(context_settings=CONTEXT)
@click.option("--full", is_flag=True, help="Rebuild from scratch instead of updating what changed.")
@click.option("--dry-run", is_flag=True, help="Show what would be indexed (counts by extension and folder); writes nothing.")
@click.option("--quiet", "-q", is_flag=True, help="No progress output (for hooks and scripts).")
@click.option("--verbose", "-v", is_flag=True, help="Also list every skipped file and why.")
@click.option("--no-vectors", is_flag=True, help="Only the keyword phase; embed later with another `hippo index`.")
@repo_option()
@click.option("--allow-home", is_flag=True, help="Index even a home directory or / that is not a git repository.")
def index(full: bool, dry_run: bool, quiet: bool, verbose: bool, no_vectors: bool, repo: str | None,
          repo_alias: str | None, allow_home: bool) -> None:
    """Index this repository (incremental by default: only what changed since the last run)."""
    from hippo.core.config import load_settings
    from hippo.core.home_guard import refusal
    from hippo.index.indexer import index_repo

    root = _root(_repo(repo, repo_alias))
    reason = None if allow_home else refusal(root)
    if reason:
        raise HippoError(reason)
    settings = load_settings(root)
    if not (full or dry_run) and settings.shared_index:  # team index: start from the nearest published snapshot
        from hippo.sharing.team import say, sync_base

        say(sync_base(root, settings).message)
    bar, progress = _progress_bar(quiet or dry_run)
    if bar is None and not (quiet or dry_run):  # no TTY: still say when keyword search is usable
        def progress(phase: str, done: int, total: int) -> None:
            if phase == "keyword-ready" and total >= KEYWORD_READY_MIN_CHUNKS:
                click.echo(KEYWORD_READY.format(files=done, chunks=total), err=True)
            elif phase == "model-prepare":
                click.echo(MODEL_PREPARE, err=True)
    if bar is not None:
        bar.start()
    try:  # damage is found and rebuilt over inside the indexer (report.repaired)
        with _sigterm_unwinds():
            report = None
            if not (full or dry_run):  # the repo's warm server holds lancedb and the model: let it do the update
                report = _index_on_server(root, settings, progress, vectors=not no_vectors)
            if report is None:
                report = index_repo(root, settings, full=full, dry_run=dry_run, progress=progress,
                                    vectors=not no_vectors)
    except (KeyboardInterrupt, _Terminated) as stop:
        if bar is not None:
            bar.stop()
            bar = None
        if not quiet and not dry_run:
            click.echo("hippo: stopped; everything committed so far is kept and searchable. Run `hippo index` "
                       "to resume.", err=True)
        # said once: the group's own "interrupted" line would be a second message for the same Ctrl-C
        raise click.exceptions.Exit(EXIT_TERMINATED if isinstance(stop, _Terminated) else EXIT_INTERRUPTED) from None
    finally:
        if bar is not None:
            bar.stop()
    if report.repaired:
        click.echo(f"hippo: the index was damaged ({report.repaired}); rebuilt it from scratch.", err=True)
    for notice in report.notices:
        click.echo(f"hippo: {_shown(notice)}", err=True)
    skipped = skip_summary(report.skipped, settings.max_file_bytes)
    if dry_run:
        d = report.dry_run or {}
        click.echo(f"Would index {d.get('files', 0)} files ({d.get('bytes', 0) / 1e6:.1f} MB) in {_shown(root.name)}/")
        click.echo("By extension: " + ", ".join(f"{k} {v}" for k, v in list(d.get("by_extension", {}).items())[:20]))
        click.echo("By top folder: " + ", ".join(f"{k} {v}" for k, v in list(d.get("by_top_folder", {}).items())[:20]))
        if skipped:
            click.echo(skipped[0].upper() + skipped[1:] + ("" if verbose else " (list them: --verbose)"))
        _list_skipped(report, verbose)
        return
    if quiet:
        return
    if report.files_total == 0 and not report.files_deleted:
        click.echo(f"Nothing to index: 0 files matched in {_shown(root.name)}/" + (f" ({skipped})." if skipped else "."))
        _list_skipped(report, verbose)
        return
    if report.files_changed == 0 and report.files_deleted == 0 and not report.chunks_embedded:
        click.echo(f"Index is up to date ({report.files_total} files, {report.seconds:.2f}s).")
    else:
        click.echo(f"Indexed {report.files_changed} changed and {report.files_deleted} deleted files of "
                   f"{report.files_total}: {report.chunks_written} chunks written, {report.chunks_embedded} "
                   f"embedded, {report.vectors_reused} vectors reused in {report.seconds:.1f}s"
                   f"{' (rebuilt)' if report.rebuilt else ''}.")
    if no_vectors:
        from hippo.core.indexdir import IndexDir
        from hippo.index.state import load_state

        state = load_state(IndexDir.of(root, settings).path)
        if state is not None and not state.vectors_complete:
            click.echo("Keyword-only index (--no-vectors): run `hippo index` to add vectors.")
    if skipped:
        click.echo(skipped[0].upper() + skipped[1:] + ("" if verbose else " (list them: --verbose)") + ".")
    _list_skipped(report, verbose)


def _list_skipped(report, verbose: bool) -> None:
    if verbose:
        for reason, path in sorted(report.skipped_paths, key=lambda rp: (rp[0], rp[1])):
            click.echo(f"  skipped ({reason}): {_shown(path)}")



def _index_on_server(root: Path, settings, progress, *, vectors: bool):
    """The IndexReport of an incremental run handed to the repo's running server, or None (no server, or it
    refused or died: the caller runs it in this process, resuming whatever the server left)."""
    from dataclasses import fields

    from hippo.index.indexer import IndexReport, run_key
    from hippo.surfaces.service import client

    data = client.index(root, run_key(settings), vectors=vectors, progress=progress)
    if data is None:
        return None
    names = {f.name for f in fields(IndexReport)}
    return IndexReport(**{k: v for k, v in data.items() if k in names})


@cli.command(context_settings=CONTEXT)
@click.argument("query", nargs=-1)
@click.option("--keyword", "-w", "keywords", multiple=True, help="Boost chunks containing this symbol/string (repeatable).")
@click.option("--glob", "-g", "globs", multiple=True, help="Only files matching this gitignore-style pattern (repeatable).")
@click.option("--exact", is_flag=True, help="Keep only chunks that contain every --keyword (case-sensitive).")
@click.option("-k", "-n", "--k", "k", type=click.IntRange(1, 50), default=None, help="At most this many results.")
@click.option("--format", "-f", "fmt", type=click.Choice(["text", "xml", "json"]), default="text", show_default=True,
              help="Output format, the same on a terminal and in a pipe (xml is what Claude receives).")
@click.option("--mode", type=click.Choice(["hybrid", "vector", "keyword"]), default="hybrid", hidden=True)
@click.option("--budget", type=click.IntRange(200, 200_000), default=None, help="Total characters of snippets.")
@repo_option()
def search(query, keywords, globs, exact, k, fmt, mode, budget, repo, repo_alias) -> None:
    """Search the index: hybrid semantic + keyword, line-exact results. Exit 1 when nothing is found."""
    from hippo.core.errors import DamagedIndexError, NoIndexError
    from hippo.retrieval import render
    from hippo.retrieval.results import SearchResponse
    from hippo.surfaces.service import client

    root = _root(_repo(repo, repo_alias))
    # The repo's warm server answers when it is up (no lancedb import here); else this process does and
    # leaves a server warm for the next call (HIPPO_SERVER=ask/off: never).
    request = {"query": " ".join(query), "keywords": list(keywords), "globs": list(globs), "exact": exact,
               "k": k, "budget_chars": budget, "mode": mode}
    try:
        try:
            data = client.search(root, request)
        except DamagedIndexError as exc:  # rebuild (keyword phase now, vectors in the background), then answer
            from hippo.core.config import load_settings
            from hippo.index.indexer import repair

            repair(root, load_settings(root), exc, wait=True)
            click.echo(f"hippo: the index was damaged ({exc.detail}); rebuilt it.", err=True)
            data = client.search(root, request)
    except NoIndexError:
        if _empty_index(root):  # `hippo index` ran and found nothing to index: say the same thing it said
            click.echo("Nothing to search: 0 files matched in this repository when it was indexed "
                       "(`hippo index --dry-run -v` shows what is skipped).", err=True)
            sys.exit(EXIT_NO_RESULTS)
        raise
    resp = SearchResponse.from_dict(data)
    global _fast_exit
    _fast_exit = True  # a search wrote nothing: main() may skip the interpreter teardown
    click.echo({"xml": render.to_xml, "json": render.to_json, "text": render.to_text}[fmt](resp))
    if not resp.hits:
        sys.exit(EXIT_NO_RESULTS)


def _structure(kind: str, name: str, k: int | None, fmt: str, repo: str | None, repo_alias: str | None) -> None:
    """One structural question (hippo.retrieval.structure) through the warm server, like `search`. Exit 1: nothing."""
    from hippo.retrieval import render
    from hippo.surfaces.service import client

    root = _root(_repo(repo, repo_alias))
    data = client.structure(root, {"kind": kind, "name": name, "k": k})
    global _fast_exit
    _fast_exit = True
    click.echo({"xml": render.structure_xml, "json": render.structure_json, "text": render.structure_text}[fmt](data))
    if not data.get("definitions") or (kind != "def" and not data.get("results")):
        sys.exit(EXIT_NO_RESULTS)


def structure_options(fn):
    fn = repo_option()(fn)
    fn = click.option("--format", "-f", "fmt", type=click.Choice(["text", "xml", "json"]), default="text",
                      show_default=True, help="Output format (xml is what Claude receives).")(fn)
    fn = click.option("-k", "-n", "--k", "k", type=click.IntRange(1, 200), default=None,
                      help="At most this many results (default 20).")(fn)
    return click.argument("name")(fn)


@cli.command("def", context_settings=CONTEXT)
@structure_options
def def_(name, k, fmt, repo, repo_alias) -> None:
    """Where NAME is defined (`parse`, `Command.parse`, `pkg.mod.func`), best first, with line ranges."""
    _structure("def", name, k, fmt, repo, repo_alias)


@cli.command(context_settings=CONTEXT)
@structure_options
def callers(name, k, fmt, repo, repo_alias) -> None:
    """Call sites of NAME, resolved through imports (not just the same word), with the calling function."""
    _structure("callers", name, k, fmt, repo, repo_alias)


@cli.command(context_settings=CONTEXT)
@structure_options
def callees(name, k, fmt, repo, repo_alias) -> None:
    """What NAME calls, each call resolved to its definition in this repository when there is one."""
    _structure("callees", name, k, fmt, repo, repo_alias)


def _empty_index(root: Path) -> bool:
    from hippo.core.config import load_settings
    from hippo.core.indexdir import IndexDir
    from hippo.index.state import load_state

    state = load_state(IndexDir.of(root, load_settings(root)).path)
    return state is not None and state.complete and not state.files


@cli.command(context_settings=CONTEXT)
@click.option("--format", "-f", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="Output format (as `hippo search -f`).")
@click.option("--json", "as_json", is_flag=True, hidden=True, help="Same as -f json (kept for old scripts).")
@repo_option()
def status(fmt: str, as_json: bool, repo: str | None, repo_alias: str | None) -> None:
    """Files, chunks, model, indexed commit, freshness, size and last update of the index."""
    import json as _json

    from hippo.index.status import index_status

    info = index_status(_root(_repo(repo, repo_alias)))
    if as_json or fmt == "json":
        click.echo(_json.dumps(info, indent=2))
        return
    if not info.get("indexed"):
        from hippo.core.errors import NoIndexError

        raise NoIndexError.at(info["index_dir"])
    for key, label in (("root", "repository"), ("files", "files"), ("chunks", "chunks"), ("model", "model"),
                       ("indexed_commit", "indexed commit"), ("branch", "branch"), ("behind", "freshness"),
                       ("vectors", "vectors"), ("size_mb", "index size (MB)"), ("updated", "last update"),
                       ("index_dir", "stored in")):
        if info.get(key) not in (None, ""):
            click.echo(f"{label:>16}: {_shown(info[key])}")


@cli.command(context_settings=CONTEXT)
@click.option("--quiet", "-q", is_flag=True, help="Print nothing: only keep the brief for the next session start.")
@repo_option()
def brief(quiet: bool, repo: str | None, repo_alias: str | None) -> None:
    """The project brief SessionStart gives Claude: commands, layout, conventions (composed with no time limit)."""
    from hippo.core.runtime import hook_context
    from hippo.surfaces.hooks.session_start import brief_text

    root = _root(_repo(repo, repo_alias))
    settings, idx = hook_context(root)
    text = brief_text(root, settings.spec_globs, idx.path)
    if not quiet:
        click.echo(text or "No brief: the repository has no commands, layout or conventions hippo can read.")


# --- plugin bundle: `hippo mcp`, `hippo init` (see docs/plugin.md) ---------------------------

@cli.command(context_settings=CONTEXT)
@repo_option("Repository root (default: $HIPPO_PROJECT_DIR, $CLAUDE_PROJECT_DIR, then the current one).")
def mcp(repo: str | None, repo_alias: str | None) -> None:
    """Run the MCP stdio server exposing search_codebase (Claude Code starts it via .mcp.json)."""
    from hippo.surfaces.mcp_server import project_root, serve

    repo = _repo(repo, repo_alias)
    serve(_root(repo) if repo else project_root())


@cli.command(context_settings=CONTEXT)
@click.option("--rules-file", is_flag=True, help="Write .claude/rules/hippo.md instead of appending to CLAUDE.md.")
@click.option("--dry-run", is_flag=True, help="Print the diff, change nothing.")
@repo_option()
def init(rules_file: bool, dry_run: bool, repo: str | None, repo_alias: str | None) -> None:
    """Install hippo's search and citation rules into this project's Claude Code memory."""
    from hippo.surfaces.init_rules import install_rules

    res = install_rules(_root(_repo(repo, repo_alias)), rules_file=rules_file, dry_run=dry_run)
    if dry_run:
        click.echo(res.diff or f"{res.path.name}: already up to date, nothing to change.", nl=bool(not res.diff))
        return
    shown = _shown(res.path)
    click.echo({"created": f"Created {shown} with hippo's rules.",
                "appended": f"Appended hippo's rules to {shown}.",
                "updated": f"Updated hippo's rules block in {shown}.",
                "unchanged": f"hippo's rules in {shown} are already up to date."}[res.action])


@cli.command(context_settings=CONTEXT)
@click.argument("event", type=click.Choice(["session-start", "tool-failure", "session-end", "prompt-expansion"]))
def hook(event: str) -> None:
    """Run a Claude Code hook handler (payload on stdin). Always exits 0."""
    from hippo.surfaces.hooks.main import run

    sys.exit(run(event, sys.stdin.buffer.read()))


@cli.command(context_settings=CONTEXT)
@repo_option()
@click.option("--idle", type=float, default=None, help="Exit after this many idle seconds.")
def serve(repo: str | None, repo_alias: str | None, idle: float | None) -> None:
    """Warm per-repo query server for hooks, `hippo search` and the MCP tool (started on first need)."""
    from hippo.surfaces.service.server import serve as run_server

    sys.exit(run_server(_root(_repo(repo, repo_alias)), idle))


# --- team index: `hippo publish` (see docs/team.md) -------------------------------------------

@cli.command(context_settings=CONTEXT)
@click.option("--allow-dirty", is_flag=True, help="Publish even if the work tree differs from HEAD.")
@click.option("--force", is_flag=True, help="Publish again even if HEAD already has a snapshot.")
@repo_option()
def publish(allow_dirty: bool, force: bool, repo: str | None, repo_alias: str | None) -> None:
    """Index HEAD and upload it to the shared index location (CI side; needs `shared_index`)."""
    from hippo.core.config import load_settings
    from hippo.sharing.team import publish as run_publish

    root = _root(_repo(repo, repo_alias))
    with _sigterm_unwinds():
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
