#!/usr/bin/env bash
# Runs pytest for `make test` / `make test-fast`. When the pytest process itself dies by a signal (a crash in a
# native library: onnxruntime, LanceDB, a tree-sitter grammar), pytest reports nothing and the log's tail is a
# faulthandler dump; this names the test that was running, then runs the suite once more. A crash that
# comes back fails the run; one that does not is still printed, to be chased from the name.
set -uo pipefail
PY=${PY:-.venv/bin/python}
# Bytecode caches on: a machine that turns them off has every test's `python -m hippo` child recompile hippo and
# pytest rewrite every test module's asserts again (7 of the 63 CPU-s of `make test-fast`).
unset PYTHONDONTWRITEBYTECODE
trace=$(mktemp)
trap 'rm -f "$trace"' EXIT

run() { HIPPO_TEST_TRACE="$trace" "$PY" -m pytest "$@"; }

run "$@"
rc=$?
if [ "$rc" -gt 128 ]; then
  echo "pytest was killed by signal $((rc - 128)) while running: $(cat "$trace" 2>/dev/null || echo '(unknown)')" >&2
  echo "running the suite once more to tell a flaky native crash from a reproducible one" >&2
  run "$@"
  rc=$?
  [ "$rc" -gt 128 ] && echo "pytest was killed again (signal $((rc - 128))) while running: $(cat "$trace")" >&2
fi
exit "$rc"
