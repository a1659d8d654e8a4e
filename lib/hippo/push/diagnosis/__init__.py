"""Diagnosis of a failed command: what in the repository the failure is about, or nothing.

Core logic shared by the failure hook (hooks/failure.py, a thin adapter) and the warm server. Modules:
signals (parse the output), runners (test-runner formats), gate (is there anything to look up?),
changes (what the user just changed), evidence (candidate spans and why each is evidence), policy
(which few to show), pipeline (`diagnose`). This package's import is stdlib-only; the pipeline takes an
open Searcher, so the search stack is loaded by its callers, after the gate said yes.
"""
