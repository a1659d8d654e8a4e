"""The project brief SessionStart pushes: what a senior teammate says first.

In this order, within one character budget: the commands (install, build, test, one test, lint,
format, run) with where each came from, the layout (folders and entry points), then the
conventions condensed from the docs with process text dropped. Reads only the repo's own files,
stdlib only, no index needed. The hook (hippo.surfaces.hooks.session_start) adds the rules, the index
status and what changed since the last session.
"""
from __future__ import annotations

import time
from pathlib import Path

from hippo.push.brief import cache, commands, conventions, layout
from hippo.push.brief.repo import Repo

COMMANDS_BUDGET = 2200
LAYOUT_BUDGET = 1100


def compose(root: Path, spec_globs, budget: int, *, deadline: float | None = None,
            cpu_seconds: float | None = None, parts: list[str] | None = None,
            notes: list[str] | None = None, cache_dir: Path | None = None, outcome: dict | None = None) -> str:
    """Commands, layout and conventions for the repo at `root`, in at most `budget` characters.

    `deadline` (a time.monotonic() value): no new section or file is started after it, so a slow repo
    yields the sections finished by then; `cpu_seconds` does the same once this thread has spent that much
    CPU time (see Repo). `parts` receives each section as soon as it is done (a caller that stops waiting
    still has them); `notes` receives what was skipped and why (for the log); `cache_dir` (the index dir)
    keeps the tracked-file list and the last finished brief between sessions (brief.cache). `outcome`
    receives `cacheable`, `kept` (the brief came from the index dir), `stale_listing` and `complete`."""
    repo = Repo(root, deadline=deadline, cpu_seconds=cpu_seconds, cache_dir=cache_dir)
    if notes is not None:
        repo.notes = notes  # filled as the brief goes: a caller that stops waiting still has them
    parts = [] if parts is None else parts
    outcome = {} if outcome is None else outcome
    listing_key = repo.listing_key()
    params = cache.params_of(spec_globs, budget)
    outcome["cacheable"] = cache_dir is not None and listing_key is not None
    kept = cache.lookup(cache_dir, root, listing_key, params)
    if kept is not None:
        outcome.update(kept=True, stale_listing=kept.stale_listing, complete=True)
        if kept.text:
            parts.append(kept.text)
        return kept.text
    started = time.thread_time()
    text = _compose(repo, spec_globs, budget, parts)
    complete = not repo.expired()
    outcome.update(kept=False, stale_listing=False, complete=complete)
    if complete and repo.from_git:
        cache.store(cache_dir, root, listing_key, params, text, repo.inputs, time.thread_time() - started)
    return text


def _compose(repo: Repo, spec_globs, budget: int, parts: list[str]) -> str:
    used = 0
    cmd_text = commands.render(commands.extract(repo), min(COMMANDS_BUDGET, budget))
    if cmd_text:
        parts.append(cmd_text)
        used += len(cmd_text) + 2
    lay_text = "" if _stop(repo, "layout") else layout.render(repo, min(LAYOUT_BUDGET, budget - used))
    if lay_text:
        parts.append(lay_text)
        used += len(lay_text) + 2
    conv_text = "" if _stop(repo, "conventions") else conventions.render(repo, spec_globs, budget - used)
    if conv_text:
        parts.append(conv_text)
    return "\n\n".join(parts)


def _stop(repo: Repo, section: str) -> bool:
    if repo.expired():
        repo.note(f"deadline: the {section} section was left out")
        return True
    return False


