"""Tasks from git history: a commit's message is the question, the implementation files it changed the answer.

Choice of commits (first-parent, newest first from the pinned head, no merges):
- 1 to 5 implementation files changed, every one of them already present in the parent's tree (a new file
  cannot be found before it exists); tests, docs, examples, benchmarks, CI, built bundles and changelogs do not
  count as implementation and do not disqualify a commit;
- a message that says what changed: at least 4 words in the subject, not a release, version bump, revert,
  merge, dependency update, or a pure formatting / typo / docstring / comment change.

The query is what a user would type: the subject and body, minus what only a forge adds (pull-request and
issue numbers such as "(#3412)", "Fixes #12", "Co-authored-by:"/"Signed-off-by:" trailers, URLs, and the
"* Update <file>" / "Apply suggestions from code review" lines and "-----" separators GitHub writes into
squash-merge bodies). Everything
else, including backticked identifiers, stays: users do paste names.
"""
from __future__ import annotations

import re
import subprocess
from dataclasses import asdict, dataclass
from pathlib import Path

TEST = re.compile(r"(^|/)(tests?|__tests__|spec|specs|fixtures?|testdata)/"
                  r"|(^|/)(test_[^/]*|[^/]*_test\.[a-z]+|[^/]*\.(test|spec)\.[a-z]+|conftest\.py)$", re.I)
NOT_IMPLEMENTATION = re.compile(r"(^|/)(docs?|documentation|examples?|benchmarks?|\.github|dist|sandbox|media|"
                                r"imgs?|scripts?)/|(^|/)(CHANGE|HISTORY|NEWS|README|CONTRIBUT)[^/]*$", re.I)
CODE = re.compile(r"\.(py|pyi|js|mjs|cjs|ts|tsx|jsx|mts|cts|go|rs)$")
NOISE_SUBJECT = re.compile(
    r"\b(version|release[ds]?|bump\w*|revert\w*|merge\w*|dependenc\w+|deps|typos?|format\w*|lint\w*|ruff|black|"
    r"prettier|docstrings?|comments?|whitespace|ws|tweaks?|sponsor\w*|changelog|readme|ci)\b", re.I)
FORGE_NOISE = (
    re.compile(r"^\s*(co-authored-by|signed-off-by|reviewed-by|cc):.*$", re.I | re.M),
    # squash-merge bodies: GitHub's own "Update <file>" / "Apply suggestions" entries and the separator line
    re.compile(r"^\s*\*\s*(update \S+|apply suggestions? from code review|merge branch .*)\s*$", re.I | re.M),
    re.compile(r"^-{3,}\s*$", re.M),
    re.compile(r"\b(fix(es|ed)?|close[sd]?|resolve[sd]?|refs?|see)\s*:?\s*(#\d+|https?://\S+)(\s*,\s*#\d+)*", re.I),
    re.compile(r"\s*\((#\d+(,\s*)?)+\)"),
    re.compile(r"https?://\S+"),
    re.compile(r"(?<!\w)#\d+\b"),
)


@dataclass
class Task:
    corpus: str
    commit: str
    parent: str
    query: str
    gold: list[str]

    @property
    def split(self) -> str:
        return split_of(self.commit)

    def to_dict(self) -> dict:
        return {**asdict(self), "split": self.split}


def split_of(commit: str) -> str:
    """A third of the tasks, chosen by commit hash, is held out: looked at only once the rules are final."""
    return "heldout" if int(commit[:8], 16) % 3 == 0 else "tune"


def is_implementation(path: str) -> bool:
    return bool(CODE.search(path)) and not TEST.search(path) and not NOT_IMPLEMENTATION.search(path)


def clean_message(message: str) -> str:
    text = message
    for pat in FORGE_NOISE:
        text = pat.sub("", text)
    lines = [ln.rstrip() for ln in text.strip().splitlines()]
    out: list[str] = []
    for ln in lines:  # squeeze blank runs
        if ln or (out and out[-1]):
            out.append(ln)
    return "\n".join(out).strip()


def _git(git_dir: Path, *args: str) -> str:
    return subprocess.run(["git", f"--git-dir={git_dir}", *args], capture_output=True, text=True, check=True).stdout


def build(git_dir: Path, corpus: str, head: str, n: int, scan: int = 3000) -> list[Task]:
    """The newest `n` qualifying commits before `head`, oldest first (the order the runner indexes in)."""
    log = _git(git_dir, "log", "--no-merges", "--first-parent", f"-n{scan}", "--format=%x00%H %P%x01%B%x02",
               "--name-status", "--no-renames", head)
    tasks: list[Task] = []
    for rec in log.split("\x00")[1:]:
        head_part, _, rest = rec.partition("\x01")
        message, _, files = rest.partition("\x02")
        sha, *parents = head_part.split()
        if len(parents) != 1:
            continue
        status = [ln.split("\t") for ln in files.strip().splitlines() if "\t" in ln]
        impl = [(s[0], s[-1]) for s in status if is_implementation(s[-1])]
        if not 1 <= len(impl) <= 5 or any(st != "M" for st, _ in impl):
            continue
        subject = clean_message(message.strip().split("\n", 1)[0])
        if len(re.findall(r"\w+", subject)) < 4 or NOISE_SUBJECT.search(subject):
            continue
        tasks.append(Task(corpus, sha, parents[0], clean_message(message), sorted(p for _, p in impl)))
        if len(tasks) >= n:
            break
    return list(reversed(tasks))
