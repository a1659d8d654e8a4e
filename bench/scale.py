"""hippo on a real monorepo at 1k / 10k / 100k files, as a user meets it (issue 21).

    python -m bench.scale --mirrors DIR --sizes 1000,10000,100000 --work /tmp/hippo-scale
    python -m bench.scale --report A/scale.json B/scale.json      # table + plot from finished runs

The trees hold every mirror found under --mirrors; pass --projects (the `mirrors` list of an earlier run's
mono-N.json) to build the same trees after more mirrors arrived.

Each size is a `bench.monorepo` tree (real projects side by side, real replayed history). Every step is the
real CLI in a fresh process, as a user or Claude Code runs it; CPU = user+sys of the process tree (children's
rusage), the primary figure on a shared machine; wall is secondary; the load average is recorded per step.

Steps: keyword phase (`hippo index --no-vectors`, until search works), no-op `hippo index`, a keyword-only
`hippo search`, the vector phase for a fixed wall-clock sample (then Ctrl-C, which commits; the rate is
vectors embedded per CPU-second including the model load, and the full phase is extrapolated from it), the
next real commit indexed incrementally (no server, then with `hippo serve` up), SessionStart and the failure
hook (a real more-itertools traceback) with no server and with one, `hippo search` through the warm server,
index size on disk, peak RSS.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench import monorepo  # noqa: E402

QUERIES = ["where is the retry policy for failed requests", "how are template blocks rendered",
           "parse command line flags", "iterate over chunks of a sequence", "database session commit rollback",
           "escape html in markdown output", "follow symbolic links when walking directories",
           "load configuration from environment variables"]


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def children_cpu() -> tuple[float, int]:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime, ru.ru_maxrss


class Run:
    """One fresh process, timed: wall, CPU of it and its children (once reaped), its peak RSS (MB)."""

    def __init__(self, args: list[str], cwd: Path, env: dict, stdin: bytes | None = None,
                 limit: float | None = None) -> None:
        cpu0, _ = children_cpu()
        load = os.getloadavg()[0]
        t = time.perf_counter()
        proc = subprocess.Popen(args, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, preexec_fn=_default_sigint)
        try:
            out, err = proc.communicate(stdin, timeout=limit)
            self.interrupted = False
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGINT)  # what Ctrl-C does: the run commits what it has and stops
            out, err = proc.communicate(timeout=600)
            self.interrupted = True
        self.wall = time.perf_counter() - t
        self.cpu = children_cpu()[0] - cpu0
        self.rss_mb = peak_rss_of_last_child()
        self.load = (load + os.getloadavg()[0]) / 2
        self.code, self.out, self.err = proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


_max_seen = 0


def _default_sigint() -> None:
    """A bench started in the background (`cmd &`) ignores SIGINT, and so would its children: Ctrl-C must
    reach `hippo index` as it does in a terminal."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def peak_rss_of_last_child() -> float:
    """ru_maxrss of RUSAGE_CHILDREN is the largest child so far; report it when it grew, else 0 (unknown)."""
    global _max_seen
    now = children_cpu()[1]
    grown = now > _max_seen
    _max_seen = max(_max_seen, now)
    return now / 1024 if grown else 0.0


def hippo(*args: str) -> list[str]:
    return [sys.executable, "-m", "hippo", *args]


def dir_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def vectors_done(root: Path) -> tuple[int, int, int]:
    """(chunks with a vector, chunks, texts the model embedded): identical texts (the repeated projects) share
    one cached vector, so the model's rate is counted on the cache's rows."""
    code = ("import sys; from pathlib import Path; from hippo.index.store import Store, Filter\n"
            "s = Store(Path(sys.argv[1]), 384)\n"
            "v = s.vectors()\n"
            "print(s.count(Filter(embedded=True)), s.count(None), v.count_rows() if v is not None else 0)")
    out = subprocess.run([sys.executable, "-c", code, str(root / ".hippo")], capture_output=True, text=True,
                         check=True).stdout.split()
    return int(out[0]), int(out[1]), int(out[2])


def next_commit(root: Path, info: dict) -> str:
    """Apply the oldest pending real commit of the replayed project and commit it; returns its subject."""
    pending = Path(info["pending"])
    patch = sorted(pending.glob("*.patch"))[0]
    msg = patch.with_suffix(".msg").read_bytes()
    monorepo.apply(root, info["prefix"], patch.read_bytes(), msg)
    patch.unlink()
    patch.with_suffix(".msg").unlink()
    return msg.decode().splitlines()[0]


def failure_payload(root: Path, info: dict) -> dict:
    """A real failure: more-itertools' `first([])` raising from the tree's own code."""
    pkg = root / info["prefix"]
    cmd = "python -c 'import more_itertools as m; m.first([])'"
    proc = subprocess.run([sys.executable, "-c", "import more_itertools as m; m.first([])"], cwd=pkg,
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(pkg)})
    assert proc.returncode != 0 and "Traceback" in proc.stderr, proc.stderr
    return {"hook_event_name": "PostToolUseFailure", "tool_name": "Bash", "tool_input": {"command": cmd},
            "error": f"Exit code 1\n{proc.stderr}", "session_id": "", "cwd": str(pkg)}


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def server_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def server_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def measure(root: Path, info: dict, vector_sample: float, runs: int) -> dict:
    base = {**os.environ, "HIPPO_NO_BACKGROUND_INDEX": "1", "PYTHONPATH": str(REPO / "lib")}
    off = {**base, "HIPPO_SERVER": "off"}
    r: dict = {"files_tracked": int(subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True,
                                                   check=True).stdout.count(b"\0")),
               "replayed_commits": info["replayed"], "projects": len(info["projects"])}
    loads = []

    def step(name: str, run: Run) -> Run:
        loads.append(run.load)
        log(f"  {name}: wall {run.wall:.2f} s, cpu {run.cpu:.2f} s, rss {run.rss_mb:.0f} MB, load {run.load:.1f}, "
            f"exit {run.code}")
        if run.code not in (0, 1, 130):
            log(run.err[-2000:])
        return run

    log(f"keyword phase on {root}")
    k = step("keyword", Run(hippo("index", "--no-vectors", "-q"), root, off))
    status = json.loads(subprocess.run(hippo("status", "-f", "json"), cwd=root, env=off, capture_output=True,
                                       text=True, check=True).stdout)
    r.update(files_indexed=status["files"], chunks=status["chunks"], keyword_wall=k.wall, keyword_cpu=k.cpu,
             keyword_rss_mb=k.rss_mb, keyword_load=k.load, index_mb_keyword=dir_bytes(root / ".hippo") / 1e6)
    s = step("search, keyword-only, no server", Run(hippo("search", QUERIES[0], "-f", "json"), root, off))
    r.update(search_cold_wall=s.wall, search_cold_cpu=s.cpu)
    noop = [step("no-op index", Run(hippo("index", "--no-vectors", "-q"), root, off)) for _ in range(3)]
    r.update(noop_wall=statistics.median(x.wall for x in noop), noop_cpu=statistics.median(x.cpu for x in noop))

    log(f"vector phase, sample of {vector_sample:.0f} s wall")
    v = step("vectors", Run(hippo("index", "-q"), root, off, limit=vector_sample))
    done, total, embedded = vectors_done(root)
    r.update(vector_wall=v.wall, vector_cpu=v.cpu, vector_rss_mb=v.rss_mb, vectors_done=done, vector_total=total,
             vectors_embedded=embedded, vector_finished=not v.interrupted and v.code == 0, vector_load=v.load,
             vector_rate_cpu=embedded / max(v.cpu, 1e-9), vector_rate_wall=embedded / max(v.wall, 1e-9))
    # extrapolated as if every chunk needed the model (a repeated project's chunks hit the cache instead)
    r["vector_full_cpu_est"] = total / r["vector_rate_cpu"] if embedded else float("nan")
    r["index_mb"] = dir_bytes(root / ".hippo") / 1e6

    subject = next_commit(root, info)
    i1 = step(f"incremental, no server ({subject[:40]})", Run(hippo("index", "--no-vectors", "-q"), root, off))
    r.update(incr_wall=i1.wall, incr_cpu=i1.cpu, incr_commit=subject)

    fail = failure_payload(root, info)
    start = {"session_id": "bench", "cwd": str(root), "hook_event_name": "SessionStart", "source": "startup"}
    tag = f"{os.getpid()}-{time.time():.0f}"
    cold = {**base, "HIPPO_NO_SERVER": "1", "HIPPO_SERVER": "off"}

    def hook(name: str, event: str, payload: dict, env: dict, n: int, srv: int | None = None) -> dict:
        walls, cpus, chars = [], [], 0
        s0 = server_cpu(srv) if srv else 0.0
        for i in range(n):
            run = Run(hippo("hook", event), root, env, json.dumps({**payload, "session_id": f"{name}-{i}-{tag}"}).encode())
            walls.append(run.wall)
            cpus.append(run.cpu)
            loads.append(run.load)
            chars = len(run.out)
        out = {"p50_ms": statistics.median(walls) * 1000, "p95_ms": pct(walls, 0.95) * 1000,
               "cpu_ms": statistics.median(cpus) * 1000, "chars": chars}
        if srv:
            out["server_cpu_ms"] = (server_cpu(srv) - s0) / n * 1000
        log(f"  {name}: {out}")
        return out

    r["session_start_cold"] = hook("session-start", "session-start", start, cold, runs)
    r["failure_cold"] = hook("failure-cold", "tool-failure", fail, cold, max(3, runs // 2))

    server = subprocess.Popen(hippo("serve", "--root", str(root), "--idle", "900"), cwd=root, env=base,
                              start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        from hippo.surfaces.service.client import request

        t = time.perf_counter()
        while request(root / ".hippo", {"op": "ping"}, timeout=1) is None and time.perf_counter() - t < 300:
            time.sleep(0.2)
        r["server_ready_s"] = time.perf_counter() - t
        r["failure_first_warm"] = hook("failure-first", "tool-failure", fail, base, 1, server.pid)
        r["failure_warm"] = hook("failure-warm", "tool-failure", fail, base, runs, server.pid)
        r["session_start_warm"] = hook("session-start-warm", "session-start", start, base, runs, server.pid)
        walls, cpus = [], []
        s0 = server_cpu(server.pid)
        for q in QUERIES:
            run = step("search (warm)", Run(hippo("search", q, "-f", "json"), root, base))
            walls.append(run.wall)
            cpus.append(run.cpu)
        r["search_warm"] = {"p50_ms": statistics.median(walls) * 1000, "p95_ms": pct(walls, 0.95) * 1000,
                            "cpu_ms": statistics.median(cpus) * 1000,
                            "server_cpu_ms": (server_cpu(server.pid) - s0) / len(QUERIES) * 1000}
        subject = next_commit(root, info)
        s0 = server_cpu(server.pid)
        i2 = step("incremental, server up", Run(hippo("index", "--no-vectors", "-q"), root, base))
        r.update(incr_server_wall=i2.wall, incr_server_cpu=i2.cpu, incr_server_srv_cpu=server_cpu(server.pid) - s0)
        r["server_rss_mb"] = server_rss_mb(server.pid)
    finally:
        server.terminate()
        server.wait(30)
    r["peak_rss_mb"] = max(r["keyword_rss_mb"], r["vector_rss_mb"], r.get("server_rss_mb", 0))
    r["load_mean"] = statistics.mean(loads)
    return r


# --- report -----------------------------------------------------------------------------------
def fmt_s(x: float) -> str:
    return f"{x:,.0f}" if x >= 100 else f"{x:.1f}" if x >= 10 else f"{x:.2f}"


def table(results: list[dict]) -> str:
    cols = cells(results, lambda r: f"{r['files_tracked']:,} files")
    rows: list[tuple[str, list[str]]] = [
        ("files indexed / chunks", cells(results, lambda r: f"{r['files_indexed']:,} / {r['chunks']:,}")),
        ("keyword phase (searchable): CPU s / wall s", cells(results, lambda r: f"{fmt_s(r['keyword_cpu'])} / {fmt_s(r['keyword_wall'])}")),
        ("vector rate: chunks per CPU-s / per wall-s", cells(results, lambda r: f"{r['vector_rate_cpu']:.1f} / {r['vector_rate_wall']:.1f}")),
        ("vector sample: texts embedded; chunks with a vector of total", cells(results, lambda r: f"{r['vectors_embedded']:,}; {r['vectors_done']:,} of {r['vector_total']:,}" + (" (all)" if r["vector_finished"] else ""))),
        ("full vector phase, CPU h (extrapolated)", cells(results, lambda r: f"{r['vector_full_cpu_est'] / 3600:.2f}")),
        ("no-op `hippo index`: CPU s / wall s", cells(results, lambda r: f"{r['noop_cpu']:.2f} / {r['noop_wall']:.2f}")),
        ("1 real commit, no server: CPU s / wall s", cells(results, lambda r: f"{r['incr_cpu']:.2f} / {r['incr_wall']:.2f}")),
        ("1 real commit, server up: CLI CPU s + server CPU s / wall s", cells(results, lambda r: f"{r['incr_server_cpu']:.2f} + {r['incr_server_srv_cpu']:.2f} / {r['incr_server_wall']:.2f}")),
        ("SessionStart, no server: p50 / p95 ms (CPU ms)", cells(results, lambda r: hk(r["session_start_cold"]))),
        ("SessionStart, server up: p50 / p95 ms (CPU ms)", cells(results, lambda r: hk(r["session_start_warm"]))),
        ("failure hook, no server: p50 / p95 ms (CPU ms)", cells(results, lambda r: hk(r["failure_cold"]))),
        ("failure hook, 1st on new server: ms", cells(results, lambda r: f"{r['failure_first_warm']['p50_ms']:,.0f}")),
        ("failure hook, warm: p50 / p95 ms (CPU ms)", cells(results, lambda r: hk(r["failure_warm"]))),
        ("failure hook output chars (cold / warm)", cells(results, lambda r: f"{r['failure_cold']['chars']:,} / {r['failure_warm']['chars']:,}")),
        ("`hippo search`, warm: p50 / p95 ms (CPU ms)", cells(results, lambda r: hk(r["search_warm"]))),
        ("`hippo search`, keyword-only, no server: wall s", cells(results, lambda r: f"{r['search_cold_wall']:.2f}")),
        ("index on disk MB (keyword only / after sample)", cells(results, lambda r: f"{r['index_mb_keyword']:,.0f} / {r['index_mb']:,.0f}")),
        ("peak RSS MB (index / vectors / server)", cells(results, lambda r: f"{r['keyword_rss_mb']:,.0f} / {rss(r['vector_rss_mb'])} / {r['server_rss_mb']:,.0f}")),
        ("load average during the run (mean)", cells(results, lambda r: f"{r['load_mean']:.1f}")),
    ]
    lines = ["| | " + " | ".join(cols) + " |", "|---|" + "---|" * len(cols)]
    lines += [f"| {name} | " + " | ".join(vals) + " |" for name, vals in rows]
    return "\n".join(lines)


def cells(results: list[dict], fmt) -> list[str]:
    """One formatted cell per size; a step that did not run at that size (a partial run) says so."""
    out = []
    for r in results:
        try:
            out.append(fmt(r))
        except (KeyError, TypeError):
            out.append("not measured")
    return out


def rss(mb: float) -> str:
    return f"{mb:,.0f}" if mb else "below the index's"  # ru_maxrss of children only says when a new peak is set


def hk(h: dict) -> str:
    cpu = f"{h['cpu_ms']:,.0f}" + (f" + {h['server_cpu_ms']:,.0f} server" if "server_cpu_ms" in h else "")
    return f"{h['p50_ms']:,.0f} / {h['p95_ms']:,.0f} ({cpu})"


def plot(results: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xs = [r["files_tracked"] for r in results]
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    series = [("keyword phase (CPU s)", lambda r: r["keyword_cpu"], "o"),
              ("full vector phase, extrapolated (CPU s)", lambda r: r["vector_full_cpu_est"], "D"),
              ("1 real commit, no server (CPU s)", lambda r: r["incr_cpu"], "^"),
              ("no-op index (CPU s)", lambda r: r["noop_cpu"], "v"),
              ("SessionStart p50 (wall s)", lambda r: r["session_start_cold"]["p50_ms"] / 1000, "s"),
              ("failure hook warm p50 (wall s)", lambda r: r["failure_warm"]["p50_ms"] / 1000, "x"),
              ("search warm p50 (wall s)", lambda r: r["search_warm"]["p50_ms"] / 1000, "+")]
    for label, value, m in series:
        pts = []
        for x, r in zip(xs, results, strict=True):
            try:
                pts.append((x, value(r)))
            except KeyError:  # a step a partial run did not reach
                pass
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=m, label=label)
    ax.set_xscale("log"), ax.set_yscale("log")
    ax.set_xlabel("tracked files in the monorepo"), ax.set_ylabel("seconds")
    ax.set_title("hippo cost vs repository size (real code, 2 shared cores)")
    ax.grid(True, which="both", alpha=0.3), ax.legend(fontsize=7)
    fig.tight_layout(), fig.savefig(path, dpi=110), plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mirrors", type=Path)
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--work", type=Path, default=Path("/tmp/hippo-scale"))
    ap.add_argument("--vector-sample", type=float, default=180.0, help="wall seconds of vector phase per size")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--reuse", action="store_true", help="use trees already built under --work")
    ap.add_argument("--projects", help="comma-separated owner+name mirrors (default: every one found; a run's "
                                       "mono-N.json lists the ones it used, to build the same trees again)")
    ap.add_argument("--report", type=Path, nargs="+", help="print the table of finished runs' JSON files and plot them")
    ap.add_argument("--plot", type=Path, default=REPO / "docs" / "bench_index_time.png")
    a = ap.parse_args()
    if a.report:
        results = sorted((r for f in a.report for r in json.loads(f.read_text())["results"]), key=lambda r: r["size"])
        print(table(results))
        plot(results, a.plot)
        return
    a.work.mkdir(parents=True, exist_ok=True)
    out = a.work / "scale.json"
    results = json.loads(out.read_text())["results"] if out.exists() else []
    for n in (int(x) for x in a.sizes.split(",")):
        root = a.work / f"mono-{n}"
        meta = a.work / f"mono-{n}.json"
        if not (a.reuse and meta.exists()):
            log(f"building {n}-file monorepo")
            only = a.projects.split(",") if a.projects else None
            meta.write_text(json.dumps(monorepo.build(a.mirrors, n, root, only=only)))
        info = json.loads(meta.read_text())
        res = measure(root, info, a.vector_sample, a.runs)
        res["size"] = n
        res["date"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        results = [x for x in results if x.get("size") != n] + [res]
        results.sort(key=lambda x: x["size"])
        out.write_text(json.dumps({"results": results}, indent=1))
    print(table(results))
    plot(results, a.plot)


if __name__ == "__main__":
    main()
