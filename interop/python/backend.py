#!/usr/bin/env python3
"""A simple-dialect HTTP service on the Python standard library only, for
interop/go/gateway_test.go (TestGateway): the kind of service an `http`
agent of `a2abridge serve` fronts.

Routes:

  POST /echo   {"task_id": "...", "input": {...}}
               -> 200 {"task_id": "...", "status": "success",
                       "output": <input as sent>, "error": null}
               a body that is not such an object -> 400, status "error"
  GET  /calls  every POST /echo received so far, in order:
               {"calls": [{"task_id", "input", "idempotency_key"}, ...]}
  anything else -> 404

Usage: python3 backend.py [--port 0] [--host 127.0.0.1]
Once listening it prints `peer listening on http://HOST:PORT` on stdout
(the line the interop tests wait for, as from the other peers). SIGINT or
SIGTERM stops it with exit status 0.
"""

import argparse
import json
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

lock = threading.Lock()
calls = []  # the POST /echo calls received, in order


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        sys.stderr.write("backend: %s\n" % (fmt % args))

    def send(self, code, body):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path == "/calls":
            with lock:
                self.send(200, {"calls": list(calls)})
        else:
            self.send(404, {"error": "no such route"})

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or "0")
        raw = self.rfile.read(n)
        if self.path != "/echo":
            self.send(404, {"error": "no such route"})
            return
        try:
            req = json.loads(raw)
        except ValueError as e:
            self.send(400, {"task_id": "", "status": "error", "output": None,
                            "error": "the body is not JSON: %s" % e})
            return
        if not isinstance(req, dict) or not isinstance(req.get("task_id"), str) or "input" not in req:
            self.send(400, {"task_id": "", "status": "error", "output": None,
                            "error": 'want {"task_id": "...", "input": ...}'})
            return
        with lock:
            calls.append({
                "task_id": req["task_id"],
                "input": req["input"],
                "idempotency_key": self.headers.get("Idempotency-Key", ""),
            })
        self.send(200, {"task_id": req["task_id"], "status": "success",
                        "output": req["input"], "error": None})


class Server(ThreadingHTTPServer):
    daemon_threads = True


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--host", default="127.0.0.1")
    args = ap.parse_args()
    # Block the stop signals before any thread starts, then wait for one
    # in the main thread: a clean exit (status 0) whatever the server does.
    stop = {signal.SIGINT, signal.SIGTERM}
    signal.pthread_sigmask(signal.SIG_BLOCK, stop)
    srv = Server((args.host, args.port), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    host, port = srv.server_address[:2]
    print("peer listening on http://%s:%d" % (host, port), flush=True)
    signal.sigwait(stop)
    srv.server_close()
    sys.exit(0)


if __name__ == "__main__":
    main()
