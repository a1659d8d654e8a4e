"""Where things are: the project's one-line description, top-level folders and entry points.

From tracked files only (`git ls-files`), the manifests' own declarations (pyproject
`[project.scripts]`, package.json `main`/`bin`/`exports`, Cargo `[[bin]]`/workspace members,
go.mod and `cmd/*`) and the first docstring or comment of each entry file, so each line carries
a few words about what the folder or file is. Stdlib only. Manifests come parsed once from `Repo`
(shared with the commands); file heads are read with string operations (issue 19).
"""
from __future__ import annotations

import re
from collections import Counter

from hippo.push.brief.repo import Repo

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
    text = head_summary(repo.head(rel, 1500))
    if not text or re.search(r"copyright|license|spdx|eslint|@ts-|prettier", text, re.I):
        return ""
    text = text.split(". ")[0]
    return text[:80] + ("…" if len(text) > 80 else "")


def head_summary(head: str) -> str:
    """The first line of a file head's docstring (Python), `//`/`//!` comment or `/* */` block; '' if none.
    One pass over the lines: no pattern backtracks over the head's whitespace."""
    lines = head.split("\n")
    for n, ln in enumerate(lines):  # Python: past the shebang, comments and blank lines
        s = ln.strip().lstrip("rRuU")
        if not s or s.startswith("#"):
            continue
        if s.startswith(('"""', "\'\'\'")):
            rest = s[3:].strip() or next((x.strip() for x in lines[n + 1:] if x.strip()), "")
            return rest.rstrip("\"'").strip()
        break
    for ln in lines:
        if ln.startswith("//"):
            s = ln.lstrip("/!").strip()
            words = s.split(None, 2)
            for cand in ([words[2]] if words[:1] == ["Package"] and len(words) == 3 else []) + [s]:
                if len(cand) >= 9 and (cand[:1].isupper() or ln.startswith("//!")):
                    return cand
    at = head.find("/*")
    if at >= 0:
        body = head[at + 2:].lstrip("*")
        first = next((x.strip().lstrip("*").strip() for x in body.split("\n")[:3] if x.strip().lstrip("*").strip()), "")
        first = first.split("*", 1)[0].strip()
        if len(first) >= 9 and first[:1].isupper():
            return first
    return ""


def _project_line(repo: Repo) -> str:
    for name in ("pyproject.toml", "Cargo.toml", "package.json", "go.mod"):
        real = repo.find(name)
        if not real:
            continue
        title, desc = _project_of(repo, name, real)
        if title:
            return f"Project: {title}" + (f" — {desc.strip()[:120]}" if desc else "") + f" ({real})"
    return ""


def project_names(repo: Repo) -> set[str]:
    """The names the project publishes under (pyproject, Cargo.toml, package.json, go.mod), lower case."""
    out = set()
    for name in ("pyproject.toml", "Cargo.toml", "package.json", "go.mod"):
        real = repo.find(name)
        title = _project_of(repo, name, real)[0] if real else ""
        if title and title != "workspace":
            out.add(title.lower())
    return out


def _project_of(repo: Repo, name: str, real: str) -> tuple[str, str]:
    """(name, description) a manifest declares; ('', '') when it declares none."""
    if name == "go.mod":
        text = repo.read(real) or ""
        module = next((ln.split()[1] for ln in text.split("\n")[:50] if ln.startswith("module") and len(ln.split()) > 1), "")
        return module, "Go module" if module else ""
    data = repo.json(real) if name == "package.json" else repo.toml(real)
    if not isinstance(data, dict):
        return "", ""
    if name == "pyproject.toml":
        tool = data.get("tool")
        p = data.get("project") or (tool.get("poetry") if isinstance(tool, dict) else None)
    else:
        p = data if name == "package.json" else data.get("package")
    p = p if isinstance(p, dict) else {}
    title = str(p.get("name") or ("workspace" if name == "Cargo.toml" and "workspace" in data else ""))
    return title, str(p.get("description") or "")


def entry_points(repo: Repo, files: set[str]) -> list[str]:
    out: list[str] = []

    def add(label: str, path: str | None, how: str) -> None:
        if len(out) >= MAX_ENTRIES:
            return
        about = _about(repo, path) if path and path in files else ""
        where = f" → {path}" if path else ""
        out.append(f"- entry {label}{where} ({how})" + (f": {about}" if about else ""))

    project = repo.toml(repo.find("pyproject.toml")).get("project")
    scripts = project.get("scripts") if isinstance(project, dict) else None
    if isinstance(scripts, dict):
        for name, target in list(scripts.items())[:3]:
            mod = str(target).split(":")[0].replace(".", "/")
            path = next((p for p in (f"src/{mod}.py", f"{mod}.py", f"src/{mod}/__init__.py", f"{mod}/__init__.py")
                         if p in files), None)
            add(f"`{name}`", path, f"[project.scripts] {target}")
    data = repo.json(repo.find("package.json"))
    if data:
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
    if repo.find("Cargo.toml"):
        data = repo.toml(repo.find("Cargo.toml"))
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
        if f.endswith("/__main__.py") and f.count("/") <= 3 and len(out) < MAX_ENTRIES:
            module = main_module(f, files)
            if module:
                add(f"`python -m {module}`", f, "__main__.py")
    return out


def main_module(path: str, files: set[str]) -> str:
    """`httpie/manager/__main__.py` → `httpie.manager` (what `python -m` takes): the package path from the
    import root (the repo root, or src/), '' when a folder on the way is not a package."""
    parts = path.split("/")[:-1]
    if parts and parts[0] == "src" and "src/__init__.py" not in files:
        parts = parts[1:]
        base = "src/"
    else:
        base = ""
    for i in range(1, len(parts)):
        if f"{base}{'/'.join(parts[:i])}/__init__.py" not in files:
            return ""
    return ".".join(parts) if parts and all(p.isidentifier() for p in parts) else ""


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
