# One command runs what CI runs: `make check` (lint, typecheck, every test). PYTEST_ARGS narrows the
# tests (`make check PYTEST_ARGS=tests/x.py`).
PY ?= .venv/bin/python
PYTEST_ARGS ?=

.PHONY: check lint typecheck test test-fast e2e bench bench-full bench-realfail clean

check: lint typecheck test

lint:
	$(PY) -m ruff check lib tests bench

typecheck:
	$(PY) -m mypy

test:
	PATH="$(CURDIR)/.venv/bin:$$PATH" PY=$(PY) bash scripts/test.sh -q $(PYTEST_ARGS)

# The default loop: everything but the real-process races, the real model and the real claude CLI.
test-fast:
	PATH="$(CURDIR)/.venv/bin:$$PATH" PY=$(PY) bash scripts/test.sh -q -m "not slow and not e2e and not s3" $(PYTEST_ARGS)

e2e:
	bash .ci/install-claude.sh >/dev/null
	PATH="$(CURDIR)/.venv/bin:$$PATH" $(PY) -m pytest -q -m e2e

bench:
	$(PY) bench/run.py --quick

bench-full:
	$(PY) bench/run.py

clean:
	rm -rf .hippo .pytest_cache build *.egg-info

# Real failures (bench/realfail): needs the corpora's mirrors (REALFAIL_MIRRORS) and PyPI/npm once for
# the test tools; not part of `make check`. ARGS=--fast skips the embedding model.
bench-realfail:
	nice $(PY) -m bench.realfail.run $(ARGS)
