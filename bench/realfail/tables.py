"""issue 23's tables: every system's **shown** (a code span overlaps the fix function) and **named** (a
span or a pointer does), fix commits and mutants apart, tuning vs held-out split, and per repository."""
from __future__ import annotations

import statistics

from bench.realfail.corpora import runner_of

SYSTEMS = ("hippo", "test-callees", "bm25-windows", "traceback±20")
LABELS = {"hippo": "hippo", "test-callees": "test's direct callees", "bm25-windows": "BM25 windows, same chars",
          "traceback±20": "traceback frames ±20"}


def _chars(r: dict, system: str) -> int:
    return r["hippo"]["context_chars"] if system == "hippo" else r[system]["chars"]


def _rate(rows: list[dict], system: str, key: str) -> str:
    if not rows:
        return "–"
    return f"{sum(1 for r in rows if r[system].get(key)) / len(rows):.2f}"


def figures(rows: list[dict], env: list[dict], system: str) -> dict:
    hidden = [r for r in rows if not r["shown_by_frames"]]
    chars = [_chars(r, system) for r in rows]
    return {"cases": len(rows), "hidden": len(hidden), "file": _rate(rows, system, "file"),
            "shown": _rate(rows, system, "function"), "named": _rate(rows, system, "named"),
            "hidden_shown": _rate(hidden, system, "function"),
            "median_chars": int(statistics.median(chars)) if chars else 0,
            "env": sum(1 for r in env if _chars(r, system))}


def split_table(records: list[dict], kind: str) -> list[str]:
    env = [r for r in records if r["kind"] == "env"]
    out = [f"| {kind} | split | cases | fix file | shown | named | shown, not in frames (n) | median chars "
           f"| env injections (n={len(env)}) |", "|---|---|---|---|---|---|---|---|---|"]
    for split in ("tune", "heldout", "all"):
        rows = [r for r in records if r["kind"] == kind and (split == "all" or r.get("split") == split)]
        env_rows = [r for r in env if split == "all" or r.get("split") == split]
        for system in SYSTEMS:
            f = figures(rows, env_rows, system)
            out.append(f"| {LABELS[system]} | {split} | {f['cases']} | {f['file']} | {f['shown']} | {f['named']} | "
                       f"{f['hidden_shown']} ({f['hidden']}) | {f['median_chars']:,} | {f['env']} |")
    return out


def repo_table(records: list[dict], kind: str) -> list[str]:
    """Per repository: every system's shown / named, and for hippo also fix file, shown where the frames
    do not show the function, and median characters."""
    rows_all = [r for r in records if r["kind"] == kind]
    head = ("| repo | runner | cases (held-out) | not in frames | hippo fix file | hippo shown / named | "
            "hippo shown, not in frames | hippo median chars | "
            + " | ".join(f"{LABELS[s]} shown / named" for s in SYSTEMS[1:]) + " |")
    out = [head, "|---|---|---|---|---|---|---|---|" + "---|" * (len(SYSTEMS) - 1)]
    for repo in sorted({r["repo"] for r in rows_all}):
        rows = [r for r in rows_all if r["repo"] == repo]
        f = figures(rows, [], "hippo")
        runners = ", ".join(sorted({runner_of(r["command"]) for r in rows}))
        held = sum(1 for r in rows if r.get("split") == "heldout")
        cells = [f"{_rate(rows, s, 'function')} / {_rate(rows, s, 'named')}" for s in SYSTEMS[1:]]
        out.append(f"| {repo} | {runners} | {len(rows)} ({held}) | {f['hidden']} | {f['file']} | {f['shown']} / "
                   f"{f['named']} | {f['hidden_shown']} | {f['median_chars']:,} | " + " | ".join(cells) + " |")
    return out


def runner_table(records: list[dict], kind: str) -> list[str]:
    """Per test runner (its output format is what the diagnosis has to read): shown / named per system."""
    rows_all = [r for r in records if r["kind"] == kind]
    out = ["| runner | cases | silent (hippo) | " + " | ".join(f"{LABELS[s]} shown / named" for s in SYSTEMS) + " |",
           "|---|---|---|" + "---|" * len(SYSTEMS)]
    for runner in sorted({runner_of(r["command"]) for r in rows_all}):
        rows = [r for r in rows_all if runner_of(r["command"]) == runner]
        silent = sum(1 for r in rows if not r["hippo"]["injected"])
        cells = [f"{_rate(rows, s, 'function')} / {_rate(rows, s, 'named')}" for s in SYSTEMS]
        out.append(f"| {runner} | {len(rows)} | {silent} | " + " | ".join(cells) + " |")
    return out


def render(records: list[dict]) -> str:
    parts = ["Fix commits:", "", *split_table(records, "fix"), "", "Mutants:", "", *split_table(records, "mutation"),
             "", "Fix commits per repository (all splits):", "", *repo_table(records, "fix"),
             "", "Fix commits per runner (all splits):", "", *runner_table(records, "fix")]
    if any(r["kind"] == "mutation" for r in records):
        parts += ["", "Mutants per repository:", "", *repo_table(records, "mutation")]
    return "\n".join(parts) + "\n"


def corpus_table(cases: list[dict], split_of) -> str:
    """The corpus table of docs/benchmarks.md: per repository its language, runners and case counts."""
    from bench.realfail.corpora import CORPORA

    rows = {c.repo: {"lang": "Python" if c.language == "python" else "JS/TS", "runners": set(), "fix": 0,
                     "mutation": 0, "env": 0, "held": 0} for c in CORPORA}
    for c in cases:
        r = rows.setdefault(c["repo"], {"lang": c["language"], "runners": set(), "fix": 0, "mutation": 0, "env": 0,
                                        "held": 0})
        r[c["kind"]] += 1
        if c["kind"] == "fix":
            r["runners"].add(runner_of(c["command"]))
            r["held"] += split_of(c["id"]) == "heldout"
    out = ["| repo | language | runner | fix cases (held-out) | mutants | environment cases |",
           "|---|---|---|---|---|---|"]
    tot = {"fix": 0, "mutation": 0, "env": 0, "held": 0}
    for repo, r in rows.items():
        if not (r["fix"] or r["mutation"]):
            continue
        out.append(f"| {repo} | {r['lang']} | {', '.join(sorted(r['runners']))} | {r['fix']} ({r['held']}) | "
                   f"{r['mutation'] or ''} | {r['env'] or ''} |")
        for k in tot:
            tot[k] += r[k]
    repos = sum(1 for r in rows.values() if r["fix"])
    out.append(f"| **{repos} repositories** | | | **{tot['fix']} ({tot['held']})** | {tot['mutation']} | {tot['env']} |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    from bench.realfail.run import load_cases, split_of

    print(corpus_table(load_cases(), split_of))
