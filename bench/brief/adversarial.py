"""How long the real SessionStart hook takes on hostile repository files (issue 19), as a table.

Usage: python bench/brief/adversarial.py [--lib PATH] [--sizes 4,30,100,200] [--only NAME,...] [--timeout S]

For each attack in bench/brief/attacks.py and each size (KB), a fresh git repo holds that one file (plus a
README line), and `python -m hippo hook session-start` runs on it the way Claude Code runs it (no index, no
background indexer, no server). Printed per cell: the hook's wall time in seconds, `>T` when it was still
running at the timeout (then killed), `!` when it did not reply with valid JSON, `-` when the brief section
is missing from a reply. `--lib` runs another checkout's hippo (e.g. main's `lib/`) for before/after figures.
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

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from attacks import ATTACKS, RED_TEAM  # noqa: E402

GIT_ENV = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.com", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@example.com", "GIT_CONFIG_NOSYSTEM": "1"}


def make_repo(base: Path, path: str, text: str) -> Path:
    root = Path(tempfile.mkdtemp(dir=base))
    target = root / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    if path != "README.md":
        (root / "README.md").write_text("# demo\n", encoding="utf-8")
    (root / "app").mkdir(exist_ok=True)  # something the brief always shows: a missing brief is then visible
    (root / "app" / "__init__.py").write_text('"""The demo app."""\n', encoding="utf-8")
    env = {**os.environ, **GIT_ENV}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "hostile file"]):
        subprocess.run(["git", "-C", str(root), *args], check=True, env=env, capture_output=True)
    return root


def run_hook(root: Path, lib: Path, home: Path, timeout: float) -> str:
    env = {**os.environ, "PYTHONPATH": str(lib), "HIPPO_HOME": str(home), "HIPPO_NO_BACKGROUND_INDEX": "1",
           "HIPPO_NO_SERVER": "1"}
    payload = {"session_id": "adv", "transcript_path": str(home / "t.jsonl"), "cwd": str(root),
               "hook_event_name": "SessionStart", "source": "startup"}
    t = time.perf_counter()
    try:
        proc = subprocess.run([sys.executable, "-m", "hippo", "hook", "session-start"], env=env, cwd=str(root),
                              input=json.dumps(payload).encode(), capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return f">{timeout:g}"
    took = time.perf_counter() - t
    try:
        ctx = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    except (ValueError, KeyError, TypeError):
        return f"{took:.2f}!"
    return f"{took:.2f}" + ("" if "<project_brief>" in ctx else "-")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lib", default=str(HERE.parent.parent / "lib"))
    ap.add_argument("--sizes", default="4,30,100,200", help="file sizes in KB")
    ap.add_argument("--only", default="", help="comma-separated attack names; 'red' for the red team's four")
    ap.add_argument("--timeout", type=float, default=30.0)
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    wanted = set(RED_TEAM) if args.only == "red" else {n for n in args.only.split(",") if n}
    attacks = [a for a in ATTACKS if not wanted or a.name in wanted]
    lib = Path(args.lib).resolve()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        home = base / "home"
        home.mkdir()
        print(f"lib: {lib}")
        print(f"{'attack':32}" + "".join(f"{f'{s} KB':>10}" for s in sizes))
        for attack in attacks:
            cells = []
            for size in sizes:
                root = make_repo(base, attack.path, attack.text(size * 1024))
                cells.append(run_hook(root, lib, home, args.timeout))
            print(f"{attack.name:32}" + "".join(f"{c:>10}" for c in cells), flush=True)


if __name__ == "__main__":
    main()
