"""The repositories the benchmark is built from: where their code and tests are, how their tests run,
and the tool environment each needs (installed from PyPI / npm into the cache, never committed)."""
from __future__ import annotations

import fnmatch
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from bench.realfail.workspace import cache_dir

PY_TOOLS = ["pytest==9.2.0", "freezegun==1.5.5", "pytest-benchmark==5.3.1", "hypothesis==6.170.17"]
NODE_TOOLS = ["jest@29.7.0", "ts-jest@29.2.5", "typescript@5.6.3", "@types/jest@29.5.14"]


@dataclass(frozen=True)
class Corpus:
    repo: str  # owner/name on GitHub
    language: str  # python | javascript
    src: tuple[str, ...]  # globs of the code under test
    tests: tuple[str, ...]  # globs of test files
    command: str  # with {tests}: the files to run
    since: str = "2019-01-01"  # fix commits older than this need tool versions we do not install
    until: str = ""
    mutate: tuple[str, ...] = ()  # files mutate.py may change, each with its covering test files
    mutate_tests: dict = field(default_factory=dict)

    def is_test(self, path: str) -> bool:
        return any(fnmatch.fnmatch(path, g) for g in self.tests)

    def is_src(self, path: str) -> bool:
        return not self.is_test(path) and any(fnmatch.fnmatch(path, g) for g in self.src)

    def env_home(self) -> Path:
        return cache_dir() / "envs" / ("py" if self.language == "python" else "node")

    def env_bin(self) -> Path:
        home = self.env_home()
        return home / "bin" if self.language == "python" else home / "node_modules" / ".bin"

    def prepare(self, tree: Path) -> None:
        """What a developer's checkout has after setup: node_modules, a generated version file."""
        ensure_env(self.language)
        if self.language == "javascript":
            link = tree / "node_modules"
            if not link.exists():
                link.symlink_to(self.env_home() / "node_modules")
        if self.repo == "python-humanize/humanize":
            for pkg in (tree / "src" / "humanize", tree / "humanize"):
                if pkg.is_dir() and not (pkg / "_version.py").exists():
                    (pkg / "_version.py").write_text('__version__ = version = "0.0.0"\n')


CORPORA = [
    Corpus("more-itertools/more-itertools", "python", ("more_itertools/*.py",),
           ("tests/*", "more_itertools/tests/*"), "python -m pytest {tests}",
           mutate=("more_itertools/more.py", "more_itertools/recipes.py"),
           mutate_tests={"more_itertools/more.py": "tests/test_more.py",
                         "more_itertools/recipes.py": "tests/test_recipes.py"}),
    Corpus("python-humanize/humanize", "python", ("src/humanize/*.py", "humanize/*.py", "src/humanize/**"),
           ("tests/*",), "PYTHONPATH=src python -m pytest -p no:cacheprovider {tests}", since="2020-06-01",
           mutate=("src/humanize/number.py", "src/humanize/time.py", "src/humanize/filesize.py", "src/humanize/lists.py"),
           mutate_tests={"src/humanize/number.py": "tests/test_number.py", "src/humanize/time.py": "tests/test_time.py",
                         "src/humanize/filesize.py": "tests/test_filesize.py", "src/humanize/lists.py": "tests/test_lists.py"}),
    Corpus("tj/commander.js", "javascript", ("index.js", "lib/*.js"), ("tests/*",), "npx jest {tests}",
           since="2019-06-01", until="2026-02-18",
           mutate=("lib/command.js", "lib/option.js", "lib/help.js", "lib/argument.js"),
           mutate_tests={"lib/command.js": "tests", "lib/option.js": "tests", "lib/help.js": "tests",
                         "lib/argument.js": "tests"}),
]


def by_repo(repo: str) -> Corpus:
    for c in CORPORA:
        if c.repo == repo:
            return c
    raise SystemExit(f"realfail: unknown corpus {repo!r}")


def ensure_env(language: str) -> None:
    """Install the pinned test tools once (PyPI / npm), into the cache."""
    home = cache_dir() / "envs" / ("py" if language == "python" else "node")
    if language == "python":
        if not (home / "bin" / "pytest").exists():
            subprocess.run([sys.executable, "-m", "venv", str(home)], check=True)
            subprocess.run([str(home / "bin" / "pip"), "install", "-q", *PY_TOOLS], check=True)
    else:
        if not (home / "node_modules" / ".bin" / "jest").exists():
            home.mkdir(parents=True, exist_ok=True)
            (home / "package.json").write_text('{"name": "realfail-tools", "private": true}\n')
            subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--silent", *NODE_TOOLS], cwd=home,
                           check=True, env={**os.environ, "npm_config_update_notifier": "false"})
