"""AWS faults injected at the boto3 layer, in front of moto (which never fails on its own).

A :class:`FaultInjector` attaches to boto3 clients through botocore's ``before-send`` event,
so the whole client stack above the wire runs as in production: botocore's retry handler,
its backoff and jitter, error parsing, and Joinery's classification. Faults, as AWS produces
them:

* ``throttle`` — HTTP 400 with the service's throttling code (EC2 ``RequestLimitExceeded``,
  IAM ``Throttling``, JSON services ``ThrottlingException``), in the service's error format;
* ``5xx`` — HTTP 500/503 (``InternalError`` / ``ServiceUnavailable``);
* ``timeout`` — the request is never answered (a read timeout);
* ``reset`` — the connection is closed before an answer;
* ``lost`` — the request *reaches moto and takes effect*, then the answer is lost (a read
  timeout): the case where only idempotency (client tokens, find-before-create) prevents a
  second resource.

Faults come from a per-operation queue (:meth:`FaultInjector.inject`) or at random with a
rate (seeded, so a failing run can be replayed). Every attempt is recorded.
"""

from __future__ import annotations

import json
import random
import threading
from collections import Counter, defaultdict, deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from botocore.awsrequest import AWSPreparedRequest, AWSResponse
from botocore.exceptions import ConnectionClosedError, ReadTimeoutError
from botocore.httpsession import URLLib3Session

THROTTLE, SERVER_ERROR, TIMEOUT, RESET, LOST = "throttle", "5xx", "timeout", "reset", "lost"
KINDS = (THROTTLE, SERVER_ERROR, TIMEOUT, RESET, LOST)
_THROTTLE_CODE = {"ec2": "RequestLimitExceeded", "query": "Throttling"}


class WireBody:
    """The ``raw`` AWSResponse reads an answer's bytes from."""

    def __init__(self, data: bytes) -> None:
        self._data = data

    def stream(self, **_: Any) -> Iterator[bytes]:
        yield self._data


def error_response(protocol: str, status: int, code: str, url: str) -> AWSResponse:
    """An error answer in the wire format of ``protocol`` (what botocore's parsers expect)."""
    message = f"injected fault: {code}"
    headers = {"x-amzn-RequestId": "injected"}
    if protocol == "ec2":
        body = (
            f"<Response><Errors><Error><Code>{code}</Code><Message>{message}</Message></Error>"
            "</Errors><RequestID>injected</RequestID></Response>"
        )
        headers["Content-Type"] = "text/xml"
    elif protocol == "query":
        body = (
            f"<ErrorResponse><Error><Type>Sender</Type><Code>{code}</Code>"
            f"<Message>{message}</Message></Error><RequestId>injected</RequestId></ErrorResponse>"
        )
        headers["Content-Type"] = "text/xml"
    elif protocol == "rest-json":
        body = json.dumps({"message": message})
        headers["x-amzn-ErrorType"] = code
        headers["Content-Type"] = "application/json"
    else:  # json
        body = json.dumps({"__type": code, "message": message})
        headers["Content-Type"] = "application/x-amz-json-1.1"
    return AWSResponse(url, status, headers, WireBody(body.encode()))


@dataclass
class FaultInjector:
    """Fails boto3 calls on purpose. ``rate`` of random faults drawn from ``kinds``."""

    rate: float = 0.0
    kinds: tuple[str, ...] = KINDS
    seed: int = 0
    only: frozenset[str] = frozenset()  # operation names eligible for random faults; all if empty
    # When set, the first attempt of every call fails with this fault (its retries do not).
    every_first_attempt: str | None = None
    attempts: Counter[str] = field(default_factory=Counter)
    injected: list[tuple[str, str]] = field(default_factory=list)
    _queued: dict[str, deque[str]] = field(default_factory=lambda: defaultdict(deque))
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _random: random.Random = field(init=False)
    _http: URLLib3Session = field(default_factory=URLLib3Session)

    def __post_init__(self) -> None:
        self._random = random.Random(self.seed)

    def attach(self, *clients: Any) -> FaultInjector:
        for client in clients:
            if client is None:
                continue
            protocol = client.meta.service_model.protocol
            service = client.meta.service_model.service_id.hyphenize()

            def handler(
                request: AWSPreparedRequest,
                event_name: str,
                _protocol: str = protocol,
                _service: str = service,
                **_: Any,
            ) -> AWSResponse | None:
                return self._on_send(_service, _protocol, event_name.rsplit(".", 1)[-1], request)

            client.meta.events.register(f"before-send.{service}", handler)
        return self

    def inject(self, operation: str, *kinds: str) -> None:
        """The next ``len(kinds)`` attempts of ``operation`` fail with these faults, in order."""
        with self._lock:
            self._queued[operation].extend(kinds)

    def clear(self) -> None:
        with self._lock:
            self._queued.clear()
            self.rate = 0.0

    def operations(self) -> set[str]:
        """Every operation attempted so far (``service:Operation``)."""
        return set(self.attempts)

    # -- the hook ------------------------------------------------------------------------------
    def _next_fault(self, operation: str) -> str | None:
        with self._lock:
            queue = self._queued.get(operation)
            if queue:
                return queue.popleft()
            eligible = not self.only or operation in self.only
            if self.rate and eligible and self._random.random() < self.rate:
                return self._random.choice(self.kinds)
        return None

    def _on_send(
        self, service: str, protocol: str, operation: str, request: AWSPreparedRequest
    ) -> AWSResponse | None:
        key = f"{service}:{operation}"
        with self._lock:
            self.attempts[key] += 1
        fault = self._next_fault(operation)
        first = "attempt=1;" in str(request.headers.get("amz-sdk-request", ""))
        if fault is None and first and self.every_first_attempt:
            fault = self.every_first_attempt
        if fault is None:
            return None
        with self._lock:
            self.injected.append((key, fault))
        if fault == THROTTLE:
            code = _THROTTLE_CODE.get(protocol, "ThrottlingException")
            return error_response(protocol, 400, code, request.url)
        if fault == SERVER_ERROR:
            code = "InternalError" if protocol == "ec2" else "ServiceUnavailable"
            return error_response(protocol, 500 if protocol == "ec2" else 503, code, request.url)
        if fault == RESET:
            raise ConnectionClosedError(endpoint_url=request.url, request=request)
        if fault == LOST:
            self._http.send(request)  # it happens, but the caller never hears of it
        raise ReadTimeoutError(endpoint_url=request.url, request=request, error="injected")
