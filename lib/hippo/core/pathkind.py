"""What kind of path this is: a test, prose, a changelog, an example, vendored or generated code, a type
declaration.

One table of rules for discovery, search, diagnosis and the brief; each decides what a kind weighs for
it (search ranks examples low unless asked, diagnosis reads them like docs). The examples the rules
must classify live in tests/test_pathkind.py. Stdlib only: the hooks use it.
"""
from __future__ import annotations

import re

# Folders of code and docs that show how to use the project (flask's examples/*/README set up other apps):
# not the project's own source, commands or conventions.
EXAMPLE_DIRS = frozenset({"examples", "example", "samples", "sample", "demo", "demos", "tutorial", "tutorials",
                          "quickstart", "cookbook"})
# Folders that hold someone else's code: never indexed, never walked for the brief.
VENDORED_DIRS = frozenset({
    "node_modules", "vendor", "bower_components", "site-packages", ".venv", "venv", "third_party", ".eggs",
})
# Folders of build output and tool caches (yours, but generated): skipped the same way, reported apart, so a
# project's own `__pycache__` or `*.egg-info` is not called "vendored".
BUILD_DIRS = frozenset({
    "dist", "build", "target", "__pycache__", ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache",
    ".gradle", ".next", ".nuxt", ".svelte-kit", ".terraform", "_build", ".cache", ".parcel-cache", "coverage",
    "htmlcov",
})

_TEST = re.compile(
    r"(?i:(?:^|/)(?:tests?|__tests__|spec|specs|testing|test_?utils?|fixtures?|testdata)/"
    r"|(?:^|/)(?:test_[^/]*|[^/]*_test\.[a-z]+|conftest\.py)$|\.(?:test|spec)\.[a-z]+$|_spec\.rb$)"
    r"|(?:Test|Tests|IT)\.(?:java|kt)$")  # JUnit names are case-sensitive: `Commit.java` is no test
_PROSE_EXT = re.compile(r"\.(?:md|mdx|markdown|rst|txt|adoc)$", re.IGNORECASE)
_DOC_DIR = re.compile(r"(?:^|/)(?:docs?|documentation|site|website|guides?)/", re.IGNORECASE)
# Release notes repeat every feature's words; they answer "what changed", never "where is it done".
_CHANGELOG = re.compile(r"(?:^|/)(?:change[s_-]?log|changes|history|news|release[s_-]?notes?|releases)"
                        r"(?:\.(?:md|mdx|markdown|rst|txt|adoc))?$", re.IGNORECASE)  # `history.js` is code
# Written by a tool, not by hand: package metadata, lockfiles, minified bundles and their maps, generated code.
_GENERATED = re.compile(
    r"(^|/)(pkg-info|[^/]+\.egg-info/.*|[^/]+\.dist-info/.*|package-lock\.json|npm-shrinkwrap\.json|yarn\.lock|"
    r"pnpm-lock\.yaml|cargo\.lock|poetry\.lock|uv\.lock|pdm\.lock|pipfile\.lock|gemfile\.lock|composer\.lock|"
    r"go\.sum|[^/]+\.min\.(js|css)|[^/]+\.(js|css)\.map|[^/]*[._-]generated\.[a-z]+|generated/.*)$",
    re.IGNORECASE)
# Declarations of an API whose code lives elsewhere (TypeScript's .d.ts, Python's stubs).
_TYPE_DECLARATION = re.compile(r"\.(d\.[cm]?ts|pyi)$", re.IGNORECASE)
# The project's own prose files by name, with or without an extension (`LICENSE`, `readme.txt`).
_PROSE_NAME = re.compile(r"(^|/)(readme|contributing|code_of_conduct|security|authors|license|copying)"
                         r"(\.[a-z0-9]+)?$", re.IGNORECASE)


def is_test(path: str) -> bool:
    """Test code, its fixtures and helpers (`tests/`, `test_x.py`, `x.spec.ts`, `FooTest.java`, ...)."""
    return bool(_TEST.search(path))


def is_changelog(path: str) -> bool:
    return bool(_CHANGELOG.search(path))


def is_prose(path: str) -> bool:
    """A document by its extension (Markdown, reST, text, AsciiDoc)."""
    return bool(_PROSE_EXT.search(path))


def is_doc(path: str) -> bool:
    """Prose, anything under a docs folder, or a changelog."""
    return bool(_PROSE_EXT.search(path) or _DOC_DIR.search(path) or _CHANGELOG.search(path))


def is_example_dir(name: str) -> bool:
    return name.lower() in EXAMPLE_DIRS


def is_example(path: str) -> bool:
    """Example, tutorial, sample or demo code: shows how to use the project, is not the project."""
    return any(is_example_dir(part) for part in path.split("/")[:-1])


def skipped_dir(name: str) -> str | None:
    """Why a folder is never indexed: "vendored" (someone else's code), "build output" (generated here, a
    `*.egg-info` too), or None."""
    low = name.lower()
    if low in VENDORED_DIRS:
        return "vendored"
    if low in BUILD_DIRS or name.endswith(".egg-info"):
        return "build output"
    return None


def is_vendored_dir(name: str) -> bool:
    """A folder of vendored code or build output: neither is the project's own source."""
    return skipped_dir(name) is not None


def is_vendored(path: str) -> bool:
    return any(is_vendored_dir(part) for part in path.split("/")[:-1])


def is_generated(path: str) -> bool:
    """Written by a tool: PKG-INFO and egg-/dist-info, lockfiles, minified bundles and source maps,
    `*_generated.*`, anything under `generated/`."""
    return bool(_GENERATED.search(path))


def is_type_declaration(path: str) -> bool:
    """`.d.ts` / `.d.cts` / `.d.mts` / `.pyi`: the signature, not the code that does it."""
    return bool(_TYPE_DECLARATION.search(path))


def is_prose_name(path: str) -> bool:
    """README, CONTRIBUTING, LICENSE and the like by name, whatever their extension (ranking reads them as
    docs; `is_doc` goes by extension and folder)."""
    return bool(_PROSE_NAME.search(path))


def is_low_signal(path: str) -> bool:
    """Not the code a question is about unless it asks: tests, examples, vendored or generated code."""
    return is_test(path) or is_example(path) or is_vendored(path) or is_generated(path)


def reads_as_doc(path: str) -> bool:
    """What a reader of code takes as documentation: docs, changelogs and examples (diagnosis weighs them
    last; search keeps examples apart because a question may ask for one)."""
    return is_doc(path) or is_example(path)
