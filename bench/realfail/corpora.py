"""The repositories the benchmark is built from: where their code and tests are, how their tests run,
and the tool environment each needs (installed from PyPI / npm into the cache, never committed)."""
from __future__ import annotations

import fnmatch
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from bench.realfail.workspace import cache_dir

PY_TOOLS = ["pytest==9.2.0", "freezegun==1.5.5", "pytest-benchmark==5.3.1", "hypothesis==6.170.17", "wcwidth==0.2.13",
            "mpmath==1.3.0"]  # mpmath: sympy's one dependency (sympy pinned it below 1.4 in 2024-25)
# One node_modules serves every JS corpus: the runners (jest, mocha, vitest; node:test is built in) and the
# corpora's own runtime dependencies, each pinned. A commit needing another major version fails both before
# and after its fix and is dropped by the builder.
NODE_TOOLS = ["jest@29.7.0", "ts-jest@29.2.5", "typescript@5.6.3", "@types/jest@29.5.14", "mocha@10.8.2",
              "vitest@3.2.4", "argparse@2.0.1", "fill-range@7.1.1", "ajv@8.17.1", "ajv-formats@3.0.1",
              "fast-uri@3.0.6", "json-schema-ref-resolver@2.0.1", "rfdc@1.4.1", "@fastify/merge-json-schemas@0.2.1",
              "fast-deep-equal@3.1.3", "fast-querystring@1.1.2", "safe-regex2@5.0.0", "proxyquire@2.1.3",
              "@borderless/ts-scripts@0.15.0"]
ENV_STAMP = "5"  # bump when a tool list changes: the cached environment is rebuilt

# The command each runner takes, with {tests} standing for the test files of one case.
RUNNERS = {
    "pytest": "python -m pytest -p no:cacheprovider {tests}",
    "unittest": "python -m unittest {tests}",
    "jest": "npx jest {tests}",
    "vitest": "npx vitest run {tests}",
    "mocha": "npx mocha {tests}",
    "node:test": "node --test {tests}",
}


@dataclass(frozen=True)
class Corpus:
    repo: str  # owner/name on GitHub
    language: str  # python | javascript
    src: tuple[str, ...]  # globs of the code under test
    tests: tuple[str, ...]  # globs of test files
    command: str  # with {tests}: the files to run
    runner: str = "pytest"  # a key of RUNNERS: the runner named in reports
    runnable: str = r"(^|/)(test_\w+|\w+_test)\.py$|\.test\.[cm]?js$"  # a changed test file the builder may run
    since: str = "2019-01-01"  # fix commits older than this need tool versions we do not install
    until: str = ""
    mutate: tuple[str, ...] = ()  # files mutate.py may change, each with its covering test files
    mutate_tests: dict = field(default_factory=dict)
    # its own pinned PyPI packages, in an environment of its own (envs/py-<name>) instead of the shared
    # PY_TOOLS: a big project's dependencies (docutils, astroid) stay out of the other corpora's tests
    tools: tuple[str, ...] = ()

    def is_test(self, path: str) -> bool:
        return any(fnmatch.fnmatch(path, g) for g in self.tests)

    def is_src(self, path: str) -> bool:
        return not self.is_test(path) and any(fnmatch.fnmatch(path, g) for g in self.src)

    def command_for(self, tree: Path, tests: list[str]) -> str:
        """The command that runs `tests` at this checkout: a repository that changed runner over its
        history (jest, later vitest) is run with the one its package.json names."""
        command = self.command
        if not command:
            dev = _package_json(tree).get("devDependencies", {})
            command = next((RUNNERS[r] for r in ("vitest", "jest", "mocha") if r in dev), RUNNERS["jest"])
        return command.format(tests=" ".join(tests))

    def is_runnable(self, path: str) -> bool:
        return bool(re.search(self.runnable, path))

    def env_home(self) -> Path:
        if self.tools:
            return cache_dir() / "envs" / f"py-{self.repo.split('/')[1]}"
        return cache_dir() / "envs" / ("py" if self.language == "python" else "node")

    def env_bin(self) -> Path:
        home = self.env_home()
        return home / "bin" if self.language == "python" else home / "node_modules" / ".bin"

    def prepare(self, tree: Path) -> None:
        """What a developer's checkout has after setup: node_modules, a generated version file."""
        if self.tools:
            ensure_env(self.language, self.tools, self.env_home())
        else:
            ensure_env(self.language)
        if self.language == "javascript":
            link = tree / "node_modules"
            if not link.exists():
                link.symlink_to(self.env_home() / "node_modules")
        if self.repo == "python-humanize/humanize":
            for pkg in (tree / "src" / "humanize", tree / "humanize"):
                if pkg.is_dir() and not (pkg / "_version.py").exists():
                    (pkg / "_version.py").write_text('__version__ = version = "0.0.0"\n')
        if self.repo == "pytest-dev/pytest" and (tree / "src" / "_pytest").is_dir():
            vfile = tree / "src" / "_pytest" / "_version.py"  # setuptools-scm writes it at install
            if not vfile.exists():
                tag = subprocess.run(["git", "describe", "--tags", "--abbrev=0"], cwd=tree, capture_output=True,
                                     text=True).stdout.strip() or "0.0.0"
                version = tag if "dev" in tag else tag + ".post1.dev0"  # past the tag, as scm would say
                parts = tuple(int(x) for x in re.findall(r"\d+", tag)[:3])
                vfile.write_text(f"__version__ = version = {version!r}\n"
                                 f"__version_tuple__ = version_tuple = {parts + ('dev0',)!r}\n")


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
                         "lib/argument.js": "tests"}, runner="jest"),
    # issue 23: more corpora, one runner each where the repository's own suite uses it
    Corpus("pytoolz/toolz", "python", ("toolz/*.py", "toolz/**/*.py"), ("toolz/tests/*", "tests/*"),
           RUNNERS["pytest"], since="2017-01-01"),
    Corpus("tkem/cachetools", "python", ("src/cachetools/*.py", "cachetools/*.py"), ("tests/*",),
           "PYTHONPATH=src " + RUNNERS["unittest"], since="2016-01-01", runner="unittest",
           mutate=("src/cachetools/__init__.py", "src/cachetools/_cached.py", "src/cachetools/keys.py"),
           mutate_tests={"src/cachetools/__init__.py": "tests/test_lru.py tests/test_ttl.py tests/test_lfu.py "
                         "tests/test_fifo.py tests/test_tlru.py tests/test_rr.py",
                         "src/cachetools/_cached.py": "tests/test_cached.py",
                         "src/cachetools/keys.py": "tests/test_keys.py"}),
    Corpus("mahmoud/boltons", "python", ("boltons/*.py",), ("tests/*",), RUNNERS["pytest"], since="2017-01-01",
           mutate=("boltons/iterutils.py", "boltons/strutils.py", "boltons/setutils.py"),
           mutate_tests={"boltons/iterutils.py": "tests/test_iterutils.py", "boltons/strutils.py": "tests/test_strutils.py",
                         "boltons/setutils.py": "tests/test_setutils.py"}),
    Corpus("astanin/python-tabulate", "python", ("tabulate.py", "tabulate/*.py"), ("test/*",),
           RUNNERS["pytest"], since="2017-01-01"),
    Corpus("nodeca/js-yaml", "javascript", ("lib/*.js", "lib/**/*.js", "index.js"), ("test/*", "test/**"),
           RUNNERS["mocha"], since="2016-01-01", runner="mocha", runnable=r"^test/(issues/[^/]+|\d\d-[\w-]+)\.js$"),
    Corpus("micromatch/picomatch", "javascript", ("lib/*.js", "index.js"), ("test/*",), RUNNERS["mocha"],
           since="2018-01-01", runner="mocha", runnable=r"^test/[\w.-]+\.js$",
           mutate=("lib/parse.js", "lib/scan.js", "lib/picomatch.js"),
           mutate_tests={"lib/parse.js": "test/extglobs.js test/stars.js test/brackets.js",
                         "lib/scan.js": "test/api.scan.js", "lib/picomatch.js": "test/api.picomatch.js test/options.js"}),
    Corpus("unjs/ufo", "javascript", ("src/*.ts", "src/**/*.ts"), ("test/*",), RUNNERS["vitest"],
           since="2021-01-01", runner="vitest", runnable=r"^test/[\w.-]+\.test\.ts$",
           mutate=("src/utils.ts", "src/parse.ts", "src/query.ts", "src/encoding.ts"),
           mutate_tests={"src/utils.ts": "test/utilities.test.ts test/base.test.ts test/trailing-slash.test.ts "
                         "test/join.test.ts", "src/parse.ts": "test/parse.test.ts",
                         "src/query.ts": "test/query.test.ts", "src/encoding.ts": "test/encoding.test.ts"}),
    Corpus("pillarjs/path-to-regexp", "javascript", ("src/*.ts",), ("src/*.spec.ts", "src/*.test.ts", "test/*"),
           RUNNERS["vitest"], since="2024-09-01", runner="vitest", runnable=r"\.(spec|test)\.ts$"),
    Corpus("andialbrecht/sqlparse", "python", ("sqlparse/*.py", "sqlparse/**/*.py"), ("tests/*", "tests/**"),
           RUNNERS["pytest"], since="2016-01-01"),
    Corpus("Python-Markdown/markdown", "python", ("markdown/*.py", "markdown/**/*.py"), ("tests/*", "tests/**"),
           RUNNERS["unittest"], since="2018-01-01", runner="unittest", runnable=r"^tests/(.+/)?test_\w+\.py$"),
    Corpus("fb55/css-what", "javascript", ("src/*.ts",), ("src/*.spec.ts", "src/__fixtures__/*", "__tests__/*"),
           "", since="2019-08-02", runner="jest|vitest", runnable=r"\.spec\.ts$"),
    Corpus("fb55/entities", "javascript", ("src/*.ts",), ("src/*.spec.ts", "src/__fixtures__/*", "test/*"),
           "", since="2019-08-01", runner="jest|vitest", runnable=r"\.spec\.ts$"),
    Corpus("delvedor/find-my-way", "javascript", ("index.js", "lib/*.js", "lib/**/*.js"), ("test/*", "test/**"),
           RUNNERS["node:test"], since="2024-12-14", runner="node:test", runnable=r"^test/[\w.-]+\.test\.js$"),
    Corpus("fastify/fast-json-stringify", "javascript", ("index.js", "lib/*.js"), ("test/*", "test/**"),
           RUNNERS["node:test"], since="2024-09-26", runner="node:test", runnable=r"^test/[\w.-]+\.test\.js$"),
    # big Python repositories (issue 23: the external checks run on SWE-bench-sized projects)
    # sympy: ~900 source files; `-m 'not slow and not tooslow'` is its pytest default from 2023-01-16 on
    # (before it, one test file could run for many minutes)
    Corpus("sympy/sympy", "python", ("sympy/*.py",), ("sympy/*/tests/*", "sympy/testing/tests/*"),
           RUNNERS["pytest"], since="2023-01-17"),
    # networkx: ~400 source files, tests pure Python unless they importorskip numpy/scipy (not installed);
    # it dropped Python 3.11 on 2026-01-23
    Corpus("networkx/networkx", "python", ("networkx/*.py",), ("networkx/*/tests/*", "networkx/tests/*"),
           RUNNERS["pytest"], since="2022-06-01", until="2026-01-22"),
    # pytest: tests itself; the checkout's src/ is imported (PYTHONPATH, absolute: pytester's subprocess runs
    # change directory), not an installed pytest; its test modules include testing/python/*.py (python_files)
    Corpus("pytest-dev/pytest", "python", ("src/*.py",), ("testing/*",),
           "PYTHONPATH=$PWD/src " + RUNNERS["pytest"], since="2024-01-01",
           runnable=r"^testing/(python/\w+|(\w+/)*test_\w+)\.py$",
           tools=("pluggy==1.6.0", "iniconfig==2.1.0", "packaging==25.0", "pygments==2.19.2", "attrs==25.3.0",
                  "hypothesis==6.135.0", "mock==5.2.0", "requests==2.32.4", "setuptools==80.9.0",
                  "xmlschema==4.1.0", "argcomplete==3.6.2", "pyyaml==6.0.2")),
    # sphinx: ~250 source files; Python 3.11 until 2025-12-02; docutils.utils.roman gone from 2024-11-13
    Corpus("sphinx-doc/sphinx", "python", ("sphinx/*.py",), ("tests/*",), RUNNERS["pytest"],
           since="2024-11-14", until="2025-12-01", runnable=r"^tests/(test_\w+/)?test_\w+\.py$",
           tools=("pytest==9.2.0", "docutils==0.21.2", "Jinja2==3.1.6", "Pygments==2.19.2", "snowballstemmer==3.0.1",
                  "babel==2.17.0", "alabaster==1.0.0", "imagesize==1.4.1", "requests==2.32.4",
                  "roman-numerals-py==3.1.0", "packaging==25.0", "defusedxml==0.7.1", "typing_extensions==4.14.0",
                  "setuptools==80.9.0", "sphinxcontrib-applehelp==2.0.0", "sphinxcontrib-devhelp==2.0.0",
                  "sphinxcontrib-htmlhelp==2.1.0", "sphinxcontrib-jsmath==1.0.1", "sphinxcontrib-qthelp==2.0.0",
                  "sphinxcontrib-serializinghtml==2.0.0")),
]


def runner_of(command: str) -> str:
    """The runner a recorded command uses (for the per-repo tables)."""
    for name in ("vitest", "jest", "mocha", "unittest", "pytest"):
        if name in command:
            return name
    return "node:test" if "node --test" in command else "other"


def _package_json(tree: Path) -> dict:
    import json

    try:
        return json.loads((tree / "package.json").read_text())
    except (OSError, ValueError):
        return {}


def by_repo(repo: str) -> Corpus:
    for c in CORPORA:
        if c.repo == repo:
            return c
    raise SystemExit(f"realfail: unknown corpus {repo!r}")


def ensure_env(language: str, tools: tuple[str, ...] = (), home: Path | None = None) -> None:
    """Install the pinned test tools once (PyPI / npm), into the cache: the shared list, or a corpus's own
    `tools` into its own `home`."""
    home = home or cache_dir() / "envs" / ("py" if language == "python" else "node")
    stamp = home / ".realfail-env"
    want = " ".join(tools) if tools else ENV_STAMP
    if stamp.exists() and stamp.read_text() == want:
        return
    if language == "python":
        if not (home / "bin" / "pip").exists():
            subprocess.run([sys.executable, "-m", "venv", str(home)], check=True)
        subprocess.run([str(home / "bin" / "pip"), "install", "-q", *(tools or PY_TOOLS)], check=True)
    else:
        home.mkdir(parents=True, exist_ok=True)
        (home / "package.json").write_text('{"name": "realfail-tools", "private": true}\n')
        subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--silent", *NODE_TOOLS], cwd=home,
                       check=True, env={**os.environ, "npm_config_update_notifier": "false"})
    stamp.write_text(want)
