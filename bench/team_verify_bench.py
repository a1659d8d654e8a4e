"""Team base sync: what checking a downloaded base costs (issue 19).

    nice python bench/team_verify_bench.py [NAME=]REPO [...] [--json out.json]

Each REPO is a real git repository (a work tree or a bare mirror), shown as NAME. It is cloned twice into a temp dir: a
"CI" clone indexes HEAD and publishes it to a directory location, a "developer" clone then syncs that
base (download of the listed files with size and sha256 checks, row verification against the local
files, swap) and runs `hippo index` on top. Then CI commits an edit to CHANGED files and publishes again,
and the developer pulls and syncs that second base, whose unchanged files the trusted local index vouches
for (only the changed ones are chunked). The fake embedder is used throughout: verification never
embeds, and a real model would only make the CI build slower. Prints one table row per repository.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1] / "lib"), str(Path(__file__).resolve().parents[1])]

from bench.fake_model import use_fake  # noqa: E402
from hippo.core.config import load_settings  # noqa: E402
from hippo.index.indexer import index_repo  # noqa: E402
from hippo.index.state import load_state  # noqa: E402
from hippo.sharing import team  # noqa: E402

CHANGED = 10  # files CI edits between the two published commits
GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.com"}


def clone(src: str, dest: Path) -> Path:
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", src, str(dest)], check=True,
                   env={**os.environ, **GIT_ENV})
    return dest


def measure(arg: str, work: Path) -> dict:
    name, _, src = arg.rpartition("=")
    share = work / "share"
    os.environ.update(HIPPO_MODEL=use_fake(), HIPPO_SHARED_INDEX=str(share))
    from fake_embedder import FakeEmbedder  # tests/fake_embedder.py, importable once use_fake() ran

    ci = clone(src, work / "ci")
    t = time.monotonic()
    pub = team.publish(ci, load_settings(ci), embedder=FakeEmbedder())
    publish_s = time.monotonic() - t
    dev = clone(src, work / "dev")
    res = team.sync_base(dev, load_settings(dev))
    assert res.action == "seeded", res
    emb = FakeEmbedder()
    t = time.monotonic()
    rep = index_repo(dev, load_settings(dev), embedder=emb)
    index_s = time.monotonic() - t
    files = len(load_state(dev / ".hippo").files)
    edited = [p for p in sorted(load_state(ci / ".hippo").files) if p.endswith(".py")][:CHANGED]
    for rel in edited:
        with open(ci / rel, "a", encoding="utf-8") as fh:
            fh.write("\n# edited by the benchmark\n")
    subprocess.run(["git", "-C", str(ci), "commit", "-qam", "bench edit"], check=True, env={**os.environ, **GIT_ENV})
    team.publish(ci, load_settings(ci), embedder=FakeEmbedder())
    subprocess.run(["git", "-C", str(dev), "pull", "-q", "--no-rebase", str(ci), "HEAD"], check=True,
                   env={**os.environ, **GIT_ENV})
    again = team.sync_base(dev, load_settings(dev), force_check=True)
    assert again.action == "seeded", again
    return {"sync2_s": again.seconds, "verify2_s": again.verify_seconds,
            "by_local2": again.verification.matched_by_local, "chunked2": again.verification.matched
            - again.verification.matched_by_local + len(again.verification.dropped),
            "repo": name or Path(src.rstrip("/")).name, "files": files, "chunks": pub.chunks, "mb": pub.bytes / 2**20,
            "publish_s": publish_s, "sync_s": res.seconds, "verify_s": res.verify_seconds,
            "refused": len(res.reindexed), "index_after_s": index_s, "embedded_after": len(emb.texts),
            "files_changed_after": rep.files_changed}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("repos", nargs="+")
    ap.add_argument("--json")
    args = ap.parse_args()
    rows = []
    for src in args.repos:
        with tempfile.TemporaryDirectory(prefix="hippo-team-bench-") as tmp:
            rows.append(measure(src, Path(tmp)))
    print("| repo | files | chunks | snapshot MB | publish s | first sync s | of which verify s | rows refused "
          "| index after s | texts embedded | next base: sync s | verify s | files chunked |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['repo']} | {r['files']:,} | {r['chunks']:,} | {r['mb']:.1f} | {r['publish_s']:.1f} "
              f"| {r['sync_s']:.2f} | {r['verify_s']:.2f} | {r['refused']} | {r['index_after_s']:.2f} "
              f"| {r['embedded_after']} | {r['sync2_s']:.2f} | {r['verify2_s']:.2f} | {r['chunked2']} |")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
