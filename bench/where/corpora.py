"""The repositories the benchmark reads, pinned to a head commit so the task list is reproducible.

Bring each one as any git clone (bare or not) of github.com/<owner>/<name> and point `--repos` at the folder
holding them, named `<owner>+<name>` (with or without a trailing `/repo`) or `<name>`. Nothing is downloaded
by the benchmark itself.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Corpus:
    name: str
    repo: str  # owner/name on GitHub
    head: str  # tasks are drawn from first-parent history ending here
    language: str


CORPORA = (
    Corpus("httpx", "encode/httpx", "ae1b9f66238f75ced3ced5e4485408435de10768", "python"),
    Corpus("rich", "Textualize/rich", "42899d8a0a96b121a514516f4be9db44ff7aeaf3", "python"),
    Corpus("axios", "axios/axios", "23a25af0688d1db2c396deb09229d2271cc24f6c", "javascript"),
    Corpus("got", "sindresorhus/got", "d00d845a0b435365ec73ea5a1fca6e17ee677184", "typescript"),
    Corpus("cobra", "spf13/cobra", "adbc8813901bba65827259daa8e22ff94ec1f30e", "go"),
    Corpus("fd", "sharkdp/fd", "ee20f426ddf338ac7ead5c5f00ea49258005caaf", "rust"),
)


def git_dir(repos: Path, corpus: Corpus) -> Path:
    """The clone of `corpus` under `repos` (raises with the expected names when it is missing)."""
    owner_name = corpus.repo.replace("/", "+")
    for cand in (repos / owner_name / "repo", repos / owner_name, repos / corpus.name):
        if (cand / "HEAD").is_file() or (cand / ".git").exists():
            return cand
    raise SystemExit(f"no clone of {corpus.repo} under {repos} (expected {owner_name}/ or {corpus.name}/); "
                     f"clone https://github.com/{corpus.repo} there")
