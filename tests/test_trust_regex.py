"""Every pattern hippo runs on untrusted text finishes in time linear in its input (issue 12, item 3).

A failed command's output is whatever the repository's code prints. `at` followed by 1,500 spaces made the
JS stack-frame pattern backtrack cubically (21.6 s for one such line, 130 s for six on main); the hook then
hit its timeout and the warm server stopped answering. Two kinds of checks:

* the known-bad inputs run in a subprocess with a timeout a few times larger than they need (milliseconds
  now, tens of seconds before), through `signals.extract` and through the real failure hook;
* hypothesis builds pathological texts (long runs of spaces, repeated `at `, nested parens, long paths
  with `:`, unclosed quotes, many traceback heads ...) and feeds them to every entry point that reads
  untrusted text and to every module-level pattern of those modules (found by reflection, so a new
  pattern is covered without touching this file). The deadline is a generous bound (seconds for inputs
  that take milliseconds), not a benchmark: a super-linear pattern blows through it by orders of magnitude.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from hippo.core import secrets, textutil
from hippo.push.diagnosis import gate, signals
from hippo.retrieval import pasted
from regex_shape import hard_stop

SLOW_BEFORE = "Exit code 1\n" + ("at" + " " * 1500 + "\n") * 6  # 130 s on main, a few ms now
ONE_LINE = "Exit code 1\nat" + " " * 1500  # 21.6 s on main

ATOMS = [" ", "\t", "at ", "at", "    at ", "(", ")", "((", "))", ":", ":1", ":12:5", "a", "A", "Ab", ".", "a.",
         "/", "/a", "x.py", "x.js", "\n", "\n\n", "'", '"', "`", "Error", "Error: ", "E   ", 'File "', " in ",
         "in `", "-", "=", "===", "_", "___ test", "#0 ", "--> ", "  ● ", "panicked at ", "undefined reference to `",
         "Traceback (most recent call last):\n", "  Traceback (most recent call last):\n", "not ok 1 - t\n",
         "[", "]", "[ERROR] a.b ", "<", ">", "$", "+0x1", "\\", "file://", ":line ", "Exception", "token=",
         "password: ", "aws_secret_access_key=", "https://u:", "@", "-----BEGIN RSA PRIVATE KEY-----", "sk-",
         "ghp_", "eyJ", "Bearer ", "src/a.eslint.js\n", "  1:1  error  x  ", "E123 ", "\r", "\x1b[", "9",
         # issue 19's rules: netrc, curl/httpie, headers, cookies, XML, auth pairs, DSNs, vendor prefixes
         "machine ", "login a ", "password ", "curl -u ", "http -a ", "X-Api-Key: ", "Cookie: a=", "<password>",
         "</password>", 'key="a" value="', 'auth=("a", ', "@tcp(", ":5432:", "hvs.", ":AA", "LS0tLS1CRUdJTi",
         "live_", "0a1b2c3d", "a1B2c3D4", ".atlasv1.", "-us1", "://", "AAAA"]

# Runs of atoms: long enough to trigger backtracking, short enough that a linear pattern takes milliseconds.
pathological = st.lists(st.tuples(st.sampled_from(ATOMS), st.integers(1, 700)), min_size=1, max_size=10).map(
    lambda parts: "".join(atom * n for atom, n in parts)[:12_000])

FUZZ = settings(max_examples=100, deadline=10_000, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _patterns() -> list[tuple[str, re.Pattern[str]]]:
    """Every compiled pattern at module level (alone, or in a list/tuple) of the modules that read untrusted text."""
    found = []
    for mod in (signals, gate, pasted, secrets, textutil):
        for name, value in vars(mod).items():
            items = value if isinstance(value, (list, tuple)) else [value]
            for i, item in enumerate(items):
                for part in (item if isinstance(item, tuple) else (item,)):
                    if isinstance(part, re.Pattern):
                        found.append((f"{mod.__name__}.{name}[{i}]", part))
    return found


PATTERNS = _patterns()


def test_reflection_sees_the_patterns_that_matter():
    names = " ".join(n for n, _ in PATTERNS)
    assert len(PATTERNS) > 60
    for must in ("signals._LOC_PATTERNS", "signals._ERROR_PATTERNS", "signals._TEST_PATTERNS", "signals._LOG_FORM",
                 "gate._ENVIRONMENT_PATTERNS", "pasted.JS_FRAME", "secrets._ASSIGN_U", "textutil._PARTS"):
        assert must in names, must


def _run_python(code: str, timeout: float, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **env}, cwd="/")


@pytest.mark.parametrize("text", [SLOW_BEFORE, ONE_LINE], ids=["six-lines", "one-line"])
def test_known_bad_output_is_parsed_at_once(text):
    code = ("import json, sys\nfrom hippo.push.diagnosis.signals import extract\n"
            "sig = extract(json.loads(sys.argv[1]) if len(sys.argv) > 1 else json.load(sys.stdin))\n"
            "print(sig.exit_code)")
    proc = subprocess.run([sys.executable, "-c", code], input=json.dumps(text), capture_output=True, text=True,
                          timeout=8, cwd="/")
    assert proc.returncode == 0 and proc.stdout.strip() == "1", proc.stderr


@pytest.mark.slow  # ten processes redacting 0.3-3 MB each (~3.5 CPU-s): `make check` runs them
@pytest.mark.parametrize("atom, times", [("sk-", 100_000), ("eyJ", 100_000),
                                         ("-----BEGIN RSA PRIVATE KEY-----\n", 20_000),
                                         ("machine a login b password c\n", 30_000), ("curl -u ", 100_000),
                                         ("X-Api-Key: ", 60_000), ("cookie: a=bbbbbbbbbbbbb;", 30_000),
                                         ('key="a" value="', 50_000), ("token: str = ", 60_000),
                                         ("://" + "a" * 40 + "@", 20_000)],
                         ids=["openai-prefix", "jwt-prefix", "pem-begin-lines", "netrc", "curl-user", "api-key-header",
                              "cookie-pairs", "xml-key-value", "annotated-assignment", "url-user"])
def test_redacting_a_hostile_file_is_linear(atom, times):
    """The indexer redacts whole files (up to 1 MB): these took minutes to an hour on main, ~1 s now."""
    code = f"from hippo.core.secrets import redact\nredact({atom!r} * {times})\nprint('ok')"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=20, cwd="/")
    assert proc.stdout.strip() == "ok", proc.stderr


def test_failure_hook_answers_the_known_bad_output(git_repo):
    root = git_repo({"app.js": "module.exports = () => 1;\n"})
    payload = {"hook_event_name": "PostToolUseFailure", "tool_name": "Bash", "session_id": "re1",
               "tool_input": {"command": "node app.js"}, "error": SLOW_BEFORE + "Error: boom\n", "cwd": str(root)}
    env = {**os.environ, "HIPPO_NO_SERVER": "1", "HIPPO_NO_BACKGROUND_INDEX": "1"}
    proc = subprocess.run([sys.executable, "-m", "hippo", "hook", "tool-failure"], input=json.dumps(payload).encode(),
                          capture_output=True, timeout=15, env=env, cwd="/")
    assert proc.returncode == 0 and proc.stdout == b""  # no index yet: nothing to say, and said at once


@pytest.mark.slow  # a fuzz run (~1 CPU-s): `make check` runs it; the known-bad outputs above stay fast
@FUZZ
@given(pathological)
@example(ONE_LINE)
@example("at" + " " * 6000)
@example("Traceback (most recent call last):\n" + "  Traceback (most recent call last):\n" * 3000)
@example('File "' + "x\n" * 5000)
@example("src/a.eslint.js\n" * 3000)
@example("at " * 4000)
@example("(" * 5000 + "x.js:1:2")
@example("/a" * 3000 + ".py:")
@example("sk-" * 4000)
@example("eyJ" * 4000)
@example("-----BEGIN RSA PRIVATE KEY-----\n" * 300)
def test_entry_points_stay_linear(text):
    with hard_stop():
        sig = signals.extract(text, cwd="/srv/dev/app/src", root="/srv/dev/app")
        gate.pre_gate(sig, command=text)
        for err in sig.errors[:5]:
            signals.template_fragments(err.message)
        gate.hit_reason(text[:4000], 0.9, sig)
        pasted.looks_pasted(text)
        pasted.phrases(text)
        secrets.redact(text)
        textutil.identifier_text(text[:4000])


@pytest.mark.slow  # real processes or a big index: `make check` runs it, `make test-fast` skips it
@FUZZ
@given(pathological)
@example("at" + " " * 1500)
@example(("at" + " " * 1500 + "\n") * 6)
def test_every_pattern_is_linear_on_clipped_text(text):
    """What the modules feed their patterns: lines cut to MAX_LINE_CHARS (512) first."""
    clipped = "\n".join(line[:512] for line in text.split("\n"))
    with hard_stop():
        for _name, pattern in PATTERNS:
            for _ in pattern.finditer(clipped):
                pass
            for line in clipped.split("\n")[:50]:
                pattern.match(line)
                pattern.fullmatch(line)


def test_clip_lines_cuts_only_long_lines():
    assert signals.MAX_LINE_CHARS == pasted.MAX_LINE_CHARS == 512  # the bound the fuzzing above assumes
    text = "short\n" + "x" * 2000 + "\nend"
    out = signals.clip_lines(text)
    assert out.split("\n") == ["short", "x" * signals.MAX_LINE_CHARS, "end"]
    assert signals.clip_lines("a\nb") == "a\nb"


def test_rewritten_js_pattern_still_reads_real_frames():
    text = ("TypeError: x is not a function\n"
            "    at Object.<anonymous> (/srv/dev/app/src/a.js:3:9)\n"
            "    at new Widget (/srv/dev/app/src/widget.js:10:5)\n"
            "    at async Promise.all [as all] (/srv/dev/app/src/b.js:7:1)\n"
            "    at /srv/dev/app/src/c.js:1:2\n")
    sig = signals.extract(text, root="/srv/dev/app")
    got = [(loc.path, loc.line, loc.func) for loc in sig.locations]
    assert ("src/a.js", 3, "Object.<anonymous>") in got
    assert ("src/widget.js", 10, "new Widget") in got
    assert ("src/b.js", 7, "async Promise.all [as all]") in got
    assert ("src/c.js", 1, "") in got
