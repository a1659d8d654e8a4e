"""Soak (CI-sized): hundreds of mixed hook invocations, searches and socket garbage against a live
warm query server while the repo changes and `hippo index` runs; the server's memory and open
files stay flat and nothing errors. The long variant (thousands) is `python bench/soak.py --soak`.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "trust"))
import soaklib  # noqa: E402
import trustkit  # noqa: E402

REQUESTS = int(os.environ.get("HIPPO_TRUST_SOAK_REQUESTS", "400"))

pytestmark = pytest.mark.slow  # long-running processes; `make test-fast` skips them


def test_soak_server_stays_flat_under_mixed_load(tmp_path, monkeypatch):
    monkeypatch.setenv("HIPPO_HOME", str(tmp_path / "home"))
    for k, v in trustkit.QUIET_ENV.items():
        monkeypatch.setenv(k, v)
    root = trustkit.make_repo(tmp_path / "repo", files=60)
    assert trustkit.hippo(["index", "--quiet"], root).returncode == 0
    fig = soaklib.soak(root, requests=REQUESTS, hook_procs=10, update_every=100, seed=3)
    report = os.environ.get("HIPPO_TRUST_REPORT")
    if report:
        data = json.loads(Path(report).read_text()) if Path(report).exists() else {}
        data["soak_ci"] = fig
        Path(report).write_text(json.dumps(data, indent=2))
    assert fig["errors"] == []
    assert fig["requests"] == REQUESTS and fig["index_updates"] == (REQUESTS - 1) // 100
    assert fig["hook_replies_with_hits"] > REQUESTS // 10  # the load really reached the index
    assert fig["fds_end"] - fig["fds_start"] <= 2, fig
    assert fig["rss_kb_end"] - fig["rss_kb_start"] <= 40_000, fig  # warm-up done before the first figure
