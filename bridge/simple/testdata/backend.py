#!/usr/bin/env python3
"""A simple-dialect backend on the Python standard library, for the tests
of bridge/simple. It serves the same routes as the Go test backend
(backend_test.go); see there for what each does.

It listens on 127.0.0.1 on a free port, prints "PORT <n>" on stdout, and
exits when its stdin is closed (the test closes it when it ends).
"""

import json
import os
import select
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

lock = threading.Condition()
attempts = {}   # task_id -> number of calls to a counting route
keys = {}       # task_id -> the Idempotency-Key of each POST, in order
arrived = set() # task_ids whose /hang call arrived
gone = set()    # task_ids whose /hang call's connection closed


def dialect(task_id, status, output=None, error=None):
    return {"task_id": task_id, "status": status, "output": output, "error": error}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def send(self, code, body, ctype="application/json"):
        if not isinstance(body, (bytes, bytearray)):
            body = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        u = urlparse(self.path)
        q = parse_qs(u.query)
        tid = q.get("task_id", [""])[0]
        with lock:
            if u.path == "/attempts":
                n = attempts.get(tid, 0)
                body = {"n": n}
            elif u.path == "/keys":
                body = {"keys": list(keys.get(tid, []))}
            elif u.path == "/wait-arrived":
                lock.wait_for(lambda: tid in arrived)
                body = {"arrived": True}
            elif u.path == "/wait-gone":
                lock.wait_for(lambda: tid in gone)
                body = {"gone": True}
            else:
                body = None
        if body is None:
            self.send(404, {"error": "no such route"})
        else:
            self.send(200, body)

    def do_POST(self):
        u = urlparse(self.path)
        q = parse_qs(u.query)
        n = int(self.headers.get("Content-Length", "0"))
        req = json.loads(self.rfile.read(n))
        tid = req.get("task_id", "")
        inp = req.get("input")
        p = u.path
        with lock:
            keys.setdefault(tid, []).append(self.headers.get("Idempotency-Key", ""))
        if p in ("/flaky", "/always", "/ask"):
            with lock:
                attempts[tid] = attempts.get(tid, 0) + 1
                count = attempts[tid]
        if p == "/echo":
            self.send(200, dialect(tid, "success", inp))
        elif p == "/string":
            self.send(200, dialect(tid, "success", "plain text"))
        elif p == "/null":
            self.send(200, dialect(tid, "success"))
        elif p == "/error":
            self.send(200, dialect(tid, "error", error="backend says no"))
        elif p == "/error-empty":
            self.send(200, dialect(tid, "error"))
        elif p == "/notjson":
            self.send(200, b"hello", "text/plain")
        elif p == "/nostatus":
            self.send(200, {"task_id": tid, "output": {}})
        elif p == "/badstatus":
            self.send(200, dialect(tid, "done"))
        elif p == "/badoutput":
            self.send(200, dialect(tid, "success", [1, 2]))
        elif p == "/wrongtask":
            self.send(200, dialect("someone-else", "success"))
        elif p == "/dupkey":
            self.send(200, b'{"status":"success","status":"error"}')
        elif p == "/http500":
            self.send(500, dialect(tid, "error", error="exploded"))
        elif p == "/http400":
            self.send(400, b"bad input", "text/plain")
        elif p == "/flaky":
            fail = int(q.get("fail", ["2"])[0])
            code = int(q.get("code", ["503"])[0])
            if count <= fail:
                self.send(code, b"busy", "text/plain")
            else:
                self.send(200, dialect(tid, "success", {"attempts": count}))
        elif p == "/always":
            code = int(q.get("code", ["500"])[0])
            self.send(code, b"nope", "text/plain")
        elif p == "/headers":
            h = self.headers
            self.send(200, dialect(tid, "success", {
                "authorization": h.get("Authorization", ""),
                "api_key": h.get("X-Api-Key", ""),
                "custom": h.get("X-Custom", ""),
                "idempotency_key": h.get("Idempotency-Key", ""),
                "content_type": h.get("Content-Type", ""),
            }))
        elif p == "/ask":
            if count == 1:
                self.send(200, dialect(tid, "input_required", error="What is your name?"))
            else:
                name = inp.get("text", "") if isinstance(inp, dict) else ""
                self.send(200, dialect(tid, "success", {"text": "Hello, " + name + "!"}))
        elif p == "/big":
            self.send(200, dialect(tid, "success", "x" * 5000))
        elif p == "/hang":
            self.hang(tid)
        else:
            self.send(404, {"error": "no such route"})

    def hang(self, tid):
        # Never answer; note when the client closes the connection.
        with lock:
            arrived.add(tid)
            lock.notify_all()
        conn = self.connection
        while True:
            r, _, _ = select.select([conn], [], [], 0.05)
            if r:
                try:
                    data = conn.recv(1, socket.MSG_PEEK)
                except OSError:
                    data = b""
                if not data:
                    break
        with lock:
            gone.add(tid)
            lock.notify_all()
        self.close_connection = True


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # A client that closes its connection is not news.
        if isinstance(sys.exc_info()[1], (ConnectionError, BrokenPipeError)):
            return
        super().handle_error(request, client_address)


def main():
    srv = Server(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    print("PORT %d" % srv.server_address[1], flush=True)
    sys.stdin.read()
    os._exit(0)


if __name__ == "__main__":
    main()
