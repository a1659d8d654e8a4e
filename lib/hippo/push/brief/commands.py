"""The project's own commands (install, build, test, one test, lint, format, run), each with its source.

Read cheaply from the files a teammate would point at: Makefile and justfile targets, package.json
scripts, pyproject (tool sections, hatch env scripts, poe tasks), tox.ini and noxfile.py envs,
Cargo.toml, go.mod, pre-commit config, `.github/workflows/*` `run:` lines, `scripts/`, and the
command lines in README/CONTRIBUTING development sections. Stdlib only (tomllib, json, configparser,
string scans); nothing is executed. One classifier decides what a command line is for, so a README's
`pip install requests` (a user install) is dropped while `pip install -e .` is kept.

The files are untrusted (issue 19): build files are read line by line with string operations, every
pattern left runs on one short line or is linear by construction, manifests come parsed once from
`Repo` (size-capped), and the counts taken from any one file are bounded.
"""
from __future__ import annotations

import configparser
import re
from dataclasses import dataclass
from itertools import islice

from hippo.push.brief.repo import MANIFEST_BYTES, Repo, parse_ini, redact

KINDS = ("install", "build", "test", "test_one", "lint", "format", "run")
LABELS = {"install": "install", "build": "build", "test": "test (all)", "test_one": "test (one)", "lint": "lint/check",
          "format": "format", "run": "run"}
PER_KIND = 4
DETAIL_CHARS = 70
MAX_COMMAND_CHARS = 300  # longer is not a command line a teammate would type
MAX_TASKS = 200  # targets/recipes/sessions taken from one file
MAX_NAME_CHARS = 100

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
    name = name[:MAX_NAME_CHARS]
    tokens = [t for t in re.split(r"[^a-z0-9]+", name.lower()) if t and t not in _SKIP_TOKENS]
    if not tokens:
        return None
    if re.fullmatch(r"py(py)?\d*|\d+", tokens[0]) and len(tokens) <= 2:
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
    if len(line) > MAX_COMMAND_CHARS:
        return None
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
        if sub == "format" and not any(x in w for x in ("--check", "--diff")):
            return "format"
        if any(x in w for x in ("--fix", "--write", "--apply")):
            return "format"  # a check that rewrites files
        return "lint" if sub in ("check", "lint", "ci", "format") or tool == "ruff" else None
    if tool == "coverage":  # `coverage run -m pytest` runs the tests; `coverage report` only reads their data
        return classify(" ".join(w[w.index("-m") + 1:])) if sub == "run" and "-m" in w[:-1] else None
    if tool == "eslint" and "--fix" in w:
        return "format"
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
_NAME_HEAD = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
_NAME_CHARS = _NAME_HEAD | {"_", "-"}


def _is_name(word: str, head=_NAME_HEAD, rest=_NAME_CHARS) -> bool:
    return bool(word) and word[0] in head and all(c in rest for c in word)


def make_rule(line: str) -> tuple[list[str], str] | None:
    """`name [name…]: deps` → (names, deps); None for anything else (`:=`/`::` assignments and rules,
    variables, pattern rules). One scan of the line: hostile lines cost what they weigh."""
    colon = line.find(":")
    if colon <= 0 or line[colon + 1:colon + 2] in (":", "="):
        return None
    names = line[:colon].split()
    if not names or line[0] in " \t" or not all(_is_name(n) for n in names):
        return None
    return names, line[colon + 1:]


def from_makefile(repo: Repo) -> list[Command]:
    name = repo.find("Makefile", "GNUmakefile", "makefile")
    text = repo.read(name) if name else None
    if not text:
        return []
    out: list[Command] = []
    targets: dict[str, list[str]] = {}  # insertion order is the file's order
    deps_of: dict[str, str] = {}
    current: list[str] = []
    for line in text.replace("\\\n", " ").split("\n"):
        if line.startswith("\t"):
            body = line.strip().lstrip("@-").strip()
            if body and not body.startswith(("$(info", "echo", "#", "printf")):
                current.append(body)
            continue
        rule = make_rule(line)
        if rule is None:
            if line.strip() and not line.startswith("#"):
                current = []
            continue
        names, rest = rule
        deps = rest.split("#")[0].split(";")[0].split()
        current = []
        plain = " ".join(d for d in deps[:20] if "$" not in d and "/" not in d)
        for target in names:
            if len(targets) >= MAX_TASKS:
                break
            targets.setdefault(target, current)
            deps_of.setdefault(target, plain)
    for target, body in targets.items():
        detail = body[0] if body else (f"runs {deps_of[target]}" if deps_of[target] else "")
        out.append(Command(kind_of_name(target) or "other", f"make {target}", name, _short(detail)))
    return out


_JUST_HEAD = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
_JUST_KEYWORDS = ("alias", "set", "export", "import", "mod")


def just_recipe(line: str) -> tuple[str, str, str] | None:
    """`[@]name [params]: deps` → (name, params, deps), read with one left-to-right scan; None otherwise.

    The params end at the first colon (a parameter default never holds one in this reading), and a colon
    followed by `=` or `:` is an assignment, not a recipe."""
    start = 1 if line.startswith("@") else 0
    end = start
    while end < len(line) and line[end] in _NAME_CHARS:
        end += 1
    name = line[start:end]
    if not name or name[0] not in _JUST_HEAD:
        return None
    colon = line.find(":", end)
    if colon < 0 or line[colon + 1:colon + 2] in ("=", ":"):
        return None
    params = line[end:colon]
    if params and params[0] not in " \t":
        return None
    return name, params, line[colon + 1:]


def just_params(text: str) -> list[str]:
    """Parameter names of a recipe (`a b='x y' +rest $env=z`), one pass over the text."""
    names: list[str] = []
    i, n = 0, len(text)
    while i < n and len(names) < 20:
        while i < n and text[i] in " \t":
            i += 1
        if i < n and text[i] in "+*$":
            i += 1
        j = i
        while j < n and text[j] in _NAME_CHARS:
            j += 1
        if j > i and text[i] in _JUST_HEAD:
            names.append(text[i:j])
        i = j
        if i < n and text[i] == "=":  # a default: quoted (up to its closing quote) or one word
            i += 1
            if i < n and text[i] in "'\"`":
                close = text.find(text[i], i + 1)
                i = n if close < 0 else close + 1
        while i < n and text[i] not in " \t":
            i += 1
    return names


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
        first = line.split(None, 1)[0]
        if line[0].isspace() or first in _JUST_KEYWORDS or first.split(":")[0] in _JUST_KEYWORDS:
            comment = "" if not line[0].isspace() else comment
            continue
        rule = just_recipe(line)
        if rule is None or rule[0].startswith("_"):
            comment = ""
            continue
        if len(out) >= MAX_TASKS:
            break
        recipe, param_text, deps = rule
        params = just_params(param_text)
        body = next((ln.strip() for ln in lines[i + 1:i + 4] if ln[:1].isspace() and ln.strip()
                     and not ln.strip().startswith(("#!", "#"))), "")
        deps = deps.strip()
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
NODE_TEST_ONE = "node --test --test-name-pattern '<name>' <file>"
_ONE_TEST = {"node --test": NODE_TEST_ONE, "borp": NODE_TEST_ONE, "jest": "npx jest <file> -t '<name>'",
             "vitest": "npx vitest run <file> -t '<name>'", "ava": "npx ava <file> --match '<name>'",
             "mocha": "npx mocha <file> --grep '<name>'", "tap": "npx tap <file> --grep '<name>'"}
_BUILTIN_RUNNERS = ("node --test",)


_PMS = ("npm", "pnpm", "yarn", "bun")


def script_steps(scripts: dict, name: str, seen: set[str] | None = None, depth: int = 0) -> list[str]:
    """The commands a package.json script runs, in order, with the scripts it calls (`npm run x`) read in
    place (three levels deep at most, each script once)."""
    seen = {name} if seen is None else seen
    body = scripts.get(name)
    if not isinstance(body, str) or depth > 3:
        return []
    out: list[str] = []
    for part in re.split(r"&&|\|\||;", body[:MAX_COMMAND_CHARS * 4]):
        words = part.split()
        called = (words[2] if len(words) >= 3 and words[0] in _PMS and words[1] == "run" else
                  words[1] if len(words) == 2 and words[0] in ("pnpm", "yarn") and words[1] in scripts else None)
        if called and called not in seen:
            seen.add(called)
            out += script_steps(scripts, called, seen, depth + 1)
        elif words:
            out.append(" ".join(words))
    return out


def test_runner(scripts: dict, deps: set[str]) -> str | None:
    """The runner the test script really uses: the first one it runs, reading through the scripts it calls
    (pino's `npm run borp && jest test/jest` runs node:test through borp first). When the package lists
    dependencies, the runner must be one of them (or node's built-in one)."""
    for step in script_steps(scripts, "test"):
        words = step.split()
        if words[0] == "npx" and len(words) > 1:
            words = words[1:]
        for marker in _ONE_TEST:
            if words[:len(marker.split())] == marker.split() and (
                    marker in _BUILTIN_RUNNERS or not deps or marker in deps):
                return marker
    return None


def from_package_json(repo: Repo) -> list[Command]:
    data = repo.json(repo.find("package.json"))
    if not isinstance(data, dict):
        return []
    pm = ("pnpm" if repo.find("pnpm-lock.yaml") else "yarn" if repo.find("yarn.lock") else
          "bun" if repo.find("bun.lockb", "bun.lock") else "npm")
    out = [Command("install", {"npm": "npm ci" if repo.find("package-lock.json") else "npm install",
                               "pnpm": "pnpm install", "yarn": "yarn install", "bun": "bun install"}[pm],
                   "package.json", "lockfile" if pm != "npm" or repo.find("package-lock.json") else "")]
    scripts = data.get("scripts") if isinstance(data.get("scripts"), dict) else {}
    deps = {str(k) for key in ("devDependencies", "dependencies")
            if isinstance(data.get(key), dict) for k in list(data[key])[:400]}
    runner = test_runner(scripts, deps)
    if runner:
        out.append(Command("test_one", _ONE_TEST[runner], "package.json scripts.test", f"the suite runs {runner}",
                           INFERRED))
    ordered = sorted(list(scripts.items())[:60], key=lambda kv: kv[0] != "test")  # the suite's own entry first
    for script, body in ordered:
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
        for part in re.split(r"&&|\|\||;", body):  # linters run inside other scripts (`xo && ava`)
            words = part.split()
            if words and words[0] in _LINTERS and kind not in ("lint", "format", "build"):
                sub = classify(part.strip())
                if sub in ("lint", "format"):
                    out.append(Command(sub, "npx " + " ".join(words[:3]), f"package.json scripts.{script}", "", DOCS))
    return out


def from_pyproject(repo: Repo, tox_envs: bool = True) -> list[Command]:
    data = repo.toml(repo.find("pyproject.toml"))
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
        where = paths[0] if isinstance(paths, list) and paths and isinstance(paths[0], str) else test_dir(repo)
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
            conf = tool[checker] if isinstance(tool[checker], dict) else {}
            # bare `mypy` with no `files` in its config stops at "Missing target module"; pyright checks the project
            target = "" if checker == "pyright" or conf.get("files") else " " + package_dir(repo, project)
            out.append(Command("lint", f"{run}{checker}{target}", src, f"[tool.{checker}] type check", INFERRED))
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
    legacy = tool["tox"].get("legacy_tox_ini") if isinstance(tool.get("tox"), dict) else None
    if tox_envs and isinstance(legacy, str):
        cp = repo.memo.get(("ini", "pyproject.toml [tool.tox]"))
        if cp is None:
            try:
                cp = parse_ini(legacy[:MANIFEST_BYTES])
            except (configparser.Error, ValueError):
                cp = False
            repo.memo[("ini", "pyproject.toml [tool.tox]")] = cp
        out += _tox_from_ini(cp, src + " [tool.tox]", python_range(repo)) if cp else []
    return out


def test_dir(repo: Repo) -> str:
    """The top-level test folder the repo has (`test/` in some, `tests/` in most), for a one-test template."""
    return next((repo.top()[d] for d in ("tests", "test", "testing")
                 if d in repo.top() and repo.is_dir(repo.top()[d])), "tests")


def package_dir(repo: Repo, project: dict) -> str:
    """The import package to type-check: the project's own name under src/ or at the root, else the only
    package found there, else `.`."""
    files = set(repo.tracked())
    name = str(project.get("name") or "").lower().replace("-", "_").replace(".", "_")
    for cand in (f"src/{name}", name):
        if name and f"{cand}/__init__.py" in files:
            return cand
    pkgs = sorted({f.rsplit("/", 1)[0] for f in files if f.endswith("/__init__.py")
                   and (f.count("/") == 1 and not f.startswith(("tests/", "test/", "docs/"))
                        or f.count("/") == 2 and f.startswith("src/"))})
    return pkgs[0] if len(pkgs) == 1 else "."


def python_range(repo: Repo) -> tuple[tuple[int, int], tuple[int, int]]:
    """The (lowest, first unsupported) Python versions from `requires-python` (or setup.cfg's
    python_requires); (0, 0)..(99, 0) when the project does not say."""
    project = repo.toml(repo.find("pyproject.toml")).get("project")
    spec = project.get("requires-python") if isinstance(project, dict) else None
    if not isinstance(spec, str):
        cp = repo.ini(repo.find("setup.cfg"))
        spec = cp.get("options", "python_requires", fallback="") if cp is not None else ""
    lo, hi = (0, 0), (99, 0)
    for clause in spec.split(",")[:8]:
        clause = clause.strip()
        op = clause[:2] if clause[:2] in (">=", "<=", "~=", "==", "!=") else clause[:1]
        parts = clause[len(op):].strip().split(".")
        if not (len(parts) >= 2 and parts[0].isdigit() and parts[1].isdigit()):
            continue
        ver = (int(parts[0]), int(parts[1]))
        if op in (">=", "~=", "^"):
            lo = max(lo, ver)
        elif op == ">":
            lo = max(lo, (ver[0], ver[1] + 1))
        elif op == "<":
            hi = min(hi, ver)
        elif op == "<=":
            hi = min(hi, (ver[0], ver[1] + 1))
    return lo, hi


def env_python(env: str) -> tuple[int, int] | None:
    """The Python version a tox env name pins (`py38`, `py3.12-django`, `3.11`), or None."""
    for factor in env.split("-"):
        digits = factor[2:] if factor.startswith("py") and not factor.startswith("pypy") else factor
        if digits.replace(".", "").isdigit() and len(digits.replace(".", "")) >= 2:
            major, _, minor = digits.partition(".") if "." in digits else (digits[0], "", digits[1:])
            if major.isdigit() and minor.isdigit():
                return int(major), int(minor)
    return None


MAX_ENVS = 40
MAX_FACTORS = 12


def expand(spec: str) -> list[str]:
    """`py{310,311}-{a,b}` → the four env names (tox's factor braces; ranges like 3.1{0-4} too).

    Left to right, keeping at most MAX_ENVS names and MAX_FACTORS options per brace, so the work is
    linear in the spec whatever its braces."""
    names = [""]
    i = 0
    while i < len(spec):
        open_ = spec.find("{", i)
        close = spec.find("}", open_ + 1) if open_ >= 0 else -1
        if open_ < 0 or close < 0:
            names = [n + spec[i:] for n in names]
            break
        inner = spec[open_ + 1:close]
        if "{" in inner:  # `{a{b}`: the outer brace is literal text
            names = [n + spec[i:inner.rfind("{") + open_ + 1] for n in names]
            i = inner.rfind("{") + open_ + 1
            continue
        opts: list[str] = []
        for part in inner.split(",")[:MAX_FACTORS]:
            part = part.strip()
            lo, dash, hi = part.partition("-")
            if dash and lo.isdigit() and hi.isdigit() and len(lo) < 6 and len(hi) < 6:
                opts += [str(k) for k in range(int(lo), min(int(hi), int(lo) + MAX_FACTORS - 1) + 1)]
            else:
                opts.append(part)
        lit = spec[i:open_]
        names = list(islice((n + lit + opt for n in names for opt in opts[:MAX_FACTORS]), MAX_ENVS))
        i = close + 1
    return names


def env_items(raw: str) -> list[str]:
    """A tox env_list value split into its items: commas and whitespace separate them outside braces."""
    items: list[str] = []
    cur: list[str] = []
    depth = 0
    for line in raw.split("\n"):
        for ch in line.split("#")[0] + "\n":
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth = max(0, depth - 1)
            if depth == 0 and (ch == "," or ch.isspace()):
                if cur:
                    items.append("".join(cur))
                    cur = []
                if len(items) >= MAX_ENVS:
                    return items
            else:
                cur.append(ch)
    if cur:
        items.append("".join(cur))
    return items[:MAX_ENVS]


def _tox_from_ini(cp: configparser.ConfigParser, src: str,
                  pythons: tuple[tuple[int, int], tuple[int, int]] = ((0, 0), (99, 0))) -> list[Command]:
    """tox envs as commands; an env pinned to a Python the project does not support is left out."""

    def supported(env: str) -> bool:
        ver = env_python(env)
        return ver is None or pythons[0] <= ver < pythons[1]

    head = "tox" if cp.has_section("tox") else "tox:tox" if cp.has_section("tox:tox") else None
    listed: list[str] = []
    if head:
        raw = cp.get(head, "env_list", fallback=cp.get(head, "envlist", fallback=""))
        listed = [e for item in env_items(raw) for e in expand(item) if supported(e)][:MAX_ENVS]
    named = [s.split(":", 1)[1] for s in cp.sections() if s.startswith("testenv:")][:MAX_ENVS]
    out = [Command("test", "tox", src, _short("envs: " + ", ".join(listed)) if listed else "")]
    commands_of = {}
    for sec in cp.sections():
        if sec.startswith("testenv:"):
            lines = [_drop_factor(ln.strip()) for ln in cp.get(sec, "commands", fallback="").split("\n")[:20]]
            commands_of[sec.split(":", 1)[1]] = "; ".join(ln for ln in lines if ln)
    seen_test = False
    for spec in named + [e for e in listed if e not in named]:
        for env in expand(spec):
            if not supported(env):
                continue
            kind = kind_of_name(env)
            if kind in (None, "run"):
                continue
            if kind == "test":
                if seen_test:
                    continue
                seen_test = True
            out.append(Command(kind, f"tox -e {env}", src, _short(commands_of.get(spec, ""))))
    return out


def _drop_factor(line: str) -> str:
    """`py310,py311: pytest {posargs}` → `pytest {posargs}` (a factor-conditional command)."""
    head, colon, rest = line.partition(":")
    if colon and head and rest[:1].isspace() and all(c.isalnum() or c in "_.{},-" for c in head):
        return rest.strip()
    return line


def from_tox(repo: Repo) -> list[Command]:
    name = repo.find("tox.ini")
    cp = repo.ini(name)
    if cp is not None:
        return _tox_from_ini(cp, name or "tox.ini", python_range(repo))
    name = repo.find("setup.cfg")
    cp = repo.ini(name)
    if cp is None or not cp.has_section("tox:tox"):
        return []
    return _tox_from_ini(cp, name or "setup.cfg", python_range(repo))


NOX_LOOKAHEAD = 12  # lines from `@nox.session` to the docstring


def from_noxfile(repo: Repo) -> list[Command]:
    """Sessions from `@nox.session(...)` decorators, read line by line: the decorator's arguments, then
    (past other decorators) the `def`, then the docstring's first line, each within a few lines."""
    name = repo.find("noxfile.py")
    text = repo.read(name) if name else None
    if not text:
        return []
    out = [Command("test", "nox", name, "the default sessions")]
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if not line.lstrip().startswith("@nox.session"):
            continue
        if len(out) > MAX_TASKS:
            break
        window = lines[i:i + NOX_LOOKAHEAD]
        at = next((k for k, ln in enumerate(window) if ln.lstrip().startswith(("def ", "async def "))), -1)
        if at < 0:
            continue
        func = window[at].split("def ", 1)[1].split("(", 1)[0].strip()
        if not func.isidentifier():
            continue
        decorators = "\n".join(window[:at])
        close = decorators.find(")")
        session = _nox_name_arg(decorators[:close] if close >= 0 else decorators) or func
        sig_end = next((k for k in range(at, len(window)) if window[k].rstrip().endswith(":")), len(window))
        first = window[sig_end + 1].strip().lstrip("rRuU") if sig_end + 1 < len(window) else ""
        doc = first[3:].split('"', 1)[0].strip() if first.startswith('"""') else ""
        out.append(Command(kind_of_name(session) or "other", f"nox -s {session}", name, _short(doc)))
    return out


def _nox_name_arg(args: str) -> str:
    """The `name="..."` argument of a nox.session decorator, if any."""
    at = args.find("name")
    while at >= 0:
        rest = args[at + 4:].lstrip()
        if rest.startswith("="):
            value = rest[1:].lstrip()
            if value[:1] in ("'", '"'):
                return value[1:].split(value[0], 1)[0]
        at = args.find("name", at + 4)
    return ""


def from_precommit(repo: Repo) -> list[Command]:
    name = repo.find(".pre-commit-config.yaml", ".pre-commit-config.yml")
    text = repo.read(name) if name else None
    if not text:
        return []
    ids: dict[str, None] = {}
    for line in text.split("\n"):
        s = line.strip()
        if s.startswith("-"):
            s = s[1:].lstrip()
        if s.startswith("id:") and len(ids) < 40:
            word = s[3:].strip().strip("'\"").split()[:1]
            if word and all(c.isalnum() or c in "_.-" for c in word[0]):
                ids[word[0]] = None
    return [Command("lint", "pre-commit run --all-files", name, _short("hooks: " + ", ".join(ids)))]


# --- manifests ----------------------------------------------------------------------------------
def from_cargo(repo: Repo) -> list[Command]:
    data = repo.toml(repo.find("Cargo.toml"))
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
def run_key(line: str) -> tuple[int, str] | None:
    """`   - run: value` → (indent, value); None when the line is not a `run:` key."""
    body = line.lstrip()
    indent = len(line) - len(body)
    if body.startswith("-") and body[1:2].isspace():
        body = body[1:].lstrip()
    return (indent, body[4:]) if body.startswith("run:") else None


def run_lines(text: str) -> list[str]:
    """The shell lines of a workflow's `run:` steps, read line by line (no YAML parser on the hook path)."""
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        key = run_key(lines[i])
        i += 1
        if key is None:
            continue
        indent, raw = key
        value = raw.split(" #")[0].strip()
        if value and value[0] not in "|>":
            if len(value) > 1 and value[0] == value[-1] and value[0] in "'\"":
                value = value[1:-1]
            out.append(value)
            continue
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


_RELEASE_WORDS = re.compile(r"\b(release|publish|deploy|stale|label)", re.I)


def from_workflows(repo: Repo) -> list[Command]:
    out: list[Command] = []
    names = [n for n in repo.listdir(".github/workflows") if n.lower().endswith((".yml", ".yaml"))][:20]
    for name in names:
        rel = f".github/workflows/{name}"
        text = None if repo.expired() else repo.read(rel, limit=100_000)
        if repo.expired():
            repo.note(f"deadline: workflows stopped before {rel}")
            break
        if not text or any(ln[:5].lower() == "name:" and _RELEASE_WORDS.search(ln) for ln in text.split("\n")):
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
        rel = f"{folder}/{name}"
        if not repo.is_file(rel):
            continue
        by_name = kind_of_name(name.rsplit(".", 1)[0]) or "other"
        kind, what = script_kind(repo.head(rel, 4000), by_name)
        out.append(Command(kind, rel, "scripts/", what))
    return out


_SCRIPT_ORDER = ("test", "format", "lint", "build", "install", "run")


def script_kind(text: str, by_name: str) -> tuple[str, str]:
    """What a script does, from the commands it runs (its name is only the fallback): a `coverage` script
    that only reports is not a test run, a `lint` that rewrites files (`ruff check --fix`, `ruff format`)
    is a format step. Returns (kind, the commands it runs, shortened)."""
    kinds: list[str] = []
    runs: list[str] = []
    for line in text.split("\n")[:80]:
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        words = [x for x in s.split() if not x.startswith("${") or "}" not in x[2:-1] or not x.endswith("}")]
        words = [x.split("}", 1)[1] if x.startswith("${") and "}" in x and not x.endswith("}") else x for x in words]
        cmd = " ".join(words)
        kind = classify(cmd)
        if kind:
            kinds.append(kind)
            runs.append(" ".join(words[:3]))
        elif words[:1] and words[0].split("/")[-1] == "coverage":
            runs.append(" ".join(words[:2]))
    if not runs:
        return by_name, ""
    kind = next((k for k in _SCRIPT_ORDER if k in kinds), "other")
    return kind, _short("runs " + ", ".join(dict.fromkeys(runs)))


DEV_DOC = re.compile(r"(^|/)(readme|contributing|development|developing|hacking|building|build|testing|"
                     r"getting[-_ ]started|install)[^/]*\.(md|markdown|rst|txt)$|^docs?/(dev|development|contributing)[^/]*/",
                     re.I)
SETUP_HEADING = re.compile(r"\b(develop|contribut|test|lint|format|build|setup|set up|install|hacking|getting started|"
                           r"running|local|environment|style|quality|check|compil|work(ing)? on)", re.I)
_INLINE = re.compile(r"``([^`\n]{3,120})``|`([^`\n]{3,120})`")


def from_docs(repo: Repo, max_files: int = 8) -> list[Command]:
    from hippo.push.brief.conventions import contributor_doc, doc_sections
    from hippo.push.brief.layout import project_names

    own = project_names(repo)
    docs = [f for f in repo.tracked() if DEV_DOC.search(f) and f.count("/") <= 3 and contributor_doc(f)]
    docs.sort(key=lambda f: (f.count("/"), not f.lower().startswith(("contributing", ".github/contributing")), f.lower()))
    out: list[Command] = []
    for rel in docs[:max_files]:
        if repo.expired():
            repo.note(f"deadline: command docs stopped before {rel}")
            break
        for sec in doc_sections(repo, rel):
            if not SETUP_HEADING.search(sec.title) and not rel.lower().split("/")[-1].startswith(
                    ("contributing", "development", "hacking", "building", "testing")):
                continue
            for cand in _doc_command_lines(sec.text):
                kind = classify(cand)
                if kind == "install" and installs_own_package(cand, own):
                    continue
                if kind and _ecosystem_present(repo, cand):
                    out.append(Command(kind, redact(cand), rel, "", DOCS))
    return out


def _package_key(word: str) -> str:
    return re.sub(r"[-_.]+", "-", word.strip("'\"").split("@")[0].split("[")[0].split("=")[0].split("<")[0]
                  .split(">")[0].split("~")[0].lower())


def installs_own_package(cmd: str, own: set[str]) -> bool:
    """`pnpm install ufo` or `pip install --upgrade humanize` in the project's own README installs the
    published release for a user; a contributor installs the checkout (`pnpm install`, `pip install -e .`)."""
    words = cmd.split()
    if not own or len(words) < 3:
        return False
    keys = {_package_key(n) for n in own}
    return any(_package_key(w) in keys for w in words[2:] if not w.startswith("-"))


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
        if repo.expired():
            repo.note("deadline: commands stopped before " + ", ".join(
                f.__name__ for f in EXTRACTORS[EXTRACTORS.index(fn):]))
            break
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


_HOUSEKEEPING = {"release", "prerelease", "publish", "deploy", "version", "bump", "tag", "upload", "clean",
                 "distclean", "authors", "contributors", "help", "default", "stale", "sponsors"}


def housekeeping(cmd: str) -> bool:
    """A maintainer's or the tool's own task (`make publish`, `make help`, `scripts/version-bump.sh`): not
    something a contributor runs while changing the code, so not worth a place among the other tasks."""
    name = cmd.split()[-1].rsplit("/", 1)[-1].rsplit(".", 1)[0] if cmd.split() else ""
    return any(t in _HOUSEKEEPING for t in re.split(r"[^a-z0-9]+", name.lower()) if t)


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
    others = [c for c in cmds if c.kind == "other" and c.rank == RUNNER and not housekeeping(c.cmd)]
    if others:
        line = "- other tasks: " + ", ".join(f"`{c.cmd}`" for c in others[:12]) + (" …" if len(others) > 12 else "")
        if used + len(line) + 1 <= budget:
            out.append(line)
    return "\n".join(out) if len(out) > 1 else ""
