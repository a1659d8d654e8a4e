"""The project brief SessionStart pushes: what a senior teammate says first.

In this order, within one character budget: the commands (install, build, test, one test, lint,
format, run) with where each came from, the layout (folders and entry points), then the
conventions condensed from the docs with process text dropped. Reads only the repo's own files,
stdlib only, no index needed. The hook (hippo.surfaces.hooks.session_start) adds the rules, the index
status and what changed since the last session.
"""
from __future__ import annotations

from pathlib import Path

from hippo.push.brief import commands, conventions, layout
from hippo.push.brief.repo import Repo

COMMANDS_BUDGET = 2200
LAYOUT_BUDGET = 1100


def compose(root: Path, spec_globs, budget: int) -> str:
    """Commands, layout and conventions for the repo at `root`, in at most `budget` characters."""
    repo = Repo(root)
    parts: list[str] = []
    used = 0
    cmd_text = commands.render(commands.extract(repo), min(COMMANDS_BUDGET, budget))
    if cmd_text:
        parts.append(cmd_text)
        used += len(cmd_text) + 2
    lay_text = layout.render(repo, min(LAYOUT_BUDGET, budget - used))
    if lay_text:
        parts.append(lay_text)
        used += len(lay_text) + 2
    conv_text = conventions.render(repo, spec_globs, budget - used)
    if conv_text:
        parts.append(conv_text)
    return "\n\n".join(parts)
