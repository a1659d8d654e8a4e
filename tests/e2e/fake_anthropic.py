"""A scripted stand-in for the Anthropic Messages API, plus a driver that runs one command against it.

Test double for the *model*, not part of hippo. The real `claude` binary talks to it through
`ANTHROPIC_BASE_URL`; it answers agent-loop requests from a script (text or tool_use turns, as
SSE) and records every request body, so tests can assert on exactly what the model would read.

Run as a script (inside a fresh network namespace, where only loopback exists):

    python fake_anthropic.py --script turns.json --record out.json -- claude -p "..."

brings `lo` up if it is down, serves on 127.0.0.1:<free port>, runs the command with
ANTHROPIC_BASE_URL pointing at it, and writes {rc, stdout, stderr, requests} to out.json.
Stdlib only, so it runs under any Python the tests use.
"""
from __future__ import annotations

import argparse
import fcntl
import itertools
import json
import os
import socket
import struct
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

_ids = itertools.count(1)
_NOT_FOUND = b'{"type":"error","error":{"type":"not_found_error","message":"stand-in"}}'


def _sse(event: str, data: dict) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def _blocks(turn: dict) -> list[dict]:
    """Turn a script entry into Messages API content blocks."""
    blocks: list[dict] = []
    if turn.get("text"):
        blocks.append({"type": "text", "text": turn["text"]})
    for use in turn.get("tool_uses", []) + ([turn["tool_use"]] if "tool_use" in turn else []):
        blocks.append({"type": "tool_use", "id": f"toolu_fake{next(_ids):04d}",
                       "name": use["name"], "input": use.get("input", {})})
    return blocks or [{"type": "text", "text": "Done."}]


def message_json(turn: dict, model: str) -> dict:
    """A complete (non-streamed) Messages API response for one scripted turn."""
    blocks = _blocks(turn)
    stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
    return {"id": f"msg_fake{next(_ids):04d}", "type": "message", "role": "assistant",
            "model": model, "content": blocks, "stop_reason": stop, "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5}}


def message_sse(turn: dict, model: str) -> bytes:
    """The same turn as the event stream `stream: true` clients expect."""
    msg = message_json(turn, model)
    head = dict(msg, content=[], stop_reason=None)
    out = [_sse("message_start", {"type": "message_start", "message": head})]
    for i, block in enumerate(msg["content"]):
        if block["type"] == "text":
            start, delta = dict(block, text=""), {"type": "text_delta", "text": block["text"]}
        else:
            start = dict(block, input={})
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        out.append(_sse("content_block_start", {"type": "content_block_start", "index": i,
                                                "content_block": start}))
        out.append(_sse("content_block_delta", {"type": "content_block_delta", "index": i,
                                                "delta": delta}))
        out.append(_sse("content_block_stop", {"type": "content_block_stop", "index": i}))
    out.append(_sse("message_delta", {"type": "message_delta",
                                      "delta": {"stop_reason": msg["stop_reason"], "stop_sequence": None},
                                      "usage": {"output_tokens": 5}}))
    out.append(_sse("message_stop", {"type": "message_stop"}))
    return b"".join(out)


class FakeAnthropic:
    """Loopback server. Agent-loop requests (those offering tools) consume the script in order;
    anything else (titles, token counts, side queries) gets a harmless canned answer."""

    def __init__(self, script: list[dict], host: str = "127.0.0.1"):
        self.script = list(script)
        self.requests: list[dict] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer((host, 0), self._handler())
        self._server.daemon_threads = True
        self.url = f"http://{host}:{self._server.server_address[1]}"

    def _next_turn(self, body: dict) -> dict:
        with self._lock:
            if body.get("tools") and self.script:
                return self.script.pop(0)
            return {"text": "Done."}

    def _handler(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # keep the driver's stderr for the client's output
                pass

            def _send(self, code: int, ctype: str, payload: bytes) -> None:
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_GET(self):  # noqa: N802 - http.server naming
                with fake._lock:
                    fake.requests.append({"method": "GET", "path": self.path, "body": None})
                self._send(404, "application/json", _NOT_FOUND)

            do_HEAD = do_GET  # noqa: N815

            def do_POST(self):  # noqa: N802
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"_unparsed": raw.decode("utf-8", "replace")}
                with fake._lock:
                    fake.requests.append({"method": "POST", "path": self.path, "body": body})
                path = self.path.split("?")[0]
                if path.endswith("/count_tokens"):
                    self._send(200, "application/json", b'{"input_tokens": 100}')
                    return
                if not path.endswith("/v1/messages"):
                    self._send(404, "application/json", _NOT_FOUND)
                    return
                turn = fake._next_turn(body)
                model = body.get("model", "claude-stand-in")
                if body.get("stream"):
                    self._send(200, "text/event-stream", message_sse(turn, model))
                else:
                    self._send(200, "application/json", json.dumps(message_json(turn, model)).encode())

        return Handler

    def __enter__(self) -> FakeAnthropic:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()


def _text(data: bytes | str | None) -> str:
    return data.decode("utf-8", "replace") if isinstance(data, bytes) else (data or "")


def bring_up_loopback() -> None:
    """A new network namespace starts with `lo` down; raise it without needing iproute2."""
    siocgifflags, siocsifflags, iff_up = 0x8913, 0x8914, 0x1
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        req = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(s.fileno(), siocgifflags, req))[1]
        if not flags & iff_up:
            fcntl.ioctl(s.fileno(), siocsifflags, struct.pack("16sH14x", b"lo", flags | iff_up))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--script", help="JSON list of scripted assistant turns")
    ap.add_argument("--record", required=True, help="where to write {rc, stdout, stderr, requests}")
    ap.add_argument("--timeout", type=float, default=180)
    ap.add_argument("--cwd", default=None)
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    args = ap.parse_args(argv)
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    script = json.load(open(args.script, encoding="utf-8")) if args.script else []
    try:
        bring_up_loopback()
    except OSError:
        pass  # not in a fresh namespace (or not allowed): loopback is up already
    with FakeAnthropic(script) as fake:
        env = dict(os.environ, ANTHROPIC_BASE_URL=fake.url)
        try:
            proc = subprocess.run(cmd, cwd=args.cwd, env=env, stdin=subprocess.DEVNULL,
                                  capture_output=True, text=True, timeout=args.timeout)
            rc, out, err = proc.returncode, proc.stdout, proc.stderr
        except subprocess.TimeoutExpired as exc:
            rc = -999
            out, err = _text(exc.stdout), _text(exc.stderr)
            err += f"\n[stand-in driver] timed out after {args.timeout}s"
        record = {"rc": rc, "stdout": out, "stderr": err, "requests": fake.requests,
                  "unused_turns": fake.script}
    with open(args.record, "w", encoding="utf-8") as fh:
        json.dump(record, fh)
    return 0


if __name__ == "__main__":
    sys.exit(main())
