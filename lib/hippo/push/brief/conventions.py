"""Style, testing and review rules condensed from the repo's spec files; process text dropped.

Spec files come from `settings.spec_globs`, matched case-insensitively (`Readme.md`, `readme.rst`).
Markdown/RST files are split into titled sections with exact line ranges; a section is kept by its
heading (conventions, testing, style, architecture...; never "Code of Conduct", "Sponsors",
"Opening a pull request"), and inside it paragraphs about process (forks, PRs, CLAs, chat links,
thanks) are dropped unless they state a rule. Config files (.editorconfig, rustfmt.toml, ruff
settings in pyproject...) become one `key=value` line each. Deterministic: same files, same text.
Docs are split with line-by-line string checks; config files come parsed once from `Repo` (issue 19).
"""
from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from hippo.core import pathkind
from hippo.core.config import DEFAULT_SPEC_GLOBS
from hippo.core.repo_read import NEVER_DESCEND
from hippo.index.chunking.headings import headings
from hippo.push.brief.repo import Repo, redact

MAX_SPEC_FILES = 40
MAX_SPEC_BYTES = 200_000
MAX_TITLE_CHARS = 200  # a heading longer than this is cut before any pattern reads it
SECTION_CHARS = 700
SKIP_NAMES = re.compile(r"(^|/)(CLAUDE(\.local)?\.md|AGENTS\.md|CHANGELOG[^/]*|HISTORY[^/]*|LICENSE[^/]*|"
                        r"CODE_OF_CONDUCT[^/]*|CONDUCT[^/]*|SECURITY[^/]*|FUNDING[^/]*|SUPPORT[^/]*|"
                        r"PULL_REQUEST_TEMPLATE[^/]*|ISSUE_TEMPLATE[^/]*|AUTHORS[^/]*|MAINTAINERS[^/]*)$", re.I)
DOC_EXT = (".md", ".markdown", ".rst", ".txt", ".adoc")
STRONG_HEADING = re.compile(r"\b(style|tests?\b|testing|lint|format(ting)?\b|naming|docstring|typing|type hint|conventions?|"
                            r"architect|layout|structure|design|principle|guideline)", re.I)
CONVENTION_HEADING = re.compile(
    r"\b(style|conventions?|guidelines?|standards?|lint|format(ting)?\b|tests?\b|testing|review|commit|architect|"
    r"layout|structure|design|develop(ment|ing)\b|developer guide|coding|code quality|typ(e|ing) (hints?|check)|"
    r"docstrings?|naming|rules?\b|adrs?\b|decisions?|principles?|best practices?|dos and|do's|quality|hacking|internals|"
    r"overview of the code)", re.I)
# README and docs/** mostly document the product for its users: only these headings speak to contributors
DEV_HEADING = re.compile(
    r"\b(contribut|develop(ment|ing)\b|developer guide|coding (style|standards?|conventions?)|code style|style guide|"
    r"conventions?|guidelines?|tests?\b|testing\b|lint(ing)?\b|code review|reviewing|commit messages?|architecture|"
    r"internals|hacking|adrs?\b|decision records?)", re.I)
PROCESS_HEADING = re.compile(
    r"pull request|\bprs?\b|merge request|code of conduct|conduct|sponsor|fund|donat|backer|\bclas?\b|"
    r"contributor license|sign[- ]?off|\bdco\b|issues?\b|\bgit\b|branch|workflow|rebase|squash|\bfork|clone|upstream|"
    r"bug reports?|reporting|security|vulnerab|support|"
    r"getting help|help wanted|communit|chat|discord|slack|gitter|contact|licen[cs]e|thank|acknowledg|credit|"
    r"authors?\b|maintainers?|governance|release|badge|star history|screenshot|roadmap|translat|first[- ]time|"
    r"where to start|questions?|faq|funding|backers|who uses|users|used by|hall of fame|talks|press|"
    r"install(ation|ing)?\b|usage|example|quick ?start|features|benchmarks?|comparison|alternatives|feedback|"
    r"suitab|feature requests?|new contributors|how to contribute|ways to contribute|submit|sending|"
    r"documentation contributions|translations?|links|filing|bugs?\b|quick steps|steps to contribute|\?\s*$|"
    r"^how do i|^\W*(our |the )?contributors\b(?!'|\s*guide)", re.I)
PROCESS_TEXT = re.compile(
    r"pull request|\bPRs?\b|\bfork\b|code of conduct|sponsor|donat|funding|open ?collective|patreon|tidelift|"
    r"\bCLA\b|sign[- ]off|\bDCO\b|issue tracker|(open|file|create|submit) an? (new )?issue|discord|slack|gitter|"
    r"mailing list|thank you|thanks|welcome|star (the|this)|good first issue|feel free|don't hesitate|"
    r"hacktoberfest|maintainers (will|may|have)|be patient|respond|contributions? (will|is|are|may)|"
    r"(accepted|rejected|merged)\b|open source|helpful responses|\bissues?\b|git (checkout|add|commit|push|clone)|"
    r"feature branch|contributions include|ways to contribute|licen[cs]ed?\b", re.I)
RULE_TEXT = re.compile(
    r"\btests?\b|lint|format|style|type hints?|typing|docstring|changelog|naming|convention|coverage|"
    r"commit message|line length|\bruff\b|\bblack\b|flake8|mypy|eslint|prettier|clippy|rustfmt|gofmt|"
    r"\bmust\b|\bnever\b|\balways\b|\bavoid\b|\bprefer\b|\bdo not\b|\bdon't\b", re.I)
FILE_WEIGHT = [
    (re.compile(r"(^|/)(CONTRIBUTING|CONVENTIONS|STYLE|DEVELOPMENT|HACKING)[^/]*$", re.I), 3.0),
    (re.compile(r"(^|/)ARCHITECTURE[^/]*$", re.I), 2.6),
    (re.compile(r"(^|/)(adr|decisions)/", re.I), 2.2),
    (re.compile(r"^docs?/", re.I), 1.6),
    (re.compile(r"(^|/)README[^/]*$", re.I), 1.4),
]
RULE_FILE = re.compile(r"(^|/)(CONTRIBUTING|CONVENTIONS|STYLE|DEVELOPMENT|HACKING|ARCHITECTURE)[^/]*$|"
                       r"(^|/)(adr|decisions)/|^docs?/(dev|development|contributing|internals)[^/]*/", re.I)
# the rest of docs/ is for the project's users (guides, tutorials, design pages): not a contributor's rules
USER_DOC = re.compile(r"^docs?/", re.I)
NONE_WRITTEN = ("Project conventions: none written for contributors (no CONTRIBUTING, style or testing section found); "
                "follow the code and configs around the change.")


@dataclass
class Section:
    path: str
    start: int
    end: int
    title: str
    text: str
    score: float


# --- which files --------------------------------------------------------------------------------
def spec_files(root: Path, globs: tuple[str, ...] | list[str], repo: Repo | None = None) -> list[str]:
    """Repo-relative files matching the spec globs, case-insensitively (`**` spans directories).
    With a `repo` whose files git lists, its tracked files (the listing the brief keeps between sessions)
    are filtered as the walk would: walking a 100k-file tree's folders cost ~0.5 CPU-s per session start.
    Otherwise the tree is walked, stopping at the repo's deadline."""
    matches = spec_matcher(globs)
    out: list[str] = []
    if repo is not None:
        tracked = repo.tracked()
        if repo.from_git:
            return _spec_tracked(tracked, matches)
    for dirpath, dirnames, filenames in os.walk(root):
        if repo is not None and repo.expired():
            repo.note("deadline: spec file walk stopped at " + (os.path.relpath(dirpath, root) or "."))
            break
        dirnames[:] = sorted(d for d in dirnames if d not in NEVER_DESCEND and not pathkind.is_vendored_dir(d)
                             and not pathkind.is_example_dir(d) and not d.startswith(".") or d in (".github",))
        rel_dir = os.path.relpath(dirpath, root).replace(os.sep, "/")
        depth = 0 if rel_dir == "." else rel_dir.count("/") + 1
        if depth > 4:
            dirnames[:] = []
        for name in filenames:
            rel = name if rel_dir == "." else f"{rel_dir}/{name}"
            if SKIP_NAMES.search(rel):
                continue
            if matches is not None and matches(rel):
                out.append(rel)
                if len(out) >= MAX_SPEC_FILES * 4:
                    return sorted(out)
    return sorted(out)


def _spec_tracked(tracked: list[str], matches: Callable[[str], bool] | None) -> list[str]:
    """spec_files over git's listing: the files the walk would meet (at most 5 folders deep, none under a
    skipped, vendored, example or dot folder but .github) that match."""
    if matches is None:
        return []
    out: list[str] = []
    ok_dirs: dict[str, bool] = {}
    for rel in tracked:
        if rel.count("/") > 5 or SKIP_NAMES.search(rel) or not matches(rel):
            continue
        parent = rel.rpartition("/")[0]
        ok = ok_dirs.get(parent)
        if ok is None:
            ok = ok_dirs[parent] = all(
                d == ".github" or not (d in NEVER_DESCEND or pathkind.is_vendored_dir(d) or pathkind.is_example_dir(d)
                                       or d.startswith(".")) for d in parent.split("/")) if parent else True
        if ok:
            out.append(rel)
            if len(out) >= MAX_SPEC_FILES * 4:
                break
    return sorted(out)


_NAMED_GROUP = re.compile(r"\(\?P<\w+>")


def spec_matcher(globs: tuple[str, ...] | list[str]) -> Callable[[str], bool] | None:
    """The spec globs as one test of a repo-relative path, case-insensitive, None for no globs.

    A glob means what it means in a .gitignore (pathspec translates it: `**/` spans directories, `*` and `?`
    do not, `!` takes files out), except that a bare name is a file at the repo root. pathspec's regexes
    are joined into one (their group names dropped): the walk tests every file it meets, and pathspec's
    per-pattern loop cost 20x that (0.2 s on a 31k-file tree, of a 1 s brief)."""
    import pathspec

    lines = []
    for glob in globs:
        g = glob.strip()
        negate = g.startswith("!")
        g = g[1:].strip() if negate else g
        if g:
            lines.append(("!/" if negate else "/") + g.lstrip("/"))
    spec = pathspec.PathSpec.from_lines("gitignore", lines)

    def joined(include: bool) -> re.Pattern[str] | None:
        parts = [_NAMED_GROUP.sub("(?:", p.regex.pattern) for p in spec.patterns
                 if p.include is include and p.regex is not None]
        return re.compile("|".join(f"(?:{part})" for part in parts), re.I) if parts else None

    taken, dropped = joined(True), joined(False)
    if taken is None:
        return None
    if dropped is None:
        return lambda rel: taken.match(rel) is not None
    return lambda rel: taken.match(rel) is not None and dropped.match(rel) is None


def _file_weight(path: str) -> float:
    for pattern, weight in FILE_WEIGHT:
        if pattern.search(path):
            return weight
    return 1.0


# --- sections ------------------------------------------------------------------------------------
def doc_sections(repo: Repo, rel: str) -> list[Section]:
    """A doc file's sections, read once per brief (commands and conventions both walk the README)."""
    key = ("sections", rel)
    if key not in repo.memo:
        text = repo.read(rel, limit=MAX_SPEC_BYTES, redacted=False)
        repo.memo[key] = sections(rel, text) if text is not None else []
    return repo.memo[key]


def sections(path: str, text: str) -> list[Section]:
    """Split a file into titled sections with exact line ranges (the chunker's Markdown/RST headings; else
    whole)."""
    lines = text.split("\n")
    is_doc = path.lower().endswith(DOC_EXT) or "." not in path.rsplit("/", 1)[-1]
    heads: list[tuple[int, str]] = []
    if is_doc:
        flavour = "rst" if path.lower().endswith(".rst") else "markdown"
        found = headings([ln[:-1] if ln.endswith("\r") else ln for ln in lines], flavour)
        heads = [(row, title[:MAX_TITLE_CHARS]) for row, _level, title in found if title]  # `#` alone titles nothing
    if not heads or heads[0][0] > 0:
        heads.insert(0, (0, path.rsplit("/", 1)[-1]))
    out: list[Section] = []
    weight = _file_weight(path)
    for n, (start, title) in enumerate(heads):
        end = heads[n + 1][0] - 1 if n + 1 < len(heads) else len(lines) - 1
        while end > start and not lines[end].strip():
            end -= 1
        body = "\n".join(lines[start:end + 1]).strip()
        if len(body) < 40:
            continue
        score = weight
        if CONVENTION_HEADING.search(title):
            score += 1.5
        if PROCESS_HEADING.search(title) and not STRONG_HEADING.search(title):
            score -= 3.0
        score -= n * 0.02  # earlier sections of a file first
        out.append(Section(path, start + 1, end + 1, title, body, score))
    return out


def contributor_doc(path: str) -> bool:
    """Written for the project's contributors: not under an examples/tutorial folder, and under docs/ only
    in a contributor file or folder (the rest of docs/ teaches the project's users)."""
    if pathkind.is_example(path):
        return False
    return not USER_DOC.search(path) or bool(RULE_FILE.search(path))


def keep_section(sec: Section, user_docs: bool = False) -> bool:
    """Conventions, not process: rule files keep every non-process section, other docs only rule headings.
    `user_docs`: the repo's own spec_globs chose the docs, so docs/ pages count as the project's rules too."""
    if PROCESS_HEADING.search(sec.title) and not STRONG_HEADING.search(sec.title):
        return False
    if not contributor_doc(sec.path) and not (user_docs and USER_DOC.search(sec.path)):
        return False
    if RULE_FILE.search(sec.path):
        return True
    if api_heading(sec.title):
        return False
    return bool(DEV_HEADING.search(sec.title)) and not sec.title.rstrip().endswith("?")  # FAQ entries are for users


def api_heading(title: str) -> bool:
    """A heading that names an API (`[.test](lib/x.js#L12)`, `` `parse()` ``, `.matcher`) documents that function
    for users, whatever word it is: "test" there is not a testing section."""
    bare = re.sub(r"\]\([^)\n]*\)", "]", title[:MAX_TITLE_CHARS]).strip(" []`*#:")
    return re.fullmatch(r"\.?[A-Za-z_$][\w.$]*\([^()]*\)|\.[A-Za-z_$][\w.$]*", bare) is not None


def drop_process(text: str) -> str:
    """Remove paragraphs and list items about process (PRs, forks, CLAs, chat, thanks) that state no rule,
    plus badges, HTML, reference-link definitions and long code blocks (commands are listed separately)."""
    out: list[str] = []
    para: list[str] = []
    fence: list[str] | None = None
    directive = False

    def flush() -> None:
        chunk = "\n".join(para).strip()
        para.clear()
        if not chunk:
            return
        if PROCESS_TEXT.search(chunk) and not RULE_TEXT.search(chunk):
            return
        out.append(chunk)

    for ln in text.split("\n"):
        s = ln.rstrip()
        if s.lstrip().startswith("```") or re.fullmatch(r"\s*~~~\s*\w*", s):
            if fence is None:
                flush()
                fence = [s]
            else:
                fence.append(s)
                if len(fence) <= 8:
                    out.append("\n".join(fence))
                fence = None
            continue
        if fence is not None:
            fence.append(s)
            continue
        if directive:
            if not s.strip() or s[:1].isspace():
                continue
            directive = False
        if re.match(r"\.\. [\w:-]+::", s) and not re.match(r"\.\. (code-block|code|sourcecode)::", s):
            flush()
            directive = True
            continue
        if re.match(r"(\[!\[|!\[|<img|<p\b|</?div|<!--|</?a\b|<br|<picture|</?source|\[[^\]]+\]:\s*\S+$|\.\. )", s.lstrip()):
            continue
        if not s.strip() or re.match(r"\s*([-*+]|\d+[.)])\s", s):
            flush()
        if s.strip():
            para.append(s)
    flush()
    return "\n\n".join(out)


CONTINUES = "\n  … (section continues)"
SECTION_READ_CHARS = 12 * SECTION_CHARS  # what drop_process reads of a section to keep SECTION_CHARS of it


def _head_of(text: str) -> str:
    """The start of a long section, cut at a line end: a 200 KB section is never redacted and filtered whole
    to show its first 700 characters."""
    if len(text) <= SECTION_READ_CHARS:
        return text
    return text[:SECTION_READ_CHARS].rsplit("\n", 1)[0]


def _condense(text: str, limit: int) -> str:
    """At most `limit` characters plus the CONTINUES mark, cut at a line boundary."""
    body = re.sub(r"\n{3,}", "\n\n", text).strip()
    if len(body) <= limit:
        return body
    cut = body[:limit].rsplit("\n", 1)[0]
    return cut + CONTINUES


# --- config files ---------------------------------------------------------------------------------
_PY_TOOLS = ("ruff", "black", "isort", "flake8", "mypy", "pyright", "pytest", "coverage")
_CONFIG_KEYS = re.compile(r"line[-_]length|max[-_]width|indent|tab|quote|target[-_]version|select|ignore|strict|"
                          r"edition|style|max_line|end_of_line|charset|trim|insert_final|semi|singleQuote|printWidth|"
                          r"testpaths|addopts|disallow|enable|extend|preset|profile|hard_tabs|imports", re.I)


def _flat(data, prefix: str = "") -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    if isinstance(data, dict):
        for k, v in data.items():
            out += _flat(v, f"{prefix}{k}." if isinstance(v, dict) else f"{prefix}{k}")
    elif isinstance(data, list):
        out.append((prefix, ",".join(str(x) for x in data[:8]) + ("…" if len(data) > 8 else "")))
    else:
        out.append((prefix, str(data)))
    return out


def config_line(repo: Repo, rel: str) -> str:
    """One `key=value` line for a style/tool config file ('' when nothing style-relevant is in it)."""
    name = rel.rsplit("/", 1)[-1].lower()
    pairs: list[tuple[str, str]] = []
    if name.endswith((".js", ".cjs", ".mjs", ".ts")):
        return f"{rel}: present (JS config; open it for the rules)"
    if name.endswith(".toml"):
        data = repo.toml(rel)  # pyproject.toml: the same parse the commands and layout use
        if name != "pyproject.toml":
            pairs = _flat(data)
        tool = data.get("tool", {}) if name == "pyproject.toml" else {}
        for t in _PY_TOOLS:
            if isinstance(tool, dict) and isinstance(tool.get(t), dict):
                pairs += [(f"{t}.{k}", v) for k, v in _flat(tool[t]) if _CONFIG_KEYS.search(k)]
    else:  # .editorconfig, setup.cfg, yaml, json: line-based key: value / key = value
        text = repo.read(rel)
        if text is None:
            return ""
        section = ""
        if name.endswith((".yml", ".yaml")):
            enabled = yaml_list_after(text, "enable:")[:20]
            return f"{rel}: " + ("enabled: " + ", ".join(enabled) if enabled else "present (YAML config; open it for the rules)")
        for ln in text.split("\n")[:200]:
            s = ln.strip()
            if s.startswith("[") and s.endswith("]"):
                section = s.strip("[]")
                continue
            m = re.match(r"\"?([\w.-]+)\"?\s*[:=]\s*(\S.*?),?$", s)
            if m and not s.startswith(("#", ";", "//")):
                key = f"{section}:{m.group(1)}" if section and name in (".editorconfig", "setup.cfg") else m.group(1)
                if name == "setup.cfg" and not re.match(r"(flake8|isort|mypy|tool:pytest|pycodestyle|pydocstyle)", section):
                    continue
                pairs.append((key, m.group(2).strip("\"'")))
    pairs = [(k, v) for k, v in pairs if v and len(v) < 80 and not re.search(r"per-file|exclude|include|paths?$", k)][:14]
    if not pairs:
        return ""
    return f"{rel}: " + " ".join(f"{k}={v}" for k, v in pairs)


def yaml_list_after(text: str, key: str) -> list[str]:
    """The `- item` lines (one word each) of the first YAML list under `key`, read line by line."""
    lines = text.split("\n")
    start = next((i for i, ln in enumerate(lines) if key in ln), -1)
    if start < 0:
        return []
    out: list[str] = []
    for ln in lines[start + 1:]:
        s = ln.strip()
        if not s:
            continue
        if not ln[:1].isspace() or not s.startswith("- "):
            break
        word = s[2:].strip()
        if word and all(c.isalnum() or c in "_-" for c in word):
            out.append(word)
            if len(out) >= 40:
                break
    return out


# --- all together ----------------------------------------------------------------------------------
def collect(repo: Repo, globs) -> tuple[list[Section], list[str]]:
    secs: list[Section] = []
    configs: list[str] = []
    chosen = tuple(globs) != tuple(DEFAULT_SPEC_GLOBS)  # the repo's hippo.toml named its spec files
    files = spec_files(repo.root, globs, repo)[: MAX_SPEC_FILES * 4]
    repo.vet(files)  # the read gate for all of them at once (one git call for the untracked)
    for rel in files:
        if repo.expired():
            repo.note(f"deadline: conventions stopped before {rel}")
            break
        if rel.lower().endswith(DOC_EXT) or "." not in rel.rsplit("/", 1)[-1] and not rel.startswith("."):
            secs.extend(s for s in doc_sections(repo, rel) if keep_section(s, user_docs=chosen))
        else:
            line = config_line(repo, rel)
            if line:
                configs.append(line)
    return secs, configs


def render(repo: Repo, globs, budget: int) -> str:
    if budget < 300:
        return ""
    secs, configs = collect(repo, globs)
    if not secs and not configs:
        return "" if repo.expired() else NONE_WRITTEN
    header = "Project conventions (style, testing and review rules condensed from the repo's docs; open the cited lines for detail):"
    out, used = [header], len(header)
    for line in configs[:6]:
        line = "- " + (line if len(line) <= 300 else line[:299] + "…")
        if used + len(line) + 1 > budget * 0.35:
            break
        out.append(line)
        used += len(line) + 1
    seen: set[str] = set()
    for sec in sorted(secs, key=lambda s: -s.score):
        head = f"--- {sec.path}:{sec.start}-{sec.end} ({sec.title[:80]})"
        room = budget - used - len(head) - len(CONTINUES) - 2
        if room < 120:
            if budget - used < 200:
                break
            continue  # a long title: a later section may still fit
        body = drop_process(redact(_head_of(sec.text)))
        # the heading line itself is in the block's title
        body = re.sub(r"\A(#{1,4}\s[^\n]*|[^\n]+\n[=\-~^]{3,})\n?", "", body).strip()
        if len(body) < 40 or body in seen:
            continue
        seen.add(body)
        shown = _condense(body, min(SECTION_CHARS, room))
        if len(sec.text) > SECTION_READ_CHARS and not shown.endswith(CONTINUES):
            shown += CONTINUES
        block = f"{head}\n{shown}"
        out.append(block)
        used += len(block) + 1
    return "\n".join(out) if len(out) > 1 else ""
