# One command runs what CI runs: `make check`.
PY ?= .venv/bin/python

.PHONY: check test test-fast e2e bench bench-full clean

check: test

test:
	PATH="$(CURDIR)/.venv/bin:$$PATH" $(PY) -m pytest -q

test-fast:
	$(PY) -m pytest -q -m "not slow and not e2e"

e2e:
	bash .ci/install-claude.sh >/dev/null
	PATH="$(CURDIR)/.venv/bin:$$PATH" $(PY) -m pytest -q -m e2e

bench:
	$(PY) bench/run.py --quick

bench-full:
	$(PY) bench/run.py

clean:
	rm -rf .hippo .pytest_cache build *.egg-info
