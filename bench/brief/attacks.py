"""Adversarial repository files for the SessionStart brief (issue 19): the red team's cases and the fuzz classes.

Each attack is a file kind the brief reads (its path in the repo) and a text made of one short unit repeated
to a target size: long dotted keys, unbalanced brackets, long whitespace runs, repeated delimiters. Shared by
the benchmark (bench/brief/adversarial.py) and the tests (tests/test_brief_hostile.py), so both try the same
inputs.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Attack:
    name: str  # kind/what, e.g. "justfile/space-tab"
    path: str  # where the file sits in the repo
    make: Callable[[int], str]  # size in bytes -> file text (about that size)

    def text(self, size: int) -> str:
        return self.make(size)


def _rep(unit: str, head: str = "", tail: str = "") -> Callable[[int], str]:
    def make(size: int) -> str:
        n = max(1, (size - len(head) - len(tail)) // max(1, len(unit)))
        return head + unit * n + tail

    return make


def _lines(line: str, head: str = "") -> Callable[[int], str]:
    return _rep(line + "\n", head)


ATTACKS: tuple[Attack, ...] = (
    # a control: plain prose of the same size (the hook's time on a harmless file under the same load)
    Attack("control/plain-readme", "README.md", _lines("Plain words about the project, nothing odd.")),
    # the red team's four
    Attack("justfile/space-tab", "justfile", _rep(" \t", "build")),
    Attack("noxfile/session-heads", "noxfile.py", _rep("@nox.session(")),
    Attack("pyproject/dotted-key", "pyproject.toml", _rep("a.")),
    Attack("cargo/dotted-key", "Cargo.toml", _rep("a.")),
    # the fuzz's other finds and their neighbours
    Attack("pyproject/open-braces", "pyproject.toml", _rep("{", "a = ")),
    Attack("pyproject/open-brackets", "pyproject.toml", _rep("[")),
    Attack("pyproject/dotted-assign", "pyproject.toml", _rep("a.", "", "a = 1\n")),
    Attack("pyproject/dotted-table", "pyproject.toml", _rep("a.", "[tool.", "a]\nx = 1\n")),
    Attack("pyproject/tox-braces", "pyproject.toml",
           _rep("{a,b,c,d,e,f,g,h,i,j,k,l}", '[tool.tox]\nlegacy_tox_ini = """\n[tox]\nenvlist = py', '\n"""\n')),
    Attack("makefile/equals", "Makefile", _rep("= ", "a")),
    Attack("makefile/names-no-colon", "Makefile", _rep("a ")),
    Attack("makefile/space-tab", "Makefile", _rep(" \t", "a")),
    Attack("makefile/many-targets", "Makefile", _lines("t: a b\n\techo x")),
    Attack("justfile/param-equals", "justfile", _rep(" a=", "build")),
    Attack("justfile/colons", "justfile", _rep(":", "build ")),
    Attack("justfile/many-recipes", "justfile", _lines("r a b:\n    echo x")),
    Attack("noxfile/decorators", "noxfile.py", _rep("@nox.session()\n@x\n")),
    Attack("noxfile/def-no-colon", "noxfile.py", _rep(" ", "@nox.session()\ndef f(")),
    Attack("tox/env-braces", "tox.ini", _rep("{a,b,c,d,e,f,g,h,i,j,k,l}", "[tox]\nenvlist = py")),
    Attack("tox/open-braces", "tox.ini", _rep("{", "[tox]\nenvlist = a")),
    Attack("tox/command-prefix", "tox.ini", _rep("a,", "[testenv:x]\ncommands =\n    ")),
    Attack("setup.cfg/tox-braces", "setup.cfg", _rep("{a,b,c,d,e,f,g,h,i,j,k,l}", "[tox:tox]\nenvlist = py")),
    Attack("setup.cfg/key-spaces", "setup.cfg", _rep(" ", "[flake8]\nmax-line-length", "x")),
    Attack("package.json/deep-nesting", "package.json", _rep("[")),
    Attack("package.json/script-and", "package.json",
           lambda size: '{"scripts": {"test": "' + "xo && " * max(1, size // 6) + '"}}'),
    Attack("package.json/script-spaces", "package.json",
           lambda size: '{"scripts": {"test": "jest' + " " * max(1, size - 40) + '"}}'),
    Attack("pre-commit/ids", ".pre-commit-config.yaml", _rep("  - id:" + " " * 20)),
    Attack("workflow/run-block", ".github/workflows/ci.yml", _rep("    ", "jobs:\n  t:\n    steps:\n      - run: |\n")),
    Attack("workflow/run-spaces", ".github/workflows/ci.yml", _rep(" ", "- run:")),
    Attack("readme/backticks", "README.md", _rep("`", "# Development\n\n")),
    Attack("readme/double-backticks", "README.md", _rep("``a", "# Development\n\n")),
    Attack("readme/headings", "README.md", _rep("#", "", " x\n")),
    Attack("readme/underlines", "README.md", _lines("x\n===")),
    Attack("readme/fences", "README.md", _lines("```")),
    Attack("contributing/list-items", "CONTRIBUTING.md", _rep("- ", "# Style\n\n")),
    Attack("contributing/badges", "CONTRIBUTING.md", _rep("[![", "# Style\n\n")),
    Attack("contributing/link-defs", "CONTRIBUTING.md", _rep("[a]", "# Style\n\n")),
    Attack("contributing/tildes", "CONTRIBUTING.md", _rep("~", "# Style\n\n")),
    Attack("contributing/blank-lines", "CONTRIBUTING.md", _rep("\n", "# Style\n\nx")),
    Attack("editorconfig/key-spaces", ".editorconfig", _rep(" ", "indent", "= x")),
    Attack("rustfmt/dotted-key", "rustfmt.toml", _rep("a.")),
    Attack("golangci/enable", ".golangci.yml", _rep("  - a\n", "enable:\n")),
    Attack("go.mod/module-spaces", "go.mod", _rep(" ", "module")),
    Attack("src/docstring-hashes", "src/__init__.py", _rep("#\n")),
    Attack("src/comment-stars", "src/__init__.py", _rep("*", "/**")),
    # found while fixing the above
    Attack("src/comment-spaces", "src/__init__.py", _rep(" ", "/**")),
    Attack("tox/env-range", "tox.ini", lambda size: "[tox]\nenvlist = py{1-999999999999}\n" + "#" * size),
    Attack("tox/option-spaces", "tox.ini", _rep(" ", "[tox]\nenvlist", "x")),
    Attack("makefile/distinct-targets", "Makefile",
           lambda size: "".join(f"t{i} " for i in range(max(1, size // 7))) + ":\n\techo x\n"),
    Attack("makefile/secret-prefix", "Makefile", _rep("sk-", "test:\n\t")),
    Attack("pre-commit/blank-lines", ".pre-commit-config.yaml", _rep("\n", "repos:", "x")),
    Attack("golangci/blank-lines", ".golangci.yml", _rep("\n", "enable:", "x")),
    Attack("readme/long-heading", "README.md", _rep("?", "# Development", " " * 1000)),
    Attack("readme/runner-chain", "README.md", _rep("uv run ", "# Development\n\n```\n", "\n```\n")),
    Attack("contributing/secret-prefix", "CONTRIBUTING.md", _rep("sk-", "# Style\n\n")),
)

RED_TEAM = ("justfile/space-tab", "noxfile/session-heads", "pyproject/dotted-key", "cargo/dotted-key")
BY_NAME = {a.name: a for a in ATTACKS}
