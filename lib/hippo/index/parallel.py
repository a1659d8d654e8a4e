"""Chunking in worker processes while the main process writes (issue 21: keyword-searchable sooner).

A big first index spends about half of its keyword-phase CPU turning files into rows (tree-sitter chunks, the
code graph, secret redaction, identifier text) and the other half writing them (LanceDB, FTS, state.json), all
in one process. With two or more cores, workers compute the rows of the next batches while the main process
writes the current one: a pipeline, batches still written in order. Small runs stay in-process: a worker costs
an interpreter start-up, more than a few hundred files take to chunk.

Why not multiprocessing / ProcessPoolExecutor: their spawn and forkserver children start as `python -c ...` in
the parent's working directory, which is the repository being indexed, so a cloned repository's
`multiprocessing.py` would run (checked on Python 3.11). Workers here start the way every hippo child does
(runtime.hippo_argv: -P, the neutral directory) and talk over their own stdin/stdout in length-prefixed pickle
frames: hippo's own processes at both ends. A worker imports what `rows_for_file` needs (no lancedb, pyarrow
or numpy).

A worker never outlives the run: it exits as soon as its stdin closes, which the parent does when it is done,
interrupted or killed (the kernel closes a dead process's pipes). It ignores SIGINT: Ctrl-C reaches the whole
process group, and the parent unwinds and ends its workers itself.
"""
from __future__ import annotations

import os
import pickle
import struct
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Generator, Iterator, Sequence
from pathlib import Path
from queue import SimpleQueue
from typing import Protocol

# A run chunks in workers from this many changed files on (HIPPO_PARALLEL_MIN_FILES overrides it; tests force
# the parallel path with 1). Measured in docs/benchmarks.md (issue 21, "chunking in worker processes").
PARALLEL_MIN_FILES = 1000
# The main process's share (writing: ~40% of the keyword phase's CPU) bounds the gain: with more workers than
# this they only wait for it.
MAX_WORKERS = 3
AHEAD = 3  # batches a worker holds: one in work, two queued so it never idles while the main process chunks one
OWN_AHEAD = 4  # batches the main process may have chunked ahead of the one it writes next
WORKER_MODULE = "hippo.index.parallel"  # tests swap in a module that wraps this one's `serve`
_FRAME = struct.Struct(">Q")

# What the worker returns per file: its rows, or (exception name, message) when it could not be chunked.
FileResult = list[dict] | tuple[str, str]
Batch = Sequence[tuple[str, bytes]]


class Batches(Protocol):
    """The batches of a run, each taken once by its number (the indexer reads a batch's files only then)."""

    def __len__(self) -> int: ...

    def __getitem__(self, n: int) -> Batch: ...


def file_rows(rel: str, data: bytes, model_id: str) -> FileResult:
    """One file's rows, or why it could not be chunked: one file must never end the run."""
    from hippo.index.indexer import rows_for_file

    try:
        return rows_for_file(rel, data, model_id)
    except Exception as exc:  # noqa: BLE001 - reported by the indexer, the file is skipped
        return type(exc).__name__, str(exc)


def worker_count(files: int, threads: int = 0) -> int:
    """How many chunk workers a run of `files` changed files gets; 0 chunks in-process.

    `threads` is the `threads` setting (0 = all cores): one core stays with the main process's writes, so a
    single core (or threads=1) never starts a worker."""
    try:
        threshold = int(os.environ.get("HIPPO_PARALLEL_MIN_FILES") or PARALLEL_MIN_FILES)
    except ValueError:
        threshold = PARALLEL_MIN_FILES
    if files < max(threshold, 1):
        return 0
    cores = threads or os.cpu_count() or 1
    return max(0, min(cores - 1, MAX_WORKERS))


def batch_results(batches: Batches, model_id: str, workers: int,
                  log_dir: Path | None) -> Generator[list, None, None]:
    """Each batch's per-file results (`file_rows`), in batch order: from `workers` processes when that is
    more than 0, in-process otherwise. Each batch is taken (`batches[n]`) once, when it is handed out, and
    again only when a dead worker's batches are chunked here. A pool that cannot start, or a worker that
    dies, is logged and the batches not yet returned are chunked here instead. Close it
    (contextlib.closing) to end the workers at once when the caller stops early."""
    done = 0
    if workers and batches:
        try:
            with _Pool(min(workers, len(batches)), log_dir) as pool:
                for result in pool.results(batches, model_id):
                    yield result
                    done += 1
            return
        except (OSError, EOFError, pickle.UnpicklingError) as exc:
            from hippo.core.runtime import log

            log(log_dir, f"chunk workers unavailable ({type(exc).__name__}: {exc}); chunking in-process from "
                         f"batch {done + 1} of {len(batches)}")
    for n in range(done, len(batches)):
        yield [file_rows(rel, data, model_id) for rel, data in batches[n]]


class _Worker:
    """One worker process. A thread here reads its answers as they come, so the worker never waits for this
    process to read, and `ready()` can ask whether an answer is in without blocking."""

    def __init__(self, log_dir: Path | None) -> None:
        from hippo.core.runtime import child_env, module_argv, neutral_cwd

        err = _log_fd(log_dir)
        try:
            self.proc = subprocess.Popen(module_argv(WORKER_MODULE), cwd=neutral_cwd(), env=child_env(None),
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, close_fds=True)
        finally:
            if err != subprocess.DEVNULL:
                os.close(err)
        self.held: deque[int] = deque()  # numbers of the batches sent and not yet answered, oldest first
        self.answers: SimpleQueue = SimpleQueue()  # their frames; None once the worker is gone
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        try:
            while (frame := _read_frame(self.proc.stdout)) is not None:
                self.answers.put(frame)
        except (OSError, ValueError):
            pass
        self.answers.put(None)

    def send(self, number: int, batch: Batch, model_id: str) -> None:
        assert self.proc.stdin is not None
        frame = pickle.dumps((model_id, list(batch)), protocol=pickle.HIGHEST_PROTOCOL)
        self.proc.stdin.write(_FRAME.pack(len(frame)) + frame)
        self.proc.stdin.flush()
        self.held.append(number)

    def ready(self) -> bool:
        return not self.answers.empty()

    def receive(self) -> tuple[int, list]:
        """(batch number, its results) of the oldest batch it holds; waits for it."""
        frame = self.answers.get()
        if frame is None:
            raise EOFError(f"chunk worker {self.proc.pid} ended (exit status {self.proc.wait()})")
        return self.held.popleft(), pickle.loads(frame)

    def stop(self) -> None:
        """Close its stdin (it exits at once, mid-batch or not) and reap it; kill it if it lingers."""
        try:
            if self.proc.stdin is not None:
                self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.reader.join(timeout=5)  # the dead worker's stdout is at its end: the thread is done
        if self.proc.stdout is not None and not self.reader.is_alive():
            self.proc.stdout.close()


class _Pool:
    """Worker processes, each kept AHEAD batches deep, batches handed out in order."""

    def __init__(self, n: int, log_dir: Path | None) -> None:
        self.workers: list[_Worker] = []
        try:
            for _ in range(n):
                self.workers.append(_Worker(log_dir))
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> _Pool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for w in self.workers:
            w.stop()
        self.workers = []

    def results(self, batches: Batches, model_id: str) -> Iterator[list]:
        """Each batch's results, in batch order. While the one wanted next is still being chunked, this
        process chunks a batch nobody holds yet instead of waiting (at most OWN_AHEAD of them kept), so on
        two cores one worker and the main process share the chunking whatever the split of the work is."""
        done: dict[int, list] = {}
        free = 0  # batches[free:] are handed to no one yet
        for want in range(len(batches)):
            while want not in done:
                for w in self.workers:
                    while len(w.held) < AHEAD and free < len(batches):
                        w.send(free, batches[free], model_id)
                        free += 1
                # Batches go out in order and come back in order: the one wanted is its holder's oldest.
                holder = next(w for w in self.workers if w.held and w.held[0] == want)
                if holder.ready() or free == len(batches) or len(done) >= OWN_AHEAD:
                    number, result = holder.receive()
                    done[number] = result
                else:
                    done[free] = [file_rows(rel, data, model_id) for rel, data in batches[free]]
                    free += 1
            yield done.pop(want)


def _log_fd(log_dir: Path | None):
    """The index's hippo.log for a worker's stderr (a crash's traceback lands there), or DEVNULL."""
    if log_dir is None:
        return subprocess.DEVNULL
    from hippo.core.runtime import log_fd

    try:
        return log_fd(log_dir)
    except OSError:
        return subprocess.DEVNULL


def _read_frame(stream) -> bytes | None:
    """One length-prefixed frame, or None at end of stream (a short frame counts as the end)."""
    head = stream.read(_FRAME.size)
    if len(head) < _FRAME.size:
        return None
    (size,) = _FRAME.unpack(head)
    body = stream.read(size)
    return body if len(body) == size else None


def serve() -> None:
    """The worker: read (model_id, [(path, bytes), ...]) frames, answer each with its files' results.

    The next frame is read in a thread while this one is chunked and answered: the parent may be writing
    batch k+1 while this worker writes batch k's rows, and two processes each blocked on a full pipe would
    wait for ever. End of stdin ends the process at once; pending work is nobody's any more."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    frames_in = sys.stdin.buffer
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # anything printed by accident goes to the log, not into the frames
    queue: SimpleQueue = SimpleQueue()

    def read() -> None:
        while (frame := _read_frame(frames_in)) is not None:
            queue.put(frame)
        os._exit(0)

    threading.Thread(target=read, daemon=True).start()
    while True:
        model_id, files = pickle.loads(queue.get())
        frame = pickle.dumps([file_rows(rel, data, model_id) for rel, data in files],
                             protocol=pickle.HIGHEST_PROTOCOL)
        try:
            out.write(_FRAME.pack(len(frame)) + frame)
            out.flush()
        except BrokenPipeError:  # the parent is gone
            os._exit(0)


if __name__ == "__main__":
    from hippo.index.parallel import serve as _serve  # by its real name: pickled references must resolve

    _serve()
