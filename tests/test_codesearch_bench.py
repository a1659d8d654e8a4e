"""The codesearch bench's gold resolver and question set (bench/codesearch)."""
from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.codesearch.how_tasks import HOW  # noqa: E402
from bench.codesearch.run import def_line  # noqa: E402

AXIOS = """class Axios {
  constructor(instanceConfig) {
    this.interceptors = {
      request: new InterceptorManager(),
    };
  }

  async request(configOrUrl, config) {
    return await this._request(configOrUrl, config);
  }
}

function httpAdapter(config) {
    req = transport.request(options, function handleResponse(res) {
      done(res);
    });
}
"""


def test_def_line_prefers_method_headers_and_named_function_expressions():
    assert def_line(AXIOS, "request") == 8  # the method, not the `request:` property above it
    assert def_line(AXIOS, "handleResponse") == 14  # a named function expression passed as an argument
    assert def_line(AXIOS, "Axios") == 1
    multi = "class R {\n\tprivate strip(\n\t\ta: A,\n\t\tb: B,\n\t) {\n\t}\n}\n"
    assert def_line(multi, "strip") == 2  # a header over several lines resolves to its first line


def test_how_questions_cover_six_corpora_with_written_golds():
    assert sum(len(v) for v in HOW.values()) >= 72
    assert set(HOW) == {"httpx", "rich", "axios", "got", "cobra", "fd"}
    for corpus, qs in HOW.items():
        assert len({q for q, _ in qs}) == len(qs), corpus
        assert all(golds and all(p and n for p, n in golds) for _, golds in qs), corpus
