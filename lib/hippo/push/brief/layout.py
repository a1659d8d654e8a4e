"""Where things are: the project's one-line description, top-level folders and entry points.

From tracked files only (`git ls-files`), the manifests' own declarations (pyproject
`[project.scripts]`, package.json `main`/`bin`/`exports`, Cargo `[[bin]]`/workspace members,
go.mod and `cmd/*`) and the first docstring or comment of each entry file, so each line carries
a few words about what the folder or file is. Stdlib only.
"""
from __future__ import annotations

import json
import re
from collections import Counter

from hippo.push.brief.repo import Repo

try:
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

MAX_DIRS = 10
MAX_ENTRIES = 6
SOURCE_DIRS = ("src", "source", "lib", "pkg", "cmd", "internal", "crates", "packages", "apps", "app", "core")
ROLE = [
    (re.compile(r"^(tests?|__tests__|spec|specs|testing|test[-_]?helpers|testdata|e2e)$", re.I), "tests"),
    (re.compile(r"^(docs?|site|book|www|website|man|documentation)$", re.I), "docs"),
    (re.compile(r"^(examples?|samples?|demos?)$", re.I), "examples"),
    (re.compile(r"^(scripts|tools|bin|tasks|ci|hack|contrib|etc)$", re.I), "scripts/tools"),
    (re.compile(r"^(bench|benches|benchmarks?)$", re.I), "benchmarks"),
    (re.compile(r"^(typings|types|typing_tests)$", re.I), "type definitions/tests"),
]
LANG = {".py": "Python", ".pyi": "Python stubs", ".js": "JavaScript", ".mjs": "JavaScript", ".cjs": "JavaScript",
        ".ts": "TypeScript", ".tsx": "TypeScript", ".jsx": "JavaScript", ".rs": "Rust", ".go": "Go", ".rb": "Ruby",
        ".java": "Java", ".kt": "Kotlin", ".c": "C", ".h": "C", ".cc": "C++", ".cpp": "C++", ".md": "Markdown",
        ".rst": "reST", ".sh": "shell", ".vim": "Vim script", ".fish": "fish", ".zsh": "zsh", ".swift": "Swift"}


def _ext(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return "." + name.rsplit(".", 1)[-1].lower() if "." in name else ""


def _mostly(files: list[str]) -> str:
    langs = Counter(LANG.get(_ext(f)) for f in files if LANG.get(_ext(f)))
    return langs.most_common(1)[0][0] if langs else ""


def _about(repo: Repo, rel: str) -> str:
    """A few words from the head of a source file: its docstring, doc comment or first comment line."""
    head = repo.head(rel, 1500)
    m = (re.search(r'\A(?:#![^\n]*\n)?(?:#[^\n]*\n|\s)*[rRuU]?("""|\'\'\')\s*([^\n]+)', head)  # Python docstring
         or re.search(r"^//\s*(?:Package \w+\s+)?([A-Z][^\n]{8,})", head, re.M)  # Go/Rust/JS line comment
         or re.search(r"^//!\s*([^\n]{8,})", head, re.M)
         or re.search(r"/\*\*?\s*\n?\s*\*?\s*([A-Z][^\n*]{8,})", head))
    if not m:
        return ""
    text = m.group(m.lastindex or 1).strip().rstrip('"\'').strip()
    if re.search(r"copyright|license|spdx|eslint|@ts-|prettier", text, re.I):
        return ""
    text = text.split(". ")[0]
    return text[:80] + ("…" if len(text) > 80 else "")


def _project_line(repo: Repo) -> str:
    for name, reader in (("pyproject.toml", _toml_project), ("Cargo.toml", _cargo_project),
                         ("package.json", _npm_project), ("go.mod", _go_project)):
        real = repo.find(name)
        text = repo.read(real, limit=200_000) if real else None
        if text:
            try:
                got = reader(text)
            except (ValueError, TypeError, AttributeError, tomllib.TOMLDecodeError):
                got = None
            if got and got[0]:
                title, desc = got
                return f"Project: {title}" + (f" — {desc.strip()[:120]}" if desc else "") + f" ({real})"
    return ""


def _toml_project(text: str):
    p = tomllib.loads(text).get("project") or tomllib.loads(text).get("tool", {}).get("poetry") or {}
    return str(p.get("name") or ""), str(p.get("description") or "")


def _cargo_project(text: str):
    data = tomllib.loads(text)
    p = data.get("package") or {}
    name = str(p.get("name") or ("workspace" if "workspace" in data else ""))
    return name, str(p.get("description") or "")


def _npm_project(text: str):
    d = json.loads(text)
    return (str(d.get("name") or ""), str(d.get("description") or "")) if isinstance(d, dict) else None


def _go_project(text: str):
    m = re.search(r"^module\s+(\S+)", text, re.M)
    return (m.group(1), "Go module") if m else None


def entry_points(repo: Repo, files: set[str]) -> list[str]:
    out: list[str] = []

    def add(label: str, path: str | None, how: str) -> None:
        if len(out) >= MAX_ENTRIES:
            return
        about = _about(repo, path) if path and path in files else ""
        where = f" → {path}" if path else ""
        out.append(f"- entry {label}{where} ({how})" + (f": {about}" if about else ""))

    real = repo.find("pyproject.toml")
    text = repo.read(real) if real else None
    if text:
        try:
            scripts = (tomllib.loads(text).get("project") or {}).get("scripts") or {}
        except (tomllib.TOMLDecodeError, ValueError, AttributeError):
            scripts = {}
        for name, target in list(scripts.items())[:3] if isinstance(scripts, dict) else []:
            mod = str(target).split(":")[0].replace(".", "/")
            path = next((p for p in (f"src/{mod}.py", f"{mod}.py", f"src/{mod}/__init__.py", f"{mod}/__init__.py")
                         if p in files), None)
            add(f"`{name}`", path, f"[project.scripts] {target}")
    real = repo.find("package.json")
    text = repo.read(real) if real else None
    if text:
        try:
            data = json.loads(text)
        except ValueError:
            data = {}
        if isinstance(data, dict):
            bins = data.get("bin")
            if isinstance(bins, str):
                add(f"`{data.get('name', 'bin')}`", bins.lstrip("./"), "package.json bin")
            elif isinstance(bins, dict):
                for name, path in list(bins.items())[:2]:
                    add(f"`{name}`", str(path).lstrip("./"), "package.json bin")
            main = data.get("main") or (data.get("exports") if isinstance(data.get("exports"), str) else None)
            if isinstance(main, str):
                add("module", main.lstrip("./"), "package.json main")
            if isinstance(data.get("workspaces"), (list, dict)):
                ws = data["workspaces"] if isinstance(data["workspaces"], list) else data["workspaces"].get("packages", [])
                out.append("- workspaces: " + ", ".join(str(w) for w in ws[:6]) + " (package.json)")
    real = repo.find("Cargo.toml")
    text = repo.read(real) if real else None
    if text:
        try:
            data = tomllib.loads(text)
        except (tomllib.TOMLDecodeError, ValueError):
            data = {}
        for b in (data.get("bin") or [])[:2] if isinstance(data.get("bin"), list) else []:
            if isinstance(b, dict):
                add(f"binary `{b.get('name', '?')}`", str(b.get("path") or "src/main.rs"), "Cargo [[bin]]")
        if not data.get("bin") and "src/main.rs" in files:
            add("binary", "src/main.rs", "Cargo")
        if "src/lib.rs" in files:
            add("library", "src/lib.rs", "Cargo")
        members = (data.get("workspace") or {}).get("members") if isinstance(data.get("workspace"), dict) else None
        if isinstance(members, list):
            out.append("- workspace members: " + ", ".join(str(m) for m in members[:8]) + " (Cargo.toml)")
    if repo.find("go.mod"):
        if "main.go" in files:
            add("binary", "main.go", "Go main package")
        cmds = sorted({f.split("/")[1] for f in files if f.startswith("cmd/") and f.endswith("/main.go") and f.count("/") == 2})
        for c in cmds[:3]:
            add(f"binary `{c}`", f"cmd/{c}/main.go", "Go cmd/")
    for f in sorted(files):
        if f.endswith("/__main__.py") and f.count("/") <= 2 and len(out) < MAX_ENTRIES:
            pkg = f.rsplit("/", 1)[0]
            add(f"`python -m {pkg.rsplit('/', 1)[-1]}`", f, "__main__.py")
    return out


def render(repo: Repo, budget: int) -> str:
    if budget < 150:
        return ""
    tracked = repo.tracked()
    files = set(tracked)
    by_top: dict[str, list[str]] = {}
    root_files: list[str] = []
    for f in tracked:
        if "/" in f:
            by_top.setdefault(f.split("/", 1)[0], []).append(f)
        else:
            root_files.append(f)
    lines: list[str] = []
    project = _project_line(repo)
    dirs = [d for d in by_top if not d.startswith((".", "_")) or d == "__tests__"]

    def order(d: str) -> tuple:
        role = next((r for pat, r in ROLE if pat.match(d)), None)
        is_pkg = f"{d}/__init__.py" in files
        return (0 if d.lower() in SOURCE_DIRS or is_pkg else 1 if role is None else 2, -len(by_top[d]), d)

    for d in sorted(dirs, key=order)[:MAX_DIRS]:
        sub = by_top[d]
        role = next((r for pat, r in ROLE if pat.match(d)), None)
        lang = _mostly(sub)
        if f"{d}/__init__.py" in files:
            about = _about(repo, f"{d}/__init__.py")
            desc = f"Python package `{d}`" + (f": {about}" if about else "")
        elif role:
            desc = role + (f" ({lang})" if lang and role != "docs" else "")
        else:
            desc = (lang + " source" if lang else "files") if d.lower() in SOURCE_DIRS else (lang or "files")
        line = f"- {d}/ — {desc}, {len(sub)} files"
        if d.lower() in SOURCE_DIRS:
            children = Counter(f.split("/")[1] for f in sub if f.count("/") >= 2)
            parts = []
            for child, n in sorted(children.items(), key=lambda kv: (-kv[1], kv[0]))[:5]:
                tag = " (Python package)" if f"{d}/{child}/__init__.py" in files else ""
                parts.append(f"{d}/{child}/{tag} {n}")
            if parts:
                line += "; inside: " + ", ".join(parts)
        lines.append(line)
    code_root = [f for f in root_files if _ext(f) in (".go", ".py", ".rs", ".js", ".ts") and "test" not in f.lower()
                 and not f.startswith(".") and not re.search(r"\.config\.|rc\.|^(setup|noxfile|conftest)\.py$", f)]
    if len(code_root) >= 3:
        lines.insert(0, f"- ./ (repo root) — {_mostly(code_root)} source files at the root, {len(code_root)} files"
                        f" (e.g. {', '.join(sorted(code_root)[:4])})")
    lines += entry_points(repo, files)
    if not lines:
        return ""
    header = "Layout (top-level folders, entry points):"
    out, used = [header] + ([project] if project else []), len(header) + len(project)
    for line in lines:
        line = line if len(line) <= 260 else line[:259] + "…"
        if used + len(line) + 1 > budget:
            break
        out.append(line)
        used += len(line) + 1
    return "\n".join(out)
