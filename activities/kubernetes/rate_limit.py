"""A client-side limit on Kubernetes API requests: Karpenter's KUBE_CLIENT_QPS / _BURST.

client-go throttles every request of a controller with a token bucket so one busy process
cannot flood the API server; the Python client has no such limiter, so this one wraps the
``ApiClient``'s request method (every call, watches included, passes through it). Threads
that find the bucket empty sleep until their token is due, in arrival order of reservation.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from kubernetes import client


class TokenBucket:
    """``rate`` tokens a second, at most ``burst`` saved up; ``take`` blocks until one is due."""

    def __init__(
        self,
        rate: float,
        burst: int,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if rate <= 0:
            raise ValueError("rate must be more than 0")
        self.rate = rate
        self.burst = max(1, burst)
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self._tokens = float(self.burst)
        self._at = clock()

    def reserve(self) -> float:
        """Take a token (possibly one not yet earned) and return how long to wait for it."""
        with self._lock:
            now = self._clock()
            self._tokens = min(self.burst, self._tokens + (now - self._at) * self.rate)
            self._at = now
            self._tokens -= 1
            return 0.0 if self._tokens >= 0 else -self._tokens / self.rate

    def take(self) -> None:
        wait = self.reserve()
        if wait > 0:
            self._sleep(wait)


def limit(api_client: client.ApiClient, qps: float, burst: int) -> TokenBucket | None:
    """Throttle every request of ``api_client`` to ``qps`` (bursts of ``burst``, the QPS when
    0); no limit when ``qps`` is 0. Returns the bucket (for tests and metrics)."""
    if qps <= 0:
        return None
    bucket = TokenBucket(qps, burst or max(1, round(qps)))
    request = api_client.request

    def throttled(*args: Any, **kwargs: Any) -> Any:
        bucket.take()
        return request(*args, **kwargs)

    api_client.request = throttled
    return bucket
