"""Environment failures the hook must stay silent on: the real output of each command, run in a work
tree of a corpus (so the hook sees a real, indexed repository) with the corpus's tools on PATH.
Network failures are provoked against a closed loopback port, never an outside address.

    python -m bench.realfail.envcases
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from bench.realfail.corpora import by_repo
from bench.realfail.mutate import BASES
from bench.realfail.workspace import claude_error, normalise, run_command, tree

CASES = Path(__file__).parent / "cases"
CLOSED = "http://127.0.0.1:9"  # the discard port; nothing listens there

COMMANDS = {
    "python-humanize/humanize": [
        ("no-tests-selected", "PYTHONPATH=src python -m pytest -p no:cacheprovider tests/test_number.py -k no_such_test_name"),
        ("no-tests-path", "PYTHONPATH=src python -m pytest -p no:cacheprovider tests/test_nonexistent.py"),
        ("missing-entry-python", "python missing.py"),
        ("missing-module", "python -c 'import requests; print(requests.__version__)'"),
        ("missing-tool", "pnpmx install"),
        ("missing-tool-python", "poetry run pytest"),
        ("network-pip", f"pip install --index-url {CLOSED}/simple --retries 0 --timeout 3 humanize-extra-tools"),
        ("network-curl", f"curl -sS --max-time 5 {CLOSED}/api/health"),
        ("network-git", f"git ls-remote {CLOSED}/humanize.git"),
        ("permission-script", "printf 'echo hi\\n' > /tmp/realfail-noexec.sh && chmod 644 /tmp/realfail-noexec.sh && /tmp/realfail-noexec.sh"),
        ("permission-sys", "touch /sys/kernel/realfail-probe"),
        ("git-no-upstream", "git push"),
    ],
    "tj/commander.js": [
        ("no-tests-found-jest", "npx jest tests/no-such-area"),
        ("missing-entry-node", "node missing.js"),
        ("missing-npm-script", "npm run no-such-script"),
        ("missing-tool-node", "pnpm test"),
        ("network-npm", f"npm install --registry {CLOSED}/ --fetch-retries 0 --fetch-timeout 3000 left-pad"),
        ("missing-package-node", "node -e \"require('lodash-nonexistent-pkg')\""),
        ("timeout-kill", "timeout 1 sleep 5"),
    ],
}


def main() -> int:
    out = []
    for repo, commands in COMMANDS.items():
        c = by_repo(repo)
        base = BASES[repo]
        work = tree(repo, base, name=repo.replace("/", "+") + "-env")
        c.prepare(work)
        for name, command in commands:
            code, output = run_command(work, command, c.env_bin(), timeout=60)
            if code == 0:
                print(f"  ? {name}: exit 0, not a failure; skipped", flush=True)
                continue
            out.append({"id": f"env-{repo.split('/')[1]}-{name}", "kind": "env", "repo": repo, "language": c.language,
                        "commit": base, "command": command, "exit_code": code,
                        "error": normalise(claude_error(code, output), work, c.env_home()), "gold": None})
            print(f"  + {name}: exit {code}: {output.strip().splitlines()[-1][:100] if output.strip() else '(no output)'}", flush=True)
    (CASES / "env.jsonl").write_text("".join(json.dumps(x) + "\n" for x in out))
    print(f"[envcases] {len(out)} cases")
    return 0


if __name__ == "__main__":
    sys.exit(main())
