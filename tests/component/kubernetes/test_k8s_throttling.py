"""A 429 with Retry-After is retried by the client, as client-go does; other errors are not."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator

import pytest
from kubernetes import client as k8s

from activities.kubernetes import raw
from activities.kubernetes.client import THROTTLE_RETRIES, _configured
from activities.kubernetes.errors import Throttled, Unavailable


class Script(http.server.BaseHTTPRequestHandler):
    answers: list[int] = []
    seen = 0
    retry_after = True

    def do_GET(self) -> None:
        type(self).seen += 1
        code = self.answers.pop(0) if self.answers else 200
        body = json.dumps({"kind": "Namespace", "metadata": {"name": "default"}}).encode()
        if code != 200:
            body = json.dumps({"kind": "Status", "code": code, "message": "busy"}).encode()
        self.send_response(code)
        if code == 429 and type(self).retry_after:
            self.send_header("Retry-After", "0")
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Script)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    Script.seen = 0
    Script.retry_after = True
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def read_namespace(host: str) -> dict[str, object]:
    kube = _configured(k8s.Configuration(host=host), 2)
    try:
        return raw.call(kube.core.read_namespace, "default")
    finally:
        kube.close()


def test_throttling_is_retried_then_reported(server: str) -> None:
    Script.answers = [429, 429]
    assert read_namespace(server)["metadata"] == {"name": "default"}
    assert Script.seen == 3
    Script.seen = 0
    Script.answers = [429] * (THROTTLE_RETRIES + 1)
    with pytest.raises(Throttled):
        read_namespace(server)
    assert Script.seen == THROTTLE_RETRIES + 1


def test_other_failures_are_not_retried(server: str) -> None:
    Script.answers = [503]
    with pytest.raises(Unavailable):
        read_namespace(server)
    assert Script.seen == 1
    Script.seen = 0
    Script.retry_after = False  # what a PDB's refusal of an eviction looks like
    Script.answers = [429]
    with pytest.raises(Throttled):
        read_namespace(server)
    assert Script.seen == 1
