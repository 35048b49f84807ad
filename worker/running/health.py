"""``/healthz``, ``/readyz`` and ``/metrics`` on one small HTTP server thread, and the probe
that makes ``/readyz`` follow whether Temporal can be reached."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from worker.running import sdk_metrics
from worker.running.metrics import REGISTRY

log = logging.getLogger(__name__)


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
                    # Joinery's karpenter_* series, then the Temporal SDK's temporal_* ones.
                    body = generate_latest(REGISTRY) + sdk_metrics.scrape_if_started()
                    self._send(200, body, CONTENT_TYPE_LATEST)
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


class TemporalProbe:
    """Asks Temporal's frontend for its health every ``interval``; ``reachable`` says the last
    answer came within ``timeout``.

    The SDK reconnects on its own after a server restart or a cut connection, but while it
    cannot, no workflow or activity task reaches this worker: a load balancer or an operator
    should see it as not ready (``/readyz`` 503), and ready again as soon as Temporal answers.
    """

    def __init__(
        self,
        check: Callable[[timedelta], object],
        *,
        interval: float = 1.0,
        timeout: float = 2.0,
    ) -> None:
        self._check = check
        self.interval = interval
        self.timeout = timeout
        self.reachable = True

    async def run(self) -> None:
        while True:
            ok = await self.probe()
            if ok != self.reachable:
                log.warning("Temporal %s", "reachable again" if ok else "unreachable")
            self.reachable = ok
            await asyncio.sleep(self.interval)

    async def probe(self) -> bool:
        try:
            answer = self._check(timedelta(seconds=self.timeout))
            if asyncio.iscoroutine(answer):
                answer = await asyncio.wait_for(answer, self.timeout + 1)
            return answer is not False
        except Exception:  # any failure to answer means not reachable
            return False
