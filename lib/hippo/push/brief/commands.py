"""The project's own commands (install, build, test, one test, lint, format, run), each with its source.

Read cheaply from the files a teammate would point at: Makefile and justfile targets, package.json
scripts, pyproject (tool sections, hatch env scripts, poe tasks), tox.ini and noxfile.py envs,
Cargo.toml, go.mod, pre-commit config, `.github/workflows/*` `run:` lines, `scripts/`, and the
command lines in README/CONTRIBUTING development sections. Stdlib only (tomllib, json, configparser,
regexes); nothing is executed. One classifier decides what a command line is for, so a README's
`pip install requests` (a user install) is dropped while `pip install -e .` is kept.
"""
from __future__ import annotations

import configparser
import json
import re
from dataclasses import dataclass

from hippo.push.brief.repo import Repo, redact

try:
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

KINDS = ("install", "build", "test", "test_one", "lint", "format", "run")
LABELS = {"install": "install", "build": "build", "test": "test (all)", "test_one": "test (one)", "lint": "lint/check",
          "format": "format", "run": "run"}
PER_KIND = 4
DETAIL_CHARS = 70

# where a command came from, most trusted first: the project's task runners, then its docs, then CI,
# then what a manifest implies (`cargo test` for a Cargo.toml)
RUNNER, DOCS, CI, INFERRED = 0, 1, 2, 3


@dataclass(frozen=True)
class Command:
    kind: str
    cmd: str
    source: str
    detail: str = ""
    rank: int = RUNNER


# --- what a name or a command line is for ------------------------------------------------------
_NAME_KINDS = [  # first match wins; matched against the name's tokens
    (None, ("doc", "docs", "book", "site", "man", "changelog", "release", "publish", "clean", "bench", "benchmark",
            "fuzz", "deploy", "version", "bump", "authors", "update", "outdated", "tag", "upload", "prerelease")),
    ("format", ("fmt", "format", "prettier", "black", "isort", "pretty", "fix")),
    ("lint", ("lint", "clippy", "vet", "check", "ruff", "flake8", "pylint", "eslint", "xo", "standard", "typecheck",
              "types", "type", "mypy", "pyright", "tsc", "precommit", "pre-commit", "static", "style", "shellcheck",
              "forbid", "typing")),
    ("test", ("test", "tests", "spec", "pytest", "coverage", "cov", "e2e", "itest", "unit", "integration")),
    ("build", ("build", "compile", "dist", "bundle", "package", "wheel")),
    ("install", ("install", "init", "setup", "deps", "bootstrap", "sync", "develop", "requirements")),
    ("run", ("run", "start", "serve", "server", "dev", "watch", "demo")),
]
_SKIP_TOKENS = {"py27", "py3"}


def kind_of_name(name: str) -> str | None:
    """What a target/script/env named `name` is for (`check:format` is a check, `fix:format` a format)."""
    tokens = [t for t in re.split(r"[^a-z0-9]+", name.lower()) if t and t not in _SKIP_TOKENS]
    if not tokens:
        return None
    if re.fullmatch(r"py(py)?\d*|\d+(\.\d+)*|py\d+-\w+", tokens[0]) and len(tokens) <= 2:
        return "test"  # tox envs such as py312 or 3.12-tests
    if "check" in tokens and any(t in ("fmt", "format", "prettier", "black") for t in tokens):
        return "lint"
    for kind, words in _NAME_KINDS:
        if any(t in words or (len(t) > 5 and (t.endswith(w) or t.startswith(w)))
               for t in tokens for w in words if len(w) >= 3 or t == w):
            return kind
    return None


_LINTERS = {"ruff": None, "flake8": "lint", "pylint": "lint", "mypy": "lint", "pyright": "lint", "eslint": "lint",
            "xo": "lint", "standard": "lint", "biome": None, "tsc": "lint", "golangci-lint": "lint",
            "rubocop": "lint", "shellcheck": "lint", "prettier": None, "black": "format", "isort": "format",
            "gofmt": "format", "rustfmt": "format", "clang-format": "format", "tsd": "lint", "typos": "lint"}
_RUNNERS = ("uv run", "poetry run", "pdm run", "hatch run", "pipenv run", "npx", "pnpm exec", "pnpm dlx", "yarn dlx",
            "bundle exec", "python -m", "python3 -m", "py -m")


def classify(line: str) -> str | None:
    """What a shell command line is for, or None when it is not a development command."""
    words = line.split()
    if not words or "${" in line or words[0].startswith(("$", "#", "-")) or "=" in words[0]:
        return None
    w = [x.strip("'\"") for x in words]
    for prefix in _RUNNERS:  # `uv run pytest`, `python -m pytest`, `npx eslint .`
        n = len(prefix.split())
        if " ".join(w[:n]) == prefix and len(w) > n:
            if prefix in ("hatch run", "pdm run", "poetry run") and len(w) == n + 1 and ":" in w[n]:
                return kind_of_name(w[n].split(":")[-1])
            inner = classify(" ".join(w[n:]))
            if inner:
                return inner
            if prefix in ("hatch run", "pdm run", "poetry run", "uv run"):
                return kind_of_name(w[n])
            return None
    tool, sub = w[0], (w[1] if len(w) > 1 else "")
    if tool in ("make", "just", "./justfile", "mage", "task"):
        target = next((x for x in w[1:] if not x.startswith("-") and "=" not in x), "")
        return kind_of_name(target) if target else None  # a bare `make` is whatever the first target is
    if tool in ("npm", "pnpm", "yarn", "bun"):
        if sub in ("ci", "install", "i") and len([x for x in w[2:] if not x.startswith("-")]) == 0:
            return "install"
        if sub in ("test", "t"):
            return "test"
        if sub == "start":
            return "run"
        script = w[2] if sub == "run" and len(w) > 2 else (sub if tool != "npm" else "")
        return kind_of_name(script) if script and sub not in ("publish", "version", "pack", "exec", "add") else None
    if tool == "cargo":
        if sub == "install":
            return "install" if "--path" in w else None
        return {"test": "test", "nextest": "test", "clippy": "lint", "check": "lint", "fmt": "format", "build": "build",
                "run": "run", "doc": None, "bench": None}.get(sub)
    if tool == "go":
        return {"test": "test", "vet": "lint", "build": "build", "fmt": "format", "run": "run", "generate": None,
                "install": None}.get(sub)
    if tool in ("pytest", "py.test", "tox", "nox", "ctest"):
        if tool in ("tox", "nox"):
            env = next((w[i + 1] for i, x in enumerate(w[:-1]) if x in ("-e", "-s", "--session")), "")
            return kind_of_name(env) if env else "test"
        return "test"
    if tool in ("pip", "pip3", "uv") or (tool in ("python", "python3") and sub == "-m" and len(w) > 2 and w[2] == "pip"):
        args = w[w.index("install") + 1:] if "install" in w else []
        if tool == "uv" and sub == "sync":
            return "install"
        if tool == "uv" and sub == "build":
            return "build"
        if args and any(a in ("-e", "--editable", "-r", "--requirement", ".", "--group") or a.startswith((".[", "-e", "-r"))
                        for a in args):
            return "install"
        return None
    if tool in ("python", "python3") and sub == "-m" and len(w) > 2:
        return "build" if w[2] == "build" else classify(" ".join(w[2:]))
    if tool in ("pre-commit", "prek") and sub == "run":
        return "lint"
    if tool in ("poetry", "pdm", "pipenv", "bundle") and sub == "install":
        return "install"
    if tool == "hatch" and sub in ("test", "fmt", "build"):
        return {"test": "test", "fmt": "format", "build": "build"}[sub]
    if tool in ("ruff", "biome"):
        return "format" if sub == "format" else ("lint" if sub in ("check", "lint", "ci") or tool == "ruff" else None)
    if tool == "prettier":
        return "format" if "--write" in w or "-w" in w else "lint"
    if tool in _LINTERS:
        if tool in ("gofmt", "black", "rustfmt", "isort") and any(x in w for x in ("-l", "--check", "-d", "--diff")):
            return "lint"
        return _LINTERS[tool]
    if tool in ("node",) and sub == "--test":
        return "test"
    if tool in ("vitest", "jest", "mocha", "ava", "tap", "playwright"):
        return "test" if tool != "playwright" or sub == "test" else None
    if tool.startswith(("./scripts/", "scripts/", "./bin/", "bin/")):
        return kind_of_name(tool.rsplit("/", 1)[-1].rsplit(".", 1)[0])
    return None


def _short(text: str, limit: int = DETAIL_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


# --- task runners -------------------------------------------------------------------------------
_MAKE_TARGET = re.compile(r"^([A-Za-z0-9][A-Za-z0-9_-]*(?:[ \t]+[A-Za-z0-9][A-Za-z0-9_-]*)*)[ \t]*:(?![:=])(.*)$")


def from_makefile(repo: Repo) -> list[Command]:
    name = repo.find("Makefile", "GNUmakefile", "makefile")
    text = repo.read(name) if name else None
    if not text:
        return []
    out: list[Command] = []
    targets: dict[str, list[str]] = {}
    deps_of: dict[str, str] = {}
    order: list[str] = []
    current: list[str] = []
    for line in text.replace("\\\n", " ").split("\n"):
        if line.startswith("\t"):
            body = line.strip().lstrip("@-").strip()
            if body and not body.startswith(("$(info", "echo", "#", "printf")):
                current.append(body)
            continue
        m = _MAKE_TARGET.match(line)
        if not m:
            if line.strip() and not line.startswith("#"):
                current = []
            continue
        deps = m.group(2).split("#")[0].split(";")[0].split()
        current = []
        plain = " ".join(d for d in deps if "$" not in d and "/" not in d)
        for target in m.group(1).split():
            targets.setdefault(target, current)
            deps_of.setdefault(target, plain)
            if target not in order:
                order.append(target)
    for target in order:
        body = targets[target]
        detail = body[0] if body else (f"runs {deps_of[target]}" if deps_of[target] else "")
        out.append(Command(kind_of_name(target) or "other", f"make {target}", name, _short(detail)))
    return out


_JUST_RECIPE = re.compile(r"^@?([A-Za-z_][A-Za-z0-9_-]*)((?:[ \t]+[^:\n]*?)?)[ \t]*:(?![=:])(.*)$")


def from_justfile(repo: Repo) -> list[Command]:
    name = repo.find("justfile", ".justfile")
    text = repo.read(name) if name else None
    if not text:
        return []
    out: list[Command] = []
    lines = text.split("\n")
    comment = ""
    for i, line in enumerate(lines):
        if line.startswith("#") and not line.startswith("#!"):
            comment = line.lstrip("#").strip()
            continue
        if not line.strip() or line.startswith("["):
            continue
        if line[0].isspace() or re.match(r"(alias|set|export|import|mod)\b", line):
            comment = "" if not line[0].isspace() else comment
            continue
        m = _JUST_RECIPE.match(line)
        if not m or m.group(1).startswith("_"):
            comment = ""
            continue
        recipe = m.group(1)
        params = re.findall(r"[+*$]?([A-Za-z_][\w-]*)(?:=(?:'[^']*'|\"[^\"]*\"|`[^`]*`|\S+))?", m.group(2))
        body = next((ln.strip() for ln in lines[i + 1:i + 4] if ln[:1].isspace() and ln.strip()
                     and not ln.strip().startswith(("#!", "#"))), "")
        deps = m.group(3).strip()
        detail = _short(comment or body or deps)
        kind = kind_of_name(recipe) or "other"
        if params and (kind == "test" or "test" in comment.lower()):
            kind = "test_one"
        cmd = "just " + " ".join([recipe, *(f"<{p}>" for p in params if p)])
        out.append(Command(kind, cmd, name, detail))
        comment = ""
    return out


_LIFECYCLE = {"prepare", "prepublish", "prepublishonly", "prepack", "postpack", "preinstall", "install",
              "postinstall", "preversion", "version", "postversion", "release", "np"}
_ONE_TEST = {"node --test": "node --test <file>", "jest": "npx jest <file> -t '<name>'",
             "vitest": "npx vitest run <file> -t '<name>'", "ava": "npx ava <file> --match '<name>'",
             "mocha": "npx mocha <file> --grep '<name>'"}


def from_package_json(repo: Repo) -> list[Command]:
    name = repo.find("package.json")
    text = repo.read(name) if name else None
    if not text:
        return []
    try:
        data = json.loads(text)
    except ValueError:
        return []
    if not isinstance(data, dict):
        return []
    pm = ("pnpm" if repo.find("pnpm-lock.yaml") else "yarn" if repo.find("yarn.lock") else
          "bun" if repo.find("bun.lockb", "bun.lock") else "npm")
    out = [Command("install", {"npm": "npm ci" if repo.find("package-lock.json") else "npm install",
                               "pnpm": "pnpm install", "yarn": "yarn install", "bun": "bun install"}[pm],
                   "package.json", "lockfile" if pm != "npm" or repo.find("package-lock.json") else "")]
    scripts = data.get("scripts") if isinstance(data.get("scripts"), dict) else {}
    for script, body in list(scripts.items())[:60]:
        if not isinstance(body, str) or script.lower() in _LIFECYCLE or (
                script.startswith(("pre", "post")) and script[3:].lstrip("t") in scripts):
            continue
        if script == "test":
            cmd = f"{pm} test"
        elif script == "start":
            cmd = f"{pm} start"
        else:
            cmd = f"{pm} run {script}" if pm in ("npm", "bun") else f"{pm} {script}"
        kind = kind_of_name(script) or "other"
        out.append(Command(kind, cmd, "package.json", _short(body)))
        if kind == "test":
            for marker, one in _ONE_TEST.items():
                if re.search(r"(^|[\s&;|])" + re.escape(marker) + r"\b", body):
                    out.append(Command("test_one", one, f"package.json scripts.{script}", "", INFERRED))
                    break
        for part in re.split(r"&&|\|\||;", body):  # linters run inside other scripts (`xo && ava`)
            words = part.split()
            if words and words[0] in _LINTERS and kind not in ("lint", "format", "build"):
                sub = classify(part.strip())
                if sub in ("lint", "format"):
                    out.append(Command(sub, "npx " + " ".join(words[:3]), f"package.json scripts.{script}", "", DOCS))
    return out


def _toml(repo: Repo, name: str) -> dict:
    real = repo.find(name)
    text = repo.read(real) if real else None
    if not text:
        return {}
    try:
        return tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError):
        return {}


def from_pyproject(repo: Repo, tox_envs: bool = True) -> list[Command]:
    data = _toml(repo, "pyproject.toml")
    if not data:
        return []
    tool = data.get("tool") if isinstance(data.get("tool"), dict) else {}
    src = "pyproject.toml"
    out: list[Command] = []
    uv = bool(repo.find("uv.lock")) or "uv" in tool
    run = "uv run " if uv else ""
    project = data.get("project") if isinstance(data.get("project"), dict) else {}
    if uv:
        out.append(Command("install", "uv sync", src, "uv.lock", INFERRED))
    elif "poetry" in tool:
        out.append(Command("install", "poetry install", src, "", INFERRED))
        run = "poetry run "
    elif "pdm" in tool:
        out.append(Command("install", "pdm install", src, "", INFERRED))
        run = "pdm run "
    else:
        extras = project.get("optional-dependencies") if isinstance(project.get("optional-dependencies"), dict) else {}
        groups = data.get("dependency-groups") if isinstance(data.get("dependency-groups"), dict) else {}
        dev = [e for e in extras if re.search(r"test|dev", e)]
        dev_groups = [g for g in groups if re.search(r"test|dev", g)]
        if dev:
            out.append(Command("install", f"pip install -e '.[{','.join(dev[:2])}]'", src, "optional dependencies", INFERRED))
        elif dev_groups:
            out.append(Command("install", f"pip install -e . --group {dev_groups[0]}", src, "dependency groups", INFERRED))
        elif "build-system" in data:
            out.append(Command("install", "pip install -e .", src, "", INFERRED))
    if "build-system" in data and "hatch" not in tool:
        out.append(Command("build", "uv build" if uv else "python -m build", src, "[build-system]", INFERRED))
    if "pytest" in tool:
        opts = tool["pytest"].get("ini_options", tool["pytest"]) if isinstance(tool["pytest"], dict) else {}
        paths = opts.get("testpaths") if isinstance(opts, dict) else None
        where = paths[0] if isinstance(paths, list) and paths and isinstance(paths[0], str) else "tests"
        out.append(Command("test", f"{run}pytest", src, "[tool.pytest]", INFERRED))
        out.append(Command("test_one", f"{run}pytest {where}/<file>.py::<test_name>", src, "", INFERRED))
    if "ruff" in tool:
        out.append(Command("lint", f"{run}ruff check .", src, "[tool.ruff]", INFERRED))
        if "black" not in tool:
            out.append(Command("format", f"{run}ruff format .", src, "[tool.ruff]", INFERRED))
    if "black" in tool:
        out.append(Command("format", f"{run}black .", src, "[tool.black]", INFERRED))
    for checker in ("mypy", "pyright"):
        if checker in tool:
            out.append(Command("lint", f"{run}{checker}", src, f"[tool.{checker}] type check", INFERRED))
    hatch = tool.get("hatch") if isinstance(tool.get("hatch"), dict) else {}
    envs = hatch.get("envs") if isinstance(hatch.get("envs"), dict) else {}
    for env, conf in list(envs.items())[:12]:
        scripts = conf.get("scripts") if isinstance(conf, dict) and isinstance(conf.get("scripts"), dict) else {}
        for script, body in list(scripts.items())[:12]:
            cmd = f"hatch run {script}" if env == "default" else f"hatch run {env}:{script}"
            text = body if isinstance(body, str) else " && ".join(b for b in body if isinstance(b, str)) if isinstance(body, list) else ""
            out.append(Command(kind_of_name(script) or kind_of_name(env) or "other", cmd, src, _short(text)))
    poe = tool.get("poe") if isinstance(tool.get("poe"), dict) else {}
    tasks = poe.get("tasks") if isinstance(poe.get("tasks"), dict) else {}
    for task, body in list(tasks.items())[:30]:
        text = body if isinstance(body, str) else (body.get("cmd") or body.get("shell") or body.get("help") or "") \
            if isinstance(body, dict) else ""
        out.append(Command(kind_of_name(task) or "other", f"poe {task}", src, _short(str(text))))
    scripts = project.get("scripts") if isinstance(project.get("scripts"), dict) else {}
    for script, target in list(scripts.items())[:3]:
        out.append(Command("run", f"{run}{script}", src, f"entry point {_short(str(target), 50)}", INFERRED))
    if tox_envs and isinstance(tool.get("tox"), dict) and isinstance(tool["tox"].get("legacy_tox_ini"), str):
        out += _tox_from_ini(tool["tox"]["legacy_tox_ini"], src + " [tool.tox]")
    return out


def _expand(spec: str) -> list[str]:
    """`py{310,311}-{a,b}` → the four env names (tox's factor braces; ranges like 3.1{0-4} too)."""
    m = re.search(r"\{([^{}]*)\}", spec)
    if not m:
        return [spec]
    opts = []
    for part in m.group(1).split(","):
        part = part.strip()
        rng = re.fullmatch(r"(\d+)-(\d+)", part)
        opts += [str(i) for i in range(int(rng.group(1)), int(rng.group(2)) + 1)] if rng else [part]
    return [x for opt in opts[:12] for x in _expand(spec[:m.start()] + opt + spec[m.end():])][:40]


def _tox_from_ini(text: str, src: str) -> list[Command]:
    cp = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        cp.read_string(text)
    except configparser.Error:
        return []
    head = "tox" if cp.has_section("tox") else "tox:tox" if cp.has_section("tox:tox") else None
    listed: list[str] = []
    if head:
        raw = cp.get(head, "env_list", fallback=cp.get(head, "envlist", fallback=""))
        items = re.findall(r"[^\s,{}]*(?:\{[^{}]*\}[^\s,{}]*)+|[^\s,{}]+", "\n".join(
            ln.split("#")[0] for ln in raw.split("\n")))
        listed = [e for item in items for e in _expand(item)]
    named = [s.split(":", 1)[1] for s in cp.sections() if s.startswith("testenv:")]
    out = [Command("test", "tox", src, _short("envs: " + ", ".join(listed)) if listed else "")]
    commands_of = {}
    for sec in cp.sections():
        if sec.startswith("testenv:"):
            lines = [re.sub(r"^[\w.{},-]+:\s+", "", ln.strip()) for ln in cp.get(sec, "commands", fallback="").split("\n")]
            commands_of[sec.split(":", 1)[1]] = "; ".join(ln for ln in lines if ln)
    seen_test = False
    for spec in named + [e for e in listed if e not in named]:
        for env in _expand(spec):
            kind = kind_of_name(env)
            if kind in (None, "run"):
                continue
            if kind == "test":
                if seen_test:
                    continue
                seen_test = True
            out.append(Command(kind, f"tox -e {env}", src, _short(commands_of.get(spec, ""))))
    return out


def from_tox(repo: Repo) -> list[Command]:
    name = repo.find("tox.ini")
    text = repo.read(name) if name else None
    if text:
        return _tox_from_ini(text, name)
    name = repo.find("setup.cfg")
    text = repo.read(name) if name else None
    return _tox_from_ini(text, name) if text and "[tox:tox]" in text else []


_NOX_SESSION = re.compile(r"@nox\.session\(([^)]*)\)\s*(?:@[^\n]*\n\s*)*def\s+(\w+)\s*\([^)]*\)[^:]*:\s*(?:[rRuU]?\"\"\"\s*([^\n\"]*))?", re.S)


def from_noxfile(repo: Repo) -> list[Command]:
    name = repo.find("noxfile.py")
    text = repo.read(name) if name else None
    if not text:
        return []
    out = [Command("test", "nox", name, "the default sessions")]
    for m in _NOX_SESSION.finditer(text):
        args, func, doc = m.group(1), m.group(2), (m.group(3) or "").strip()
        alias = re.search(r"name\s*=\s*[\"']([^\"']+)", args)
        session = alias.group(1) if alias else func
        out.append(Command(kind_of_name(session) or "other", f"nox -s {session}", name, _short(doc)))
    return out


def from_precommit(repo: Repo) -> list[Command]:
    name = repo.find(".pre-commit-config.yaml", ".pre-commit-config.yml")
    text = repo.read(name) if name else None
    if not text:
        return []
    ids = re.findall(r"^\s*-\s*id:\s*['\"]?([\w.-]+)", text, re.M)
    return [Command("lint", "pre-commit run --all-files", name, _short("hooks: " + ", ".join(dict.fromkeys(ids))))]


# --- manifests ----------------------------------------------------------------------------------
def from_cargo(repo: Repo) -> list[Command]:
    data = _toml(repo, "Cargo.toml")
    if not data:
        return []
    ws = isinstance(data.get("workspace"), dict)
    flag = " --workspace" if ws else ""
    src = "Cargo.toml" + (" [workspace]" if ws else "")
    bins = isinstance(data.get("bin"), list) or bool(repo.find("src")) and "main.rs" in repo.listdir("src")
    out = [Command("build", f"cargo build{flag}", src, "", INFERRED),
           Command("test", f"cargo test{flag}", src, "", INFERRED),
           Command("test_one", f"cargo test{flag} <test_name>", src, "substring filter", INFERRED),
           Command("lint", f"cargo clippy{flag} --all-targets", src, "", INFERRED),
           Command("format", "cargo fmt --all" if ws else "cargo fmt", src, "", INFERRED)]
    if bins and isinstance(data.get("package"), dict):
        out.append(Command("run", "cargo run -- <args>", src, "", INFERRED))
        out.append(Command("install", "cargo install --path .", src, "the binary", INFERRED))
    return out


def from_gomod(repo: Repo) -> list[Command]:
    name = repo.find("go.mod")
    if not name:
        return []
    out = [Command("build", "go build ./...", name, "", INFERRED),
           Command("test", "go test ./...", name, "", INFERRED),
           Command("test_one", "go test ./<pkg> -run '^TestName$'", name, "", INFERRED),
           Command("lint", "go vet ./...", name, "", INFERRED),
           Command("format", "gofmt -w .", name, "", INFERRED)]
    if repo.find(".golangci.yml", ".golangci.yaml", ".golangci.toml", ".golangci.json"):
        out.append(Command("lint", "golangci-lint run", ".golangci config", "", INFERRED))
    return out


# --- CI workflows, scripts/, docs --------------------------------------------------------------
_RUN_KEY = re.compile(r"^(\s*)(?:-\s+)?run:\s*(.*)$")


def run_lines(text: str) -> list[str]:
    """The shell lines of a workflow's `run:` steps, read line by line (no YAML parser on the hook path)."""
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        m = _RUN_KEY.match(lines[i])
        i += 1
        if not m:
            continue
        value = m.group(2).split(" #")[0].strip()
        if value and value[0] not in "|>":
            if len(value) > 1 and value[0] == value[-1] and value[0] in "'\"":
                value = value[1:-1]
            out.append(value)
            continue
        indent = len(m.group(1))
        block: list[str] = []
        while i < len(lines) and (not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) > indent):
            block.append(lines[i].strip())
            i += 1
        if value.startswith(">"):
            out.append(" ".join(b for b in block if b))
        else:
            joined, cont = [], ""
            for b in block:
                if b.endswith("\\"):
                    cont += b[:-1].rstrip() + " "
                    continue
                joined.append(cont + b)
                cont = ""
            out += [b for b in joined if b]
    return out


def from_workflows(repo: Repo) -> list[Command]:
    out: list[Command] = []
    names = [n for n in repo.listdir(".github/workflows") if n.lower().endswith((".yml", ".yaml"))][:20]
    for name in names:
        rel = f".github/workflows/{name}"
        text = repo.read(rel, limit=100_000)
        if not text or re.search(r"^name:.*\b(release|publish|deploy|stale|label)", text, re.I | re.M):
            continue
        for line in run_lines(text):
            for part in line.split(" && "):
                part = part.strip()
                kind = classify(part)
                if kind and len(part) <= 120:
                    out.append(Command(kind, part, rel, "", CI))
    return out


def from_scripts(repo: Repo) -> list[Command]:
    out: list[Command] = []
    folder = repo.find("scripts")
    if not folder:
        return out
    for name in repo.listdir(folder)[:40]:
        if name.startswith((".", "_")) or not re.search(r"\.(sh|bash|py|js|mjs|ts|ps1)$|^[\w-]+$", name):
            continue
        kind = kind_of_name(name.rsplit(".", 1)[0]) or "other"
        if (repo.root / folder / name).is_file():
            out.append(Command(kind, f"{folder}/{name}", "scripts/", ""))
    return out


DEV_DOC = re.compile(r"(^|/)(readme|contributing|development|developing|hacking|building|build|testing|"
                     r"getting[-_ ]started|install)[^/]*\.(md|markdown|rst|txt)$|^docs?/(dev|development|contributing)[^/]*/",
                     re.I)
SETUP_HEADING = re.compile(r"\b(develop|contribut|test|lint|format|build|setup|set up|install|hacking|getting started|"
                           r"running|local|environment|style|quality|check|compil|work(ing)? on)", re.I)
_INLINE = re.compile(r"``([^`\n]{3,120})``|`([^`\n]{3,120})`")


def from_docs(repo: Repo, max_files: int = 8) -> list[Command]:
    from hippo.push.brief.conventions import doc_sections

    docs = [f for f in repo.tracked() if DEV_DOC.search(f) and f.count("/") <= 3]
    docs.sort(key=lambda f: (f.count("/"), not f.lower().startswith(("contributing", ".github/contributing")), f.lower()))
    out: list[Command] = []
    for rel in docs[:max_files]:
        for sec in doc_sections(repo, rel):
            if not SETUP_HEADING.search(sec.title) and not rel.lower().split("/")[-1].startswith(
                    ("contributing", "development", "hacking", "building", "testing")):
                continue
            for cand in _doc_command_lines(sec.text):
                kind = classify(cand)
                if kind and _ecosystem_present(repo, cand):
                    out.append(Command(kind, redact(cand), rel, "", DOCS))
    return out


_ECOSYSTEM = [
    (("npm", "npx", "pnpm", "yarn", "bun", "node"), ("package.json",)),
    (("cargo",), ("Cargo.toml",)),
    (("go",), ("go.mod",)),
    (("pip", "pip3", "python", "python3", "pytest", "tox", "nox", "uv", "poetry", "pdm", "hatch", "ruff", "black",
      "mypy"), ("pyproject.toml", "setup.py", "setup.cfg", "requirements.txt", "requirements-dev.txt", "tox.ini")),
    (("bundle", "rake", "rubocop"), ("Gemfile",)),
    (("make",), ("Makefile", "GNUmakefile")),
    (("just",), ("justfile", ".justfile")),
]


def _ecosystem_present(repo: Repo, line: str) -> bool:
    """A README's `npm install` in a Rust repo documents some other package: keep a tool's commands only
    when the repo has that tool's manifest."""
    tool = line.split()[0]
    for tools, manifests in _ECOSYSTEM:
        if tool in tools:
            return repo.find(*manifests) is not None
    return True


def _doc_command_lines(text: str) -> list[str]:
    lines = text.split("\n")
    out: list[str] = []
    fence = False
    literal_indent = None
    for ln in lines:
        s = ln.strip()
        if s.startswith(("```", "~~~")):
            fence = not fence
            continue
        if literal_indent is not None:
            if s and len(ln) - len(ln.lstrip()) <= literal_indent:
                literal_indent = None
            elif s:
                out.append(s[2:] if s.startswith("$ ") else s)
                continue
        if s.startswith(".. code-block::") or s.startswith(".. code::") or (s.endswith("::") and not s.startswith("..")):
            literal_indent = len(ln) - len(ln.lstrip())
            continue
        if fence:
            out.append(s[2:] if s.startswith(("$ ", "> ", "% ")) else s)
            continue
        for m in _INLINE.finditer(ln):
            out.append((m.group(1) or m.group(2)).strip())
    return [c.strip() for c in out if c and not c.startswith("#")]


# --- all together ------------------------------------------------------------------------------
EXTRACTORS = (from_makefile, from_justfile, from_package_json, from_tox, from_noxfile, from_pyproject,
              from_precommit, from_cargo, from_gomod, from_scripts, from_docs, from_workflows)


def extract(repo: Repo) -> list[Command]:
    """Every command found, deduplicated by exact text (the most trusted source wins)."""
    found: list[Command] = []
    for fn in EXTRACTORS:
        try:
            found += fn(repo)
        except (RecursionError, ValueError, TypeError, KeyError, AttributeError, IndexError):
            continue  # one odd build file never costs the rest of the brief
    best: dict[str, Command] = {}
    for c in found:
        key = " ".join(c.cmd.split())
        if key not in best or c.rank < best[key].rank:
            best[key] = c
    cmds = list(best.values())
    # an inferred `cargo clippy --all-targets` is noise next to the exact line CI runs
    explicit = {(c.kind, " ".join(c.cmd.split()[:2])) for c in cmds if c.rank < INFERRED}
    return [c for c in cmds if c.rank < INFERRED or (c.kind, " ".join(c.cmd.split()[:2])) not in explicit]


def render(cmds: list[Command], budget: int) -> str:
    if not cmds or budget < 200:
        return ""
    header = "Commands (exact, from the project's own files; source in parentheses):"
    out, used = [header], len(header)
    for kind in KINDS:
        group = sorted((c for c in cmds if c.kind == kind), key=lambda c: c.rank)[:PER_KIND]
        if not group:
            continue
        items = [f"`{c.cmd}`" + (f" = {c.detail}" if c.detail else "") + f" ({c.source})" for c in group]
        line = f"- {LABELS[kind]}: " + "; ".join(items)
        if used + len(line) + 1 > budget:
            line = f"- {LABELS[kind]}: " + "; ".join(f"`{c.cmd}` ({c.source})" for c in group[:2])
            if used + len(line) + 1 > budget:
                break
        out.append(line)
        used += len(line) + 1
    others = [c for c in cmds if c.kind == "other" and c.rank == RUNNER]
    if others:
        line = "- other tasks: " + ", ".join(f"`{c.cmd}`" for c in others[:12]) + (" …" if len(others) > 12 else "")
        if used + len(line) + 1 <= budget:
            out.append(line)
    return "\n".join(out) if len(out) > 1 else ""
