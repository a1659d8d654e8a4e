"""Error tasks from really running failing code against the click corpus.

Each snippet misuses click's public API; it runs in a subprocess with the corpus on sys.path, and
the deepest traceback frame inside the corpus (skipping `fail()` helpers, whose caller formed
the message) is the gold raise site. The query shows only what a
caller's test run would print about it (message, caller frames), in the same shapes as the
synthesized tasks, so both kinds are comparable.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from bench.quality.tasks import Task, render_failure

CLICK_SNIPPETS = [
    "click.Choice(['fast', 'slow']).convert('medium', None, None)",
    "click.IntRange(0, 5).convert(9, None, None)",
    "click.FloatRange(0, 1, min_open=True, clamp=True)",
    "click.Path(exists=True).convert('/nonexistent/config.yaml', None, None)",
    "click.DateTime().convert('yesterday-ish', None, None)",
    "click.UUID.convert('not-a-uuid', None, None)",
    "click.INT.convert('twelve', None, None)",
    "click.BOOL.convert('perhaps', None, None)",
    "click.Tuple([int, int]).convert((1,), None, None)",
    "click.get_current_context()",
    "click.Command('deploy').main(['--nope'], standalone_mode=False)",
    "click.Command('deploy', params=[click.Argument(['name'])]).main([], standalone_mode=False)",
    "click.Option(['--level'], count=True, is_flag=True)",
    "click.Option(['--name'], prompt=True, multiple=True, is_flag=False)",
    "click.Argument(['files'], nargs=-1, default=['a'])",
    "click.Option(['--x'], is_flag=True, multiple=True)",
    "click.Group('top').add_command(click.Command(None))",
    "click.Context(click.Command('deploy')).fail('bad input')",
    "click.Option(['--color'], type=click.Choice(['red']), default='blue').get_default(click.Context(click.Command('c')))",
    "click.Command('c', params=[click.Option(['--n'], type=int, required=True)]).main([], standalone_mode=False)",
]

_RUNNER = r"""
import json, sys, traceback, click
root = sys.argv[1]
try:
    exec(sys.argv[2])
except Exception as exc:
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename.startswith(root)]
    # `fail()`-style helpers only re-raise; the site that formed the message is their caller.
    while len(frames) > 1 and frames[-1].name in ("fail",):
        frames.pop()
    if frames:
        f = frames[-1]
        print(json.dumps({"etype": type(exc).__name__, "msg": str(exc).split("\n")[0],
                          "path": f.filename[len(root) + 1:], "line": f.lineno}))
"""


def click_real_errors(root: Path) -> list[Task]:
    """Run every snippet; keep those that raise inside the corpus."""
    tasks, seen = [], set()
    env = {**os.environ, "PYTHONPATH": str(root / "src")}
    for i, snippet in enumerate(CLICK_SNIPPETS):
        proc = subprocess.run([sys.executable, "-c", _RUNNER, str(root.resolve()), snippet], env=env,
                              capture_output=True, text=True, timeout=60)
        if not proc.stdout.strip():
            continue
        info = json.loads(proc.stdout.strip().splitlines()[-1])
        if len(info["msg"]) < 8 or (info["path"], info["line"]) in seen:
            continue
        seen.add((info["path"], info["line"]))
        cmd, out = render_failure(info["etype"], info["msg"], "python", f"real:{i}")
        tasks.append(Task("error", out, info["path"], info["line"], info["line"], source="real-run", command=cmd))
    return tasks
