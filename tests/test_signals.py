"""Golden cases: real failure outputs (tests/fixtures/errors) -> extracted signals."""
from __future__ import annotations

from pathlib import Path

import pytest

from hippo.push.diagnosis.signals import (
    extract,
    message_literals,
    normalize_path,
    shared_run,
    split_exit,
    template_fragments,
)

ERRORS = Path(__file__).parent / "fixtures" / "errors"
ROOT = "/srv/dev/work"
CWD = {"py": "py", "pytest": "py", "node": "js", "cargo": "rs", "gcc": "c", "java": "java", "javac": "java"}


def sig_of(name: str):
    path = ERRORS / name
    cwd = f"{ROOT}/{CWD.get(path.stem.split('_')[0], '')}".rstrip("/")
    return extract(path.read_text(encoding="utf-8"), cwd=cwd, root=ROOT)


def repo_locs(sig):
    return [(loc.path, loc.line) for loc in sig.repo_locations]


# (fixture, first repo locations, (etype, message) of the first error or None, failed tests, codes)
GOLDEN = [
    ("py_traceback.txt", [("py/shop/cart.py", 10), ("py/shop/main.py", 7)],
     ("ValueError", "quantity must be positive, got -1"), [], []),
    ("pytest_fail.txt", [("py/tests/test_cart.py", 7), ("py/tests/test_cart.py", 13), ("py/shop/cart.py", 14)],
     ("AssertionError", "assert 6 == 7"), ["tests/test_cart.py::test_total", "tests/test_cart.py::test_missing_price"], []),
    ("pytest_short.txt", [("py/tests/test_cart.py", 7), ("py/tests/test_cart.py", 13), ("py/shop/cart.py", 14)],
     ("AssertionError", "assert 6 == 7"), ["tests/test_cart.py::test_total"], []),
    ("py_syntax.txt", [("py/bad_syntax.py", 1)], ("SyntaxError", "invalid syntax"), [], []),
    ("node_throw.txt", [("js/lib/price.js", 6), ("js/index.js", 4)], ("Error", "invalid price: abc"), [], []),
    ("node_typeerror.txt", [("js/typeerr.js", 2)],
     ("TypeError", "Cannot read properties of undefined (reading 'name')"), [], []),
    ("node_test.txt", [("js/price.test.js", 5), ("js/price.test.js", 6)],
     ("AssertionError", "Expected values to be strictly equal:"), ["parses cents"], []),
    ("cargo_panic.txt", [("rs/src/main.rs", 4), ("rs/src/main.rs", 10)], ("panic", "ledger out of balance: -5"), [], []),
    ("cargo_test.txt", [("rs/src/main.rs", 19)], ("panic", "assertion `left == right` failed"), ["tests::sums_entries"], []),
    ("cargo_build.txt", [("rs/src/main.rs", 2)], ("E0308", "mismatched types"), [], ["E0308"]),
    ("gcc_compile.txt", [("c/stack.c", 8)], ("error", "expected ‘,’ or ‘;’ before ‘printf’"), [], []),
    ("gcc_link.txt", [], ("link", "undefined reference to push"), [], []),
    ("java_exception.txt", [("java/com/acme/Inventory.java", 12), ("java/com/acme/Inventory.java", 18)],
     ("java.lang.IllegalStateException", "unknown sku X-1"), [], []),
    ("javac_error.txt", [("java/Broken.java", 3), ("java/Broken.java", 4)],
     ("error", "incompatible types: String cannot be converted to int"), [], []),
    # exception names without an Error/Exception suffix, log lines, TAP blocks, node error codes
    ("py_custom_exception.txt", [("py/deploy/quota.py", 13), ("py/deploy/cli.py", 31)],
     ("deploy.quota.QuotaExceeded", "region eu allows 3 instances, asked for 5"), [], []),
    ("py_worker_log.txt", [], ("QuotaExceeded", "region eu allows 3 instances, asked for 7"), [], []),
    ("py_click_abort.txt", [("py/deploy/cli.py", 32)], ("click.exceptions.Abort", ""), [], []),
    ("py_click_usage.txt", [], ("Error", "Invalid value for '--port': 'abc' is not a port number"), [], []),
    ("pytest_click.txt", [("py/deploy/cli.py", 12), ("py/tests/test_deploy.py", 5), ("py/deploy/cli.py", 14)],
     ("click.exceptions.BadParameter", "'http' is not a port number"), ["tests/test_deploy.py::test_up_rejects_bad_port"], []),
    ("node_err_code.txt", [("js/lib/config.js", 12), ("js/deploy.js", 4)],
     ("TypeError", 'The "path" argument must be of type string or an instance of Buffer or URL. Received undefined'),
     [], ["ERR_INVALID_ARG_TYPE"]),
    ("node_custom_error.txt", [("js/lib/config.js", 17), ("js/deploy.js", 5)],
     ("ConfigMissing", 'missing key "region" in deploy.json'), [], []),
    ("node_test_throw.txt", [("js/config.test.js", 5), ("js/lib/config.js", 17)],
     ("ConfigMissing", 'missing key "region" in deploy.json'), ["region is required"], []),
    # hand-written samples of tools that are not installed here (see fixtures/errors/README.md)
    ("written/mypy.txt", [("shop/cart.py", 13), ("shop/main.py", 7)],
     ("error", "Function is missing a type annotation"), [], ["no-untyped-def", "arg-type"]),
    ("written/ruff.txt", [("shop/cart.py", 14), ("shop/main.py", 1)], ("error", "Undefined name `prics`"), [], ["F821"]),
    ("written/tsc.txt", [("src/api/client.ts", 42), ("src/api/client.ts", 57)],
     ("error", "Property 'retryCount' does not exist on type 'ClientOptions'."), [], ["TS2339", "TS2322"]),
    ("written/tsc_pretty.txt", [("src/api/client.ts", 42)],
     ("error", "Property 'retryCount' does not exist on type 'ClientOptions'."), [], ["TS2339"]),
    ("written/eslint.txt", [("web/src/components/Cart.jsx", 12), ("web/src/components/Cart.jsx", 30)],
     ("error", "'total' is assigned a value but never used"), [], ["no-unused-vars"]),
    ("written/go_build.txt", [("internal/store/store.go", 27), ("internal/store/store.go", 41)],
     ("error", "undefined: openDB"), [], []),
    ("written/go_panic.txt", [("ledger/cmd/ledger/main.go", 14), ("ledger/internal/store/store.go", 58)],
     ("panic", "runtime error: index out of range [3] with length 3"), [], []),
    ("written/go_test.txt", [("ledger_test.go", 19)], ("error", "balance([1 2]) = 3, want 4"), ["TestBalance"], []),
    ("written/jest.txt", [("src/utils/format.test.ts", 11)], None, ["formatPrice › rounds to cents"], []),
    ("written/junit_maven.txt", [("com/acme/InventoryTest.java", 21)],
     ("org.opentest4j.AssertionFailedError", "expected: <3> but was: <2>"), ["com.acme.InventoryTest.takesStock"], []),
    ("written/ruby.txt", [("app/models/order.rb", 23), ("app/services/checkout.rb", 11)],
     ("NoMethodError", "undefined method `price' for nil:NilClass"), [], []),
    ("written/php.txt", [("shop/src/Money.php", 31), ("shop/src/Cart.php", 18)],
     ("InvalidArgumentException", "Unknown currency XBT"), [], []),
    ("written/csharp.txt", [("ledger/src/Services/ReportService.cs", 44), ("ledger/src/Program.cs", 9)],
     ("System.InvalidOperationException", "Sequence contains no elements"), [], []),
    ("written/csharp_build.txt", [("src/Services/ReportService.cs", 44)],
     ("error", "The name 'latest' does not exist in the current context"), [], ["CS0103"]),
]


@pytest.mark.parametrize("name,locs,first_error,tests,codes", GOLDEN, ids=[g[0] for g in GOLDEN])
def test_golden(name, locs, first_error, tests, codes):
    sig = sig_of(name)
    got = repo_locs(sig)
    if name == "written/go_panic.txt":  # go prints the innermost frame first, main last
        assert set(locs) <= set(got)
    else:
        assert got[: len(locs)] == locs
    if first_error is None:
        assert not [e for e in sig.errors if e.etype != "error"]
    else:
        assert (sig.errors[0].etype, sig.errors[0].message) == first_error
    for t in tests:
        assert t in sig.failed_tests
    for c in codes:
        assert c in sig.codes


def test_library_frames_sorted_last_and_flagged():
    sig = sig_of("cargo_panic.txt")
    flags = [loc.library for loc in sig.locations]
    assert flags == sorted(flags) and flags[-1] is True
    assert all("/rustc/" in loc.path for loc in sig.locations if loc.library)
    conn = sig_of("irr_conn_refused.txt")
    assert conn.locations and not conn.repo_locations  # all site-packages / <string>


@pytest.mark.parametrize("name", ["irr_cmd_not_found.txt", "irr_curl_dns.txt", "irr_git_pathspec.txt",
                                  "irr_permission.txt", "irr_empty.txt"])
def test_environment_failures_have_no_repo_locations(name):
    assert sig_of(name).repo_locations == []


def test_split_exit():
    assert split_exit("Exit code 3\nto-stdout\nto-stderr") == (3, "to-stdout\nto-stderr")
    assert split_exit("Exit code 1") == (1, "")
    assert split_exit("spawn /bin/sh ENOENT") == (None, "spawn /bin/sh ENOENT")


def test_normalize_path():
    assert normalize_path("shop/cart.py", "/r/py", "/r") == ("py/shop/cart.py", False)
    assert normalize_path("/r/js/lib/a.js", "/r/js", "/r") == ("js/lib/a.js", False)
    assert normalize_path("file:///r/a.mjs", "/r", "/r") == ("a.mjs", False)
    assert normalize_path("/elsewhere/x.py", "/r", "/r") == ("/elsewhere/x.py", True)
    assert normalize_path("/v/lib/python3.11/site-packages/x.py", "/r", "/r")[1] is True
    assert normalize_path("./src/main.rs", "/r/rs", "/r") == ("rs/src/main.rs", False)


@pytest.mark.parametrize("message,expected", [
    ("quantity must be positive, got -1", "quantity must be positive"),
    ("invalid price: abc", "invalid price: abc"),
    ("unknown sku X-1", "unknown sku"),
    ("Cannot read properties of undefined (reading 'name')", "Cannot read properties of undefined"),
    ("ledger out of balance: -5", "ledger out of balance"),
])
def test_message_literals(message, expected):
    assert expected in message_literals(message)


def test_garbage_does_not_crash():
    for text in ["", "Exit code 1\n", "\x00\xff" * 1000, "a:1: " * 50_000, "File \"x\", line 99999999999999"]:
        extract(text, cwd="/r", root="/r")


@pytest.mark.parametrize("text", [
    "Exit code 1\nUsage: deploy [OPTIONS]\nNote: the config is read from ~/.deploy",
    "Exit code 1\nProTip: run with --verbose for details",  # CamelCase, but no exception shape around it
    "Exit code 1\n>       assert total == 3\nE   Expected: 3\nE   Received: 2",  # pytest E lines, not a class
    "Exit code 1\nINFO job 3 finished: Summary: 2 ok",  # log line without a failure word
    "Exit code 2\ntar: Error is not recoverable: exiting now",
])
def test_name_colon_lines_are_not_exceptions_without_an_exception_shape(text):
    assert extract(text, cwd="/r", root="/r").errors == []


@pytest.mark.parametrize("text,expected", [
    # pytest confirms a one-word class on its `path:line: Name` tail line
    ("Exit code 1\nE   Abort: stopped by user\n\nsrc/app.py:12: Abort", ("Abort", "stopped by user")),
    ("Exit code 1\n2024-03-02 ERROR worker: job 7 failed: NoSuchOption: No such option: --nope",
     ("NoSuchOption", "No such option: --nope")),
    ("Exit code 1\nrequest failed: ValueError('quantity must be positive')", ("ValueError", "quantity must be positive")),
    ("Exit code 1\nUncaught BadInput: price is missing\n    at parse (/r/src/p.js:3:9)", ("BadInput", "price is missing")),
])
def test_exception_shapes(text, expected):
    errs = extract(text, cwd="/r", root="/r").errors
    assert (errs[0].etype, errs[0].message) == expected


def test_chained_python_exception_leads_with_the_escaped_one():
    sig = sig_of("pytest_click.txt")
    assert [e.etype for e in sig.errors[:2]] == ["click.exceptions.BadParameter", "ValueError"]


@pytest.mark.parametrize("message,fragment", [
    ("'twelve' is not a valid integer.", "is not a valid"),  # template: "{value!r} is not a valid {type}."
    ("Unknown command frobnicate", "Unknown command"),  # unquoted value at a piece's end
    ("missing key \"region\" in deploy.json", "missing key"),
])
def test_template_fragments(message, fragment):
    frags = template_fragments(message)
    assert fragment in frags and frags == sorted(frags, key=len, reverse=True)


def test_template_fragments_skip_short_pieces():
    assert template_fragments("bad input") == []
    assert template_fragments("") == []


def test_shared_run():
    source = 'def convert(v):\n    raise QuotaExceeded(\n        f"region {region} allows {limit} "\n        f"instances, asked for {count}")'
    run, line = shared_run("region eu allows 3 instances, asked for 5", source)
    assert (run, line) == (len("instances asked for"), 3)
    assert shared_run("REGION EU", "the region eu") == (len("region eu"), 0)  # case-insensitive
    assert shared_run("nothing shared", "x = 1") == (0, -1)
    assert shared_run("", "x") == (0, -1)


def _shared_run_by_brute_force(message: str, text: str) -> tuple[int, int]:
    """shared_run's definition, spelled out: of every pair of starting words, the longest run of equal
    words (characters, one space between words), the earliest start on ties; the line where it starts."""
    import re

    msg = [w.lower() for w in re.findall(r"[A-Za-z]+|\d+", message)][:60]
    toks = [(w.lower(), n) for n, line in enumerate(text.split("\n")) for w in re.findall(r"[A-Za-z]+|\d+", line)]
    best, line = 0, -1
    for i in range(len(toks)):
        for j in range(len(msg)):
            n, k = 0, 0
            while i + k < len(toks) and j + k < len(msg) and toks[i + k][0] == msg[j + k]:
                n += len(msg[j + k]) + (1 if k else 0)
                k += 1
            if n > best:
                best, line = n, toks[i][1]
    return best, line


def test_shared_run_is_its_definition_on_random_text():
    import random

    rng = random.Random(7)
    vocab = "a b foo bar baz 2 the is not Foo BAR".split()
    for _ in range(3000):
        message = " ".join(rng.choice(vocab) for _ in range(rng.randint(0, 9)))
        text = "\n".join(" ".join(rng.choice(vocab) for _ in range(rng.randint(0, 7))) for _ in range(rng.randint(0, 5)))
        assert shared_run(message, text) == _shared_run_by_brute_force(message, text), (message, text)


def test_a_mocha_title_under_deeply_indented_suites():
    """Nested suites indent every line; the title is the first line ending in a colon (the pattern once
    tried every split of those indents between its repeats: ~90 ms on a 1.6 KB output)."""
    out = ("  1 failing\n\n  1) options\n" + "".join(f"{'  ' * (k + 4)}suite {k}\n" for k in range(6))
           + "              should split the basename on backslashes when enabled:\n\n"
           + "      AssertionError [ERR_ASSERTION]: The expression evaluated to a falsy value:\n")
    assert "should split the basename on backslashes when enabled" in extract(out).failed_tests


def test_a_python_warning_line_is_not_a_location_of_the_failure():
    """`conftest.py:51: UserWarning: ...` is the warnings module printing at start-up (networkx's conftest
    does): the failure's walk must not start there, and the category is no error of the run."""
    out = (f"Exit code 1\n{ROOT}/py/conftest.py:51: UserWarning: \n\n   WARNING: Mixed configuration!\n"
           "  warnings.warn(\n______ test_cycle ______\n\n    def test_cycle():\n>       assert is_aperiodic(G)\n\n"
           "tests/test_dag.py:7: \n\n    def is_aperiodic(G):\n>       raise NetworkXError('not defined')\n"
           "E       NetworkXError: not defined\n\npkg/dag.py:12: NetworkXError\n")
    sig = extract(out, cwd=f"{ROOT}/py", root=ROOT)
    assert [(loc.path, loc.line) for loc in sig.locations] == [("py/tests/test_dag.py", 7), ("py/pkg/dag.py", 12)]
    assert [e.etype for e in sig.errors] == ["NetworkXError"]
