"""Make pasted text (error output, log lines, stack traces) searchable. Stdlib only.

People and hooks paste whole failure outputs into a search. The boilerplate in them (traceback headers,
timestamps, frame lines in the caller's files) drowns the part that names the code: the message. These
helpers strip the boilerplate and cut the message into short phrases that a raise site's message *template*
also contains ("is not one of" matches `"{value!r} is not one of {choices}"`).
"""
from __future__ import annotations

import re

# The text is untrusted (whatever a query pastes). Lines are cut before matching, so the one pattern
# that can backtrack within a line (BOILERPLATE's `={3,}.*={3,}`) costs at most MAX_LINE_CHARS² per line.
MAX_TEXT_CHARS = 20_000
MAX_LINE_CHARS = 512
BOILERPLATE = re.compile(
    r"^\s*(Traceback \(most recent call last\):|Exit code \d+|During handling of the above exception.*|"
    r"The above exception was the direct cause.*|\^+|~+|-{3,}|={3,}.*={3,}|\.\.\.)\s*$"
)
TEST_RUNNER_NOISE = re.compile(
    r"^\s*(\d+ (failed|passed|errors?|skipped|warnings?)\b.*|[\w./\\-]+:\d+:\s*|collected \d+ items?.*|"
    r"Ran \d+ tests? in .*|FAILED \(.*\)|OK)\s*$"
)
PY_FRAME = re.compile(r'^\s*File "[^"]*", line \d+(?:, in (?P<func>[\w.<>]+))?')
JS_FRAME = re.compile(r"^\s*at (?:(?P<func>[\w.$<>\[\]]+(?: [\w.$<>\[\]]+){0,8}) )?\(?[^()\s]*:\d+(?::\d+)?\)?\s*$")
LOG_PREFIX = re.compile(
    r"^\s*\[?\d{4}-\d{2}-\d{2}[T ][\d:.,]+Z?\]?\s*(?:\[?(?:TRACE|DEBUG|INFO|NOTICE|WARN(?:ING)?|ERROR|FATAL|CRITICAL)\]?\s*)?"
    r"(?:[\w.\-\[\]]+:\s+)?"
)
WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]*(?:'[a-z]+)?")
QUOTED = re.compile(r"(?<!\w)(['\"])([^'\"\n]*)\1(?!\w)")
VALUE = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"|`[^`\n]*`|\b\d[\w.:/-]*")
MAX_PHRASES = 40


def looks_pasted(text: str) -> bool:
    """Multi-line or long text that reads like program output rather than a question."""
    return "\n" in text.strip() or len(text) > 160 or bool(re.search(r"\w(Error|Exception)\b:", text))


def focus_text(text: str) -> str:
    """The text minus boilerplate: frame lines keep only their function name, log prefixes go."""
    out = []
    for line in text[:MAX_TEXT_CHARS].splitlines():
        line = line[:MAX_LINE_CHARS]
        if BOILERPLATE.match(line):
            continue
        m = PY_FRAME.match(line) or JS_FRAME.match(line)
        if m:
            if m.group("func") and not m.group("func").startswith("<"):
                out.append(m.group("func"))
            continue
        if TEST_RUNNER_NOISE.match(line):
            continue
        line = LOG_PREFIX.sub("", line).strip()
        line = re.sub(r"^(E\s+|FAILED \S+ - |ERROR \S+ - )", "", line)
        if line:
            out.append(line)
    return "\n".join(out)


def phrases(text: str) -> list[str]:
    """Lower-cased 3-4 word runs from the message lines, most distinctive (longest) first."""
    seen: dict[str, int] = {}
    for line in focus_text(text).splitlines():
        _, _, message = line.rpartition(": ") if re.match(r"^[\w.$]+(\s*\[[\w-]+\])?: ", line) else ("", "", line)
        # Quoted parts and numbers are the values filled into a template: phrases never span them.
        # A quoted sentence (4+ words) is the message itself, not a value: unquote it.
        message = QUOTED.sub(lambda m: m.group(2) if len(m.group(2).split()) >= 4 else m.group(0), message)
        for segment in VALUE.split(message.lower()):
            words = WORD.findall(segment)
            for size in (4, 3):
                for i in range(0, len(words) - size + 1):
                    ph = " ".join(words[i:i + size])
                    if len(ph) >= 12 and ph not in seen:
                        seen[ph] = len(ph)
    return sorted(seen, key=lambda p: -seen[p])[:MAX_PHRASES]


def phrase_regex(phrases: list[str]) -> str:
    """One case-insensitive regex matching any phrase, words separated by any non-word run (quotes,
    braces and format placeholders sit between words in a message template)."""
    parts = [r"\W+".join(re.escape(w) for w in ph.split(" ")) for ph in phrases]
    return "(?i)(?:" + "|".join(parts) + ")"


def normalise(text: str) -> str:
    """The form phrases are matched against: lower case, runs of non-word characters collapsed to a space."""
    return " ".join(WORD.findall(text.lower()))
