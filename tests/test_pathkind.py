"""The one table of path kinds: what discovery, search, diagnosis and the brief all agree a path is."""
from __future__ import annotations

import pytest

from hippo.core import pathkind

# path -> the kinds it has (test, doc, changelog, example, vendored, generated, types, prose_name); absent = code
EXAMPLES = {
    "src/app/models.py": set(),
    "lib/history.js": set(),
    "lib/release.py": set(),
    "src/Commit.java": set(),
    "tests/test_models.py": {"test"},
    "test_models.py": {"test"},
    "pkg/ledger_test.go": {"test"},
    "lib/x.test.ts": {"test"},
    "src/button.spec.tsx": {"test"},
    "spec/models/user_spec.rb": {"test"},
    "src/test/java/org/app/UserServiceTest.java": {"test"},
    "app/src/UserServiceIT.kt": {"test"},
    "conftest.py": {"test"},
    "__tests__/render.js": {"test"},
    "tests/fixtures/repo/a.py": {"test"},
    "pkg/testdata/input.json": {"test"},
    "README.md": {"doc", "prose_name"},
    "LICENSE": {"prose_name"},
    "pkg/authors.txt": {"doc", "prose_name"},
    "docs/api.py": {"doc"},
    "guide/intro.rst": {"doc"},
    "CHANGELOG.md": {"doc", "changelog"},
    "CHANGES.rst": {"doc", "changelog"},
    "History.md": {"doc", "changelog"},
    "NEWS": {"doc", "changelog"},
    "docs/release-notes.md": {"doc", "changelog"},
    "examples/basic/app.py": {"example"},
    "tutorial/step1.js": {"example"},
    "node_modules/left-pad/index.js": {"vendored"},
    "third_party/zlib/zlib.h": {"vendored"},
    "cc_hippo.egg-info/PKG-INFO": {"vendored", "generated"},
    "PKG-INFO": {"generated"},
    "src/generated/api_pb2.py": {"generated"},
    "api/user_generated.go": {"generated"},
    "package-lock.json": {"generated"},
    "rust/Cargo.lock": {"generated"},
    "go.sum": {"generated"},
    "static/app.min.js": {"generated"},
    "static/app.js.map": {"generated"},
    "src/generator.py": set(),
    "types/index.d.ts": {"types"},
    "src/mod.d.mts": {"types"},
    "stubs/requests/api.pyi": {"types"},
    "src/dts.ts": set(),
}


@pytest.mark.parametrize("path", sorted(EXAMPLES))
def test_each_path_has_exactly_its_kinds(path):
    got = {kind for kind, rule in (("test", pathkind.is_test), ("doc", pathkind.is_doc),
                                   ("changelog", pathkind.is_changelog), ("example", pathkind.is_example),
                                   ("vendored", pathkind.is_vendored), ("generated", pathkind.is_generated),
                                   ("types", pathkind.is_type_declaration), ("prose_name", pathkind.is_prose_name))
           if rule(path)}
    assert got == EXAMPLES[path]


def test_low_signal_and_reads_as_doc_are_made_of_the_kinds():
    for path, kinds in EXAMPLES.items():
        assert pathkind.is_low_signal(path) == bool(kinds & {"test", "example", "vendored", "generated"}), path
        assert pathkind.reads_as_doc(path) == bool(kinds & {"doc", "changelog", "example"}), path


def test_vendored_dir_names():
    assert pathkind.is_vendored_dir("node_modules") and pathkind.is_vendored_dir("Vendor")
    assert pathkind.is_vendored_dir("mypkg.egg-info") and not pathkind.is_vendored_dir("src")


def test_ranking_kinds_come_from_the_table():
    from hippo.retrieval.rankpolicy import path_kind

    for path, kinds in EXAMPLES.items():
        want = ("generated" if "generated" in kinds else "types" if "types" in kinds
                else "changelog" if "changelog" in kinds else "test" if pathkind.is_low_signal(path)
                else "doc" if kinds & {"doc", "prose_name"} else "code")
        assert path_kind(path) == want, path
