"""Decide whether a failure deserves injected code, before and after retrieval.

Stdlib-only and pure. Injecting unrelated code after a typo'd command or a network outage costs
Claude context and trust, so the default answer is "nothing": the pre-gate rejects failures that
are about the environment (missing commands, network, permissions, git usage, package registries,
kills and timeouts, empty output) unless the output points into the repo; the post-gate keeps only
hits that are demonstrably about this failure (the exact line of a repo frame, or a snippet that
contains the message's literal text or a named identifier, or a strong semantic match that shares
terms with the error).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from hippo.push.diagnosis.signals import Signals, message_literals

_ENVIRONMENT_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("command-not-found", re.compile(r"command not found|: not found$|is not recognized as an internal or external command|No such file or directory \(os error 2\)|executable file not found", re.M | re.I)),
    ("network", re.compile(
        r"Could not resolve host|Temporary failure in name resolution|Name or service not known|getaddrinfo|"
        r"\b(?-i:ENOTFOUND|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EAI_AGAIN)\b|Connection refused|Connection timed out|"
        r"Network is unreachable|No route to host|Failed to establish a new connection|SSL: CERTIFICATE_VERIFY_FAILED|"
        r"unable to access '|Could not connect to|Connection reset by peer|TLS handshake timeout|dial tcp", re.I)),
    ("permission", re.compile(r"Permission denied|\b(?-i:EACCES|EPERM)\b|Operation not permitted|Access is denied|must be run as root|are you root\?", re.I)),
    ("git", re.compile(
        r"^(?:fatal|error): (?:not a git repository|pathspec '|src refspec|failed to push|Your local changes|"
        r"You have not concluded your merge|unable to access|refusing to merge|remote origin already exists|"
        r"A branch named|couldn't find remote ref|bad revision|ambiguous argument|unknown revision|Not a valid object name|"
        r"could not read Username|Authentication failed|repository '[^'\n]{0,300}' not found|destination path)|"
        r"^unknown option: |^usage: git |^nothing (?:added )?to commit|^hint: Updates were rejected|CONFLICT \(content\)", re.M | re.I)),
    ("package-registry", re.compile(
        r"No matching distribution found|Could not find a version that satisfies|npm ERR! (?:code E404|404|network|code ENOTFOUND)|"
        r"ERR_PNPM_FETCH|error: no matching package named|failed to download|Unable to locate package|"
        r"E: Could not open lock file|ResolutionImpossible|Could not resolve dependencies", re.I)),
    ("resources", re.compile(r"^Killed$|Out of memory|No space left on device|Too many open files|Cannot allocate memory", re.M | re.I)),
    ("missing-path", re.compile(r"^(?:ls|cat|cd|rm|cp|mv|mkdir|rmdir|touch|head|tail|stat|chmod|chown|du|find|bash|sh|zsh|open|source|\.)(?:\: line \d+)?: .*(?:No such file or directory|cannot access|Not a directory|Is a directory)", re.M)),
    # a top-level dependency that is not installed (a dotted name may be the repo's own module; with a
    # repo frame on the way pre_gate would not get here)
    ("missing-dependency", re.compile(
        r"^(?:ModuleNotFoundError|ImportError): No module named '\w{1,200}'[^\S\n]*$|"
        r"^Error: Cannot find module '(?![./])[^'\n]{1,200}'|cannot find package \"[^\"\n]{1,200}\" in any of", re.M)),
    ("make-target", re.compile(r"^make(?:\[\d+\])?: \*\*\* No rule to make target", re.M)),
]

# Commands whose failures are (almost) never about the repo's code.
_ENV_COMMANDS = re.compile(
    r"^\s*(?:sudo\s+)?(?:git|curl|wget|ssh|scp|rsync|ping|docker|podman|kubectl|helm|gh|brew|apt|apt-get|yum|dnf|"
    r"pip3?\s+(?:install|download|uninstall)|npm\s+(?:install|i|ci|publish|login)|yarn\s+(?:add|install)|pnpm\s+(?:add|install|i)|"
    r"cd|ls|cat|rm|cp|mv|mkdir|chmod|chown|which|type|kill|pkill|open|ln|touch|tail|head|echo|sleep|ps|lsof|nc|"
    r"systemctl|service|aws|gcloud|az|terraform\s+(?:init|login))\b")

MAX_COMMAND_CHARS = 2000  # the patterns run on `sig.text`, already cut by signals.extract; this is the command

_EXIT_ENV = {124, 126, 127, 130, 137, 143}  # timeout, not executable, not found, SIGINT, SIGKILL, SIGTERM


@dataclass(frozen=True)
class Verdict:
    inject: bool
    reason: str


def pre_gate(sig: Signals, command: str = "") -> Verdict:
    """Cheap, retrieval-free decision: is there anything in this failure to look up?"""
    repo_locs = sig.repo_locations
    if not sig.text.strip():
        return Verdict(False, "empty-output")
    if repo_locs:
        # The output points into the repo: worth a look even if the root cause is environmental
        # (e.g. the repo's own client raised ConnectionRefusedError).
        return Verdict(True, "repo-locations")
    for name, pattern in _ENVIRONMENT_PATTERNS:
        if pattern.search(sig.text):
            return Verdict(False, name)
    if sig.exit_code in _EXIT_ENV and not sig.errors:
        return Verdict(False, f"exit-{sig.exit_code}")
    if command and _ENV_COMMANDS.match(command[:MAX_COMMAND_CHARS]):
        return Verdict(False, "environment-command")
    if sig.errors or sig.failed_tests or sig.codes:
        return Verdict(True, "messages")
    return Verdict(False, "no-signal")


_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
_STOP = {
    "the", "and", "for", "not", "with", "from", "this", "that", "was", "are", "has", "have", "got",
    "error", "errors", "exception", "failed", "failure", "line", "file", "none", "null", "true",
    "false", "self", "return", "def", "function", "const", "let", "var", "assert", "test", "tests",
}


def terms(text: str) -> set[str]:
    """Lower-cased content words, identifiers split at `_` and camelCase boundaries too."""
    out: set[str] = set()
    for tok in _WORD.findall(text):
        low = tok.lower()
        if low not in _STOP:
            out.add(low)
        for part in re.split(r"_+|(?<=[a-z0-9])(?=[A-Z])", tok):
            if len(part) >= 3 and part.lower() not in _STOP:
                out.add(part.lower())
    return out


@dataclass
class GateConfig:
    min_semantic_score: float = 0.5  # relative score (0..1) below which a semantic-only hit is noise
    min_term_overlap: int = 2  # shared content terms needed for a semantic-only hit


def hit_reason(snippet: str, score: float, sig: Signals, cfg: GateConfig | None = None) -> str | None:
    """Why a retrieved snippet is about this failure, or None if it is not."""
    cfg = cfg or GateConfig()
    low = snippet.lower()
    for err in sig.errors:
        for lit in message_literals(err.message):
            if len(lit) >= 8 and lit.lower() in low:
                return "message-literal"
    for ident in sig.identifiers:
        if len(ident) >= 4 and re.search(r"(?<![\w$])" + re.escape(ident) + r"(?![\w$])", snippet):
            return "identifier"
    for test in sig.failed_tests:
        name = re.split(r"::|\.|›| ", test)[-1].strip()
        if len(name) >= 5 and name in snippet:
            return "failed-test"
    if score >= cfg.min_semantic_score:
        wanted = terms(" ".join(f"{e.etype} {e.message}" for e in sig.errors))
        if len(wanted & terms(snippet)) >= cfg.min_term_overlap:
            return "semantic"
    return None
