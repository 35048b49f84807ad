"""``/healthz``, ``/readyz`` and ``/metrics`` on one small HTTP server thread."""

from __future__ import annotations

import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from worker.metrics import REGISTRY


class HealthServer:
    def __init__(self, port: int, ready: Callable[[], bool], host: str = "0.0.0.0") -> None:
        ready_check = ready

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path == "/healthz":
                    self._send(200, b"ok\n", "text/plain")
                elif self.path == "/readyz":
                    ok = ready_check()
                    self._send(200 if ok else 503, b"ok\n" if ok else b"not ready\n", "text/plain")
                elif self.path == "/metrics":
                    self._send(200, generate_latest(REGISTRY), CONTENT_TYPE_LATEST)
                else:
                    self._send(404, b"not found\n", "text/plain")

            def _send(self, code: int, body: bytes, content_type: str) -> None:
                self.send_response(code)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                return

        self.server = ThreadingHTTPServer((host, port), Handler)
        self.port = int(self.server.server_address[1])
        self._thread = threading.Thread(
            target=self.server.serve_forever, name="health", daemon=True
        )

    def start(self) -> HealthServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
