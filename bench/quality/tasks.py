"""Deterministic retrieval tasks generated from a corpus itself: error, intent, spec, irrelevant.

Every task is (kind, query, gold path, gold start/end line). Nothing is random: candidates are
ordered by a hash of (path, line), so the same corpus always yields the same JSONL.

- error: failure output for a raise/throw site, with its message filled in. The output is a test
  runner report, an app-level traceback or a log line: the frames name the caller's files, never
  the gold file, so finding the raise site takes retrieval, not path lookup. Gold = the raise line(s).
- intent: a docstring's (or a leading comment's / npm command description's) first sentence with
  identifiers removed, phrased as a developer request. Gold = the documented unit.
- spec: a paraphrase-like question from a docs section's first sentence: heading words, names and stop
  words removed, synonyms/singulars swapped in, no 4-word run copied from the section. Gold = section.
- irrelevant: environment failures that should inject nothing (see IRRELEVANT).
"""
from __future__ import annotations

import ast
import hashlib
import json
import re
from dataclasses import asdict, dataclass
from pathlib import Path

MIN_MESSAGE_CHARS = 14
NAME_LIKE = re.compile(r"`[^`]*`|:\w+:`[^`]*`|\b\w*[_.]\w*\b|\b[a-z]+[A-Z]\w*\b|\b[A-Z][a-z]+[A-Z]\w*\b|\w+\(\)")
TEST_PATH = re.compile(r"(^|/)(tests?|examples?|__tests__)/|(^|/)test_[^/]*$|\.test\.[a-z]+$")


@dataclass
class Task:
    kind: str
    query: str
    path: str
    start: int
    end: int
    source: str = "synthesized"  # or "real-run"
    command: str = ""

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)


def _key(*parts: object) -> str:
    return hashlib.sha1("\0".join(map(str, parts)).encode()).hexdigest()


def _pick(items: list[Task], limit: int) -> list[Task]:
    items = sorted(items, key=lambda t: _key(t.kind, t.path, t.start))
    return items[:limit]


# --- message filling --------------------------------------------------------------------------
_FILL = ["'config.yaml'", "3", "'build'", "'--verbose'", "'user'", "42", "'main'", "'a.txt'"]


def _filler(seed: str, i: int) -> str:
    return _FILL[int(_key(seed, i)[:6], 16) % len(_FILL)]


def _py_message(node: ast.AST, seed: str) -> str | None:
    """Best-effort literal rendering of an exception's first argument, values filled in."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        out = []
        for i, v in enumerate(node.values):
            if isinstance(v, ast.Constant):
                out.append(str(v.value))
            else:  # only `{x!r}` prints quotes; `'{x}'` already has them in the literal
                fill = _filler(seed, i)
                out.append(fill if getattr(v, "conversion", -1) == ord("r") else fill.strip("'"))
        return "".join(out)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):  # "lit " + name: the code's own join
        left, right = _py_message(node.left, seed), _py_message(node.right, seed + "+")
        if left is None and right is None:
            return None
        return (left if left is not None else _filler(seed, 90).strip("'")) + \
            (right if right is not None else _filler(seed, 91).strip("'"))
    if isinstance(node, ast.Call):
        fn = node.func
        if isinstance(fn, ast.Name) and fn.id in ("_", "gettext", "ngettext") and node.args:
            return _py_message(node.args[0], seed)
        if isinstance(fn, ast.Attribute) and fn.attr == "format":
            base = _py_message(fn.value, seed)
            if base is None:
                return None
            n = iter(range(100))
            return re.sub(r"\{[^{}]*\}", lambda m: _filler(seed, next(n)).strip("'"), base)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        base = _py_message(node.left, seed)
        if base is None:
            return None
        n = iter(range(100))
        return re.sub(r"%(\([^)]*\))?[sdrif]",
                      lambda m: _filler(seed, next(n)) if m.group().endswith("r") else _filler(seed, next(n)).strip("'"),
                      base)
    return None


def _exc_name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


# --- failure output shapes (frames name the caller's code, never the gold file) --------------
def render_failure(etype: str, msg: str, lang: str, seed: str) -> tuple[str, str]:
    """(command, output) in one of three shapes picked by `seed`."""
    shape = int(_key(seed)[:4], 16) % 3
    n = int(_key(seed, "n")[:4], 16) % 90 + 10
    msg_line = msg.strip().splitlines()[0] if msg.strip() else msg
    if lang == "python":
        if shape == 0:
            cmd = f"pytest tests/test_cli_usage.py -q -k case_{n}"
            out = (f"F\n=================================== FAILURES ===================================\n"
                   f"_________________________________ test_case_{n} _________________________________\n\n"
                   f"    def test_case_{n}():\n>       run_app(['--profile', 'dev'])\n\n"
                   f"tests/test_cli_usage.py:{n}: \n"
                   f"E   {etype}: {msg_line}\n"
                   f"=========================== short test summary info ============================\n"
                   f"FAILED tests/test_cli_usage.py::test_case_{n} - {etype}: {msg_line}\n1 failed in 0.31s")
        elif shape == 1:
            cmd = "python app/main.py --profile dev"
            out = (f"Traceback (most recent call last):\n  File \"app/main.py\", line {n}, in <module>\n    main()\n"
                   f"  File \"app/main.py\", line {n - 7}, in main\n    run_app(sys.argv[1:])\n{etype}: {msg_line}")
        else:
            cmd = "python -m app.worker"
            out = (f"2024-03-02 10:15:07,123 INFO app.worker: starting job {n}\n"
                   f"2024-03-02 10:15:07,411 ERROR app.worker: job {n} failed: {etype}: {msg_line}")
    else:
        if shape == 0:
            cmd = f"node --test test/cli-{n}.test.js"
            out = (f"not ok 1 - cli case {n}\n  ---\n  error: '{msg_line}'\n  code: 'ERR_TEST_FAILURE'\n"
                   f"  name: '{etype}'\n  stack: |-\n    TestContext.<anonymous> (test/cli-{n}.test.js:{n}:11)\n  ...\n"
                   f"# tests 1\n# fail 1")
        elif shape == 1:
            cmd = "node scripts/release.js"
            out = (f"{etype}: {msg_line}\n    at main (/srv/app/scripts/release.js:{n}:9)\n"
                   f"    at Object.<anonymous> (/srv/app/scripts/release.js:{n + 30}:1)\n"
                   f"    at Module._compile (node:internal/modules/cjs/loader:1358:14)\n\nNode.js v20.18.0")
        else:
            cmd = "npm run deploy"
            out = (f"[deploy] step {n} failed\n{etype}: {msg_line}\n"
                   f"    at runStep (/srv/app/scripts/deploy.js:{n}:15)")
    return cmd, f"Exit code 1\n{out}"


# --- python ---------------------------------------------------------------------------------
def _python_trees(root: Path, files: list[str]):
    """(path, parsed module) for every non-test Python file that parses."""
    for rel in files:
        if not rel.endswith(".py") or TEST_PATH.search(rel):
            continue
        try:
            yield rel, ast.parse((root / rel).read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError):
            continue


def python_errors(root: Path, files: list[str]) -> list[Task]:
    tasks = []
    for rel, tree in _python_trees(root, files):
        for node in ast.walk(tree):
            if not isinstance(node, ast.Raise) or not isinstance(node.exc, ast.Call) or not node.exc.args:
                continue
            etype = _exc_name(node.exc)
            seed = f"{rel}:{node.lineno}"
            msg = _py_message(node.exc.args[0], seed)
            if not etype or not msg or len(msg.strip()) < MIN_MESSAGE_CHARS:
                continue
            cmd, out = render_failure(etype, msg, "python", seed)
            tasks.append(Task("error", out, rel, node.lineno, node.end_lineno or node.lineno, command=cmd))
    return tasks


def _first_sentence(text: str) -> str:
    text = text.strip().split("\n\n")[0]
    text = " ".join(text.split())
    m = re.match(r"(.+?[.!?])(\s|$)", text)
    return m.group(1) if m else text


def strip_names(sentence: str, names: set[str]) -> str:
    """Drop identifiers (the unit's own name, anything code-shaped) so the query is plain language."""
    s = NAME_LIKE.sub(" ", sentence)
    for n in sorted(names, key=len, reverse=True):
        if len(n) >= 3:
            s = re.sub(r"\b" + re.escape(n) + r"\b", " ", s, flags=re.IGNORECASE)
    s = re.sub(r"\s+([,.;:])", r"\1", " ".join(s.split()))
    return s.strip(" ,;:")


_INTENT_LEADS = ("Where is the code that handles this: {s}", "I need to change how we {s_lower}", "{s}")


def _intent_query(sentence: str, seed: str) -> str:
    lead = _INTENT_LEADS[int(_key(seed)[:4], 16) % len(_INTENT_LEADS)]
    low = sentence[0].lower() + sentence[1:] if sentence else sentence
    return lead.format(s=sentence, s_lower=low.rstrip("."))


def python_intents(root: Path, files: list[str]) -> list[Task]:
    tasks = []
    for rel, tree in _python_trees(root, files):
        for node in ast.walk(tree):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            if node.name.startswith("__"):
                continue
            doc = ast.get_docstring(node)
            if not doc:
                continue
            sentence = strip_names(_first_sentence(doc), {node.name, *node.name.split("_")})
            if len(sentence.split()) < 5:
                continue
            start = min([node.lineno] + [d.lineno for d in node.decorator_list])
            tasks.append(Task("intent", _intent_query(sentence, f"{rel}:{start}"), rel, start, node.end_lineno or start))
    return tasks


# --- javascript -------------------------------------------------------------------------------
_THROW = re.compile(r"\bthrow\s+(?:Object\.assign\(\s*)?new\s+(\w*Error)\s*\(\s*(.*)$")
_STR = re.compile(r"'((?:[^'\\]|\\.)*)'|\"((?:[^\"\\]|\\.)*)\"|`((?:[^`\\]|\\.)*)`")


_JS_VALUE = re.compile(r"[A-Za-z_$][\w$]*(?:\s*(?:\.\s*[A-Za-z_$][\w$]*|\[[^\]]*\]))*")


_JS_ESCAPES = {"n": "\n", "t": "\t", "r": ""}


def _balanced(arg: str, pos: int) -> int:
    """End of the bracket group opening at `pos` (or len(arg) if it never closes on the line)."""
    depth = 0
    for i in range(pos, len(arg)):
        depth += {"(": 1, "[": 1, ")": -1, "]": -1}.get(arg[i], 0)
        if depth == 0:
            return i + 1
    return len(arg)


def _js_value_end(arg: str, pos: int) -> int | None:
    """End of one concatenated value (`x`, `a.b[c]`, `f(x)`, `(cond ? 'a' : 'b')`) at `pos`, or None."""
    if arg.startswith("(", pos):
        return _balanced(arg, pos)
    m = _JS_VALUE.match(arg, pos)
    if not m:
        return None
    end = m.end()
    while arg.startswith("(", end):  # call: `name(args)`, possibly chained
        end = _balanced(arg, end)
        nxt = _JS_VALUE.match(arg, end + 1) if arg.startswith(".", end) else None
        if nxt:
            end = nxt.end()
    return end


def _js_message(arg: str, seed: str) -> str | None:
    """Render `'lit' + x + \"lit\"` or a template literal with ${} filled in; None if no literal.

    Only what the code really concatenates becomes text: a value is filled in only where it follows a
    `+` (or sits inside `${}`); the closing `)`, a `,` or anything else ends the message.
    """
    parts, i, found = [], 0, False
    counter = iter(range(100, 200))
    arg = arg.strip()
    pos, want_operand = 0, True
    while pos < len(arg):
        ws = re.match(r"\s*", arg[pos:]).end()
        pos += ws
        if pos >= len(arg):
            break
        if not want_operand:
            if arg[pos] != "+":
                break
            pos, want_operand = pos + 1, True
            continue
        m = _STR.match(arg, pos)
        if m:
            found = True
            lit = m.group(1) if m.group(1) is not None else (m.group(2) if m.group(2) is not None else m.group(3))
            if m.group(3) is not None:
                lit = re.sub(r"\$\{[^}]*\}", lambda _m: _filler(seed, next(counter)).strip("'"), lit)
            parts.append(re.sub(r"\\(.)", lambda e: _JS_ESCAPES.get(e.group(1), e.group(1)), lit))
            pos, want_operand = m.end(), False
            continue
        end = _js_value_end(arg, pos)
        if end is None:
            break
        parts.append(_filler(seed, i).strip("'"))
        i += 1
        pos, want_operand = end, False
    return "".join(parts) if found else None


def js_errors(root: Path, files: list[str]) -> list[Task]:
    tasks = []
    for rel in files:
        if not rel.endswith((".js", ".cjs", ".mjs", ".ts")) or TEST_PATH.search(rel):
            continue
        lines = (root / rel).read_text(encoding="utf-8", errors="replace").split("\n")
        for n, line in enumerate(lines, start=1):
            m = _THROW.search(line)
            if not m:
                continue
            arg, nxt = m.group(2), n
            while (not arg.strip() or arg.rstrip().endswith("+")) and nxt < len(lines) and nxt - n < 4:
                arg = f"{arg.rstrip()} {lines[nxt].strip()}"  # `new Error(` or `'...' +` continues below
                nxt += 1
            seed = f"{rel}:{n}"
            msg = _js_message(arg, seed)
            if not msg or len(msg.strip()) < MIN_MESSAGE_CHARS:
                continue
            end = n
            depth = line.count("(") - line.count(")")
            while depth > 0 and end < len(lines) and end - n < 6:
                depth += lines[end].count("(") - lines[end].count(")")
                end += 1
            cmd, out = render_failure(m.group(1), msg, "javascript", seed)
            tasks.append(Task("error", out, rel, n, end, command=cmd))
    return tasks


_JS_UNIT = re.compile(r"^\s*(?:export\s+)?(?:async\s+)?(?:function\s*\*?\s*(\w+)|(?:const|let)\s+(\w+)\s*=\s*(?:async\s*)?"
                      r"(?:function|\([^)]*\)\s*=>|\w+\s*=>)|(?:static\s+)?(?:async\s+)?(\w+)\s*\([^)]*\)\s*\{|class\s+(\w+))")


def _block_end(lines: list[str], start: int) -> int:
    """1-based last line of the brace block opening on line `start` (bounded scan)."""
    depth, opened = 0, False
    for i in range(start - 1, min(len(lines), start + 400)):
        depth += lines[i].count("{") - lines[i].count("}")
        opened = opened or "{" in lines[i]
        if opened and depth <= 0:
            return i + 1
    return start


def js_intents(root: Path, files: list[str]) -> list[Task]:
    tasks = []
    for rel in files:
        if not rel.endswith((".js", ".cjs", ".mjs", ".ts")) or TEST_PATH.search(rel):
            continue
        lines = (root / rel).read_text(encoding="utf-8", errors="replace").split("\n")
        for n, line in enumerate(lines, start=1):
            d = re.match(r"\s*static description = (['\"`])(.+)\1", line)
            if d:
                cls = next((i for i in range(n - 1, 0, -1) if re.match(r"\s*class\s", lines[i - 1])), 1)
                sentence = strip_names(d.group(2), set())
                if len(sentence.split()) >= 2:
                    q = f"which command should I change to alter how npm can {sentence[0].lower() + sentence[1:]}"
                    tasks.append(Task("intent", q, rel, cls, _block_end(lines, cls)))
                continue
            m = _JS_UNIT.match(line)
            if not m or n < 2 or not lines[n - 2].strip().startswith(("//", "*")):
                continue
            name = next(g for g in m.groups() if g)
            if name in ("if", "for", "while", "switch", "catch", "function", "return"):
                continue
            comment, i = [], n - 2
            while i >= 0 and lines[i].strip().startswith(("//", "*", "/*")):
                comment.insert(0, re.sub(r"^\s*(//+|/\*+|\*+/?)\s?", "", lines[i]))
                i -= 1
            sentence = strip_names(_first_sentence(" ".join(comment)), {name})
            if len(sentence.split()) < 5:
                continue
            tasks.append(Task("intent", _intent_query(sentence, f"{rel}:{n}"), rel, n, _block_end(lines, n)))
    return tasks


# --- docs -------------------------------------------------------------------------------------
_RST_UNDER = re.compile(r"^([=\-~^\"'`#*+])\1{2,}\s*$")
_MD_HEAD = re.compile(r"^(#{1,4})\s+(.+?)\s*#*\s*$")


def _sections(lines: list[str], is_md: bool) -> list[tuple[str, int, int]]:
    """(heading, first line, last line) of each section, 1-based."""
    heads = []
    for i, line in enumerate(lines):
        if is_md:
            m = _MD_HEAD.match(line)
            if m:
                heads.append((m.group(2), i + 1))
        elif i + 1 < len(lines) and line.strip() and _RST_UNDER.match(lines[i + 1]) \
                and len(lines[i + 1].strip()) >= len(line.strip()) - 1 and not _RST_UNDER.match(line):
            heads.append((line.strip(), i + 1))
    last = len(lines)
    while last > 0 and not lines[last - 1].strip():
        last -= 1
    out = []
    for j, (title, start) in enumerate(heads):
        end = heads[j + 1][1] - 1 if j + 1 < len(heads) else last
        out.append((title, start, end))
    return out


# Paraphrase material for spec questions: common doc words -> a plain synonym (own small list).
_SYNONYMS = dict(pair.split(":") for pair in """create:make creating:making created:made remove:delete removes:deletes
removed:deleted delete:remove display:show displays:shows show:display shows:displays print:output prints:outputs
run:execute runs:executes running:executing execute:run executed:run allows:lets allow:let allowing:letting
useful:handy handy:useful feature:capability ability:capability accept:take accepts:takes accepted:taken
parameters:params parameter:param arguments:args argument:arg default:fallback automatically:implicitly
available:offered support:handle supports:handles supported:handled provide:offer provides:offers provided:offered
called:invoked call:invoke calls:invokes invoked:called configuration:config directory:folder folder:directory
error:failure errors:failures write:author writing:authoring written:authored start:begin starts:begins
several:multiple multiple:several example:sample examples:samples behavior:behaviour behaviour:behavior
information:info environment:env variables:vars variable:var options:flags option:flag returns:yields
return:yield needs:requires need:require required:mandatory possible:feasible simple:easy easy:simple
common:typical usually:typically often:frequently specify:give specified:given specifies:gives get:fetch
gets:fetches find:locate finds:locates check:verify checks:verifies update:refresh updates:refreshes
change:modify changes:modifies used:employed uses:employs using:employing published:released""".split())
_SPEC_STOP = set("""a an the and or of to in on for is are was were be been being it its this that these those
with as at by from not no do does did what where which who whom how when why i we you they he she my our your
their me us can could should would will shall may might must have has had there here then than so if else but
about into out up down over under again once also just only very more most some any all each every other such
own same both either neither one two new let lets like well even still yet via per often""".split())
_SPEC_LEADS = ("what should I know about {w}?", "where do the docs explain {w}?", "{w}: what does the documentation say?",
               "is there a guide on {w}?", "explain {w}")


def _spec_word(w: str) -> str:
    """A synonym, else the singular: the question should not repeat the section's exact word forms."""
    low = w.lower()
    if low in _SYNONYMS:
        return _SYNONYMS[low]
    if len(low) >= 5 and low.endswith("ies"):
        return low[:-3] + "y"
    if len(low) >= 5 and low.endswith("s") and not low.endswith(("ss", "us", "is")):
        return low[:-1]
    return low


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def shares_run(query: str, text: str, n: int = 4) -> bool:
    """Whether the query copies any n-word run of `text` (case and punctuation ignored)."""
    body = " " + " ".join(_words(text)) + " "
    q = _words(query)
    return any(" " + " ".join(q[i:i + n]) + " " in body for i in range(len(q) - n + 1))


def spec_question(sentence: str, heading: str, section_text: str, seed: str) -> str | None:
    """A paraphrase-like question for a docs section, or None if too little survives.

    Heading words and stop words are dropped, the rest take a synonym or their singular form, and no
    4-word run of the section survives (the word in the middle of a copied run is dropped).
    """
    head = set(_words(heading)) | {_spec_word(w) for w in _words(heading)}
    words = [_spec_word(w) for w in re.findall(r"[A-Za-z][A-Za-z0-9'-]*", sentence)]
    words = [p for w in words if "'" not in w for p in _words(w)]
    words = [w for w in words if len(w) > 2 and w not in _SPEC_STOP and w not in head][:8]
    lead = _SPEC_LEADS[int(_key(seed)[:4], 16) % len(_SPEC_LEADS)]
    while len(words) >= 3:
        q = lead.format(w=" ".join(words))
        qw = _words(q)
        hit = next((i for i in range(len(qw) - 3) if shares_run(" ".join(qw[i:i + 4]), section_text)), None)
        if hit is None:
            return q
        drop = " ".join(qw[hit:hit + 4]).split()[2]
        if drop not in words:  # the run is in the template itself; try the plain word list
            if lead == "{w}":
                return None
            lead = "{w}"
            continue
        words.remove(drop)
    return None


def spec_tasks(root: Path, files: list[str]) -> list[Task]:
    """Doc-section questions; sections whose opening sentence repeats elsewhere (boilerplate) are left out."""
    tasks, seen = [], {}
    for rel in files:
        if not rel.endswith((".md", ".rst")) or "CHANGES" in rel:
            continue
        lines = (root / rel).read_text(encoding="utf-8", errors="replace").split("\n")
        title = ""
        fm = re.search(r"^title:\s*(.+)$", "\n".join(lines[:10]), re.M)
        if fm:
            title = fm.group(1).strip()
        for heading, start, end in _sections(lines, rel.endswith(".md")):
            if end - start < 3:
                continue
            body = [ln for ln in lines[start + 1:end] if ln.strip() and not _RST_UNDER.match(ln)
                    and not ln.lstrip().startswith(("..", ":", "```", "|", "<", "-", "*", "$", ">>>", "#"))
                    and not ln.startswith(("    ", "\t"))]
            sentence = strip_names(_first_sentence(" ".join(body[:4])), set())
            if len(sentence.split()) < 6:
                continue
            head = strip_names(heading.strip("`*"), set()) or title
            q = spec_question(sentence, f"{head} {heading}", "\n".join(lines[start - 1:end]), f"{rel}:{start}")
            if q is None:
                continue
            seen[sentence] = seen.get(sentence, 0) + 1
            tasks.append(Task("spec", q, rel, start, end, source=sentence))
    unique = [t for t in tasks if seen[t.source] == 1]
    for t in unique:
        t.source = "synthesized"
    return unique


# --- irrelevant failures (the gate should inject nothing) -------------------------------------
IRRELEVANT = [
    ("pnpmx install", "Exit code 127\nbash: line 1: pnpmx: command not found"),
    ("rg TODO", "Exit code 127\n/bin/bash: rg: command not found"),
    ("curl -sSf https://example.com/install.sh", "Exit code 6\ncurl: (6) Could not resolve host: example.com"),
    ("git push origin main", "Exit code 128\nfatal: unable to access 'https://github.com/acme/app.git/': Could not resolve host: github.com"),
    ("pip install requests==99.0", "Exit code 1\nERROR: Could not find a version that satisfies the requirement requests==99.0 (from versions: none)\nERROR: No matching distribution found for requests==99.0"),
    ("npm install left-pad-xyz", "Exit code 1\nnpm error code E404\nnpm error 404 Not Found - GET https://registry.npmjs.org/left-pad-xyz - Not found"),
    ("cat /etc/shadow", "Exit code 1\ncat: /etc/shadow: Permission denied"),
    ("./deploy.sh", "Exit code 126\nbash: ./deploy.sh: Permission denied"),
    ("rm -rf /usr/lib/foo", "Exit code 1\nrm: cannot remove '/usr/lib/foo': Operation not permitted"),
    ("git checkout feature/x", "Exit code 1\nerror: pathspec 'feature/x' did not match any file(s) known to git"),
    ("git commit -m wip", "Exit code 1\nOn branch main\nnothing to commit, working tree clean"),
    ("ls build/", "Exit code 2\nls: cannot access 'build/': No such file or directory"),
    ("cd frontend", "Exit code 1\nbash: line 1: cd: frontend: No such file or directory"),
    ("make deploy", "Exit code 2\nmake: *** No rule to make target 'deploy'.  Stop."),
    ("docker compose up", "Exit code 1\nCannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?"),
    ("ssh deploy@10.0.0.5", "Exit code 255\nssh: connect to host 10.0.0.5 port 22: Connection timed out"),
    ("python train.py", "Exit code 137\nKilled"),
    ("sleep 999", "Exit code 124\n"),
    ("tar xzf data.tgz", "Exit code 2\ntar: data.tgz: Cannot open: No such file or directory\ntar: Error is not recoverable: exiting now"),
    ("wget https://files.example.org/big.bin", "Exit code 4\n--2024-03-02--  https://files.example.org/big.bin\nResolving files.example.org... failed: Temporary failure in name resolution.\nwget: unable to resolve host address 'files.example.org'"),
    ("apt-get install libfoo-dev", "Exit code 100\nE: Could not open lock file /var/lib/dpkg/lock-frontend - open (13: Permission denied)"),
    ("gh pr create", "Exit code 4\nTo get started with GitHub CLI, please run:  gh auth login"),
    ("kubectl get pods", "Exit code 1\nThe connection to the server localhost:8080 was refused - did you specify the right host or port?"),
    ("df -h /mnt/data && cp big.iso /mnt/data", "Exit code 1\ncp: error writing '/mnt/data/big.iso': No space left on device"),
]


def irrelevant_tasks() -> list[Task]:
    return [Task("irrelevant", out, "", 0, 0, command=cmd) for cmd, out in IRRELEVANT]


def generate(root: Path, files: list[str], language: str, limit: int) -> dict[str, list[Task]]:
    """All task kinds for one corpus, `limit` per kind (deterministic subset)."""
    if language == "python":
        errors, intents = python_errors(root, files), python_intents(root, files)
    else:
        errors, intents = js_errors(root, files), js_intents(root, files)
    return {"error": _pick(errors, limit), "intent": _pick(intents, limit),
            "spec": _pick(spec_tasks(root, files), limit), "irrelevant": irrelevant_tasks()}


def write_jsonl(tasks: list[Task], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(t.to_json() + "\n" for t in tasks), encoding="utf-8")
