"""Refuse to index a home directory, `/`, or a directory above $HOME, unless asked to.

Outside git, hippo indexes a directory as it is: no .gitignore, no boundary but the directory itself.
Claude Code started in ~ and a `/rag-index` would put .bash_history, .kube/config and .aws/credentials
into the index (and into search results). A git repository, even one at ~ (a dotfiles repo), has chosen
what it tracks, so only plain directories are refused. Stdlib only: the /rag-index hook checks this first.
"""
from __future__ import annotations

from pathlib import Path

ALLOW_FLAG = "--allow-home"


def is_home_or_above(root: Path, home: Path | None = None) -> bool:
    """True for the home directory, the filesystem root, and every directory between them."""
    try:
        root = Path(root).resolve()
        home = (home or Path.home()).resolve()
    except (OSError, RuntimeError):
        return False
    return root == Path(root.anchor) or home == root or home.is_relative_to(root)


def refusal(root: Path, home: Path | None = None) -> str | None:
    """The one-line reason not to index `root`, or None when it is fine to."""
    if not is_home_or_above(root, home):
        return None
    from hippo.core.gitutil import is_git_repo

    if is_git_repo(Path(root)):
        return None
    where = "the filesystem root" if Path(root).resolve() == Path(Path(root).resolve().anchor) else (
        "your home directory" if Path(root).resolve() == (home or Path.home()).resolve() else
        "a directory above your home directory")
    return (f"not indexing {root}: it is {where} and not a git repository, so every dotfile in it "
            f"(.bash_history, .kube/config, .aws/...) would be indexed. Run hippo inside a project, or pass "
            f"{ALLOW_FLAG} if you really mean it.")
