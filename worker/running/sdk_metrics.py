"""The Temporal SDK's own metrics (``temporal_*``: requests to the server, workflow and
activity task latencies, poller and slot counts, sticky cache) on the worker's ``/metrics``.

The SDK's core records them in Rust and can serve them in Prometheus's text format itself;
it is told to do so on a free loopback port, never exposed, and the health server appends
what that endpoint says to Joinery's own registry, so one scrape of ``/metrics`` carries
both (the names do not overlap: Joinery's are ``karpenter_*``/``joinery_*``). One runtime
per process, made on first use, for every client the worker connects.

``RELIED_ON`` names the SDK series Joinery's dashboard reads; a test scrapes a live worker
to prove the SDK still exports each of them.
"""

from __future__ import annotations

import logging
import socket
import threading
import urllib.request

from temporalio.runtime import PrometheusConfig, Runtime, TelemetryConfig

log = logging.getLogger(__name__)

# SDK series the Grafana dashboard (deploy/grafana) uses; checked against a live scrape.
RELIED_ON = frozenset(
    {
        "temporal_request",
        "temporal_request_latency_bucket",
        "temporal_workflow_task_schedule_to_start_latency_bucket",
        "temporal_workflow_task_execution_latency_bucket",
        "temporal_activity_schedule_to_start_latency_bucket",
        "temporal_activity_execution_latency_bucket",
        "temporal_activity_execution_latency_count",
        "temporal_worker_task_slots_available",
        "temporal_num_pollers",
        "temporal_sticky_cache_size",
    }
)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class SdkMetrics:
    def __init__(self, port: int | None = None) -> None:
        self.address = f"127.0.0.1:{port or _free_port()}"
        self.runtime = Runtime(
            telemetry=TelemetryConfig(metrics=PrometheusConfig(bind_address=self.address))
        )

    def scrape(self, timeout: float = 2.0) -> bytes:
        """The SDK's exposition, or nothing when it cannot be read (never fails /metrics)."""
        try:
            with urllib.request.urlopen(f"http://{self.address}/metrics", timeout=timeout) as r:
                body: bytes = r.read()
        except OSError as exc:
            log.debug("Temporal SDK metrics unreadable: %s", exc)
            return b""
        return body if body.endswith(b"\n") or not body else body + b"\n"


_shared: SdkMetrics | None = None
_lock = threading.Lock()


def shared() -> SdkMetrics:
    """This process's SDK metrics runtime, made on first use."""
    global _shared
    with _lock:
        if _shared is None:
            _shared = SdkMetrics()
        return _shared


def runtime() -> Runtime | None:
    """The shared runtime for a client to connect through; None (the SDK's default runtime,
    no metrics) when its endpoint cannot be set up: metrics are never worth not running."""
    try:
        return shared().runtime
    except Exception as exc:
        log.warning("Temporal SDK metrics off: %s", exc)
        return None


def scrape_if_started() -> bytes:
    """What ``/metrics`` appends: the SDK's series once a client uses the shared runtime."""
    return _shared.scrape() if _shared is not None else b""
