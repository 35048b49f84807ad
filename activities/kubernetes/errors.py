"""Every failure the Kubernetes adapter can report, typed once.

Callers (activities, the worker's watchers) branch on these classes and never on HTTP status
codes or client-library exceptions. Each class says whether retrying the same call can help,
so an activity can turn a non-retryable one into a non-retryable Temporal failure.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import urllib3.exceptions
from kubernetes.client.exceptions import ApiException


class KubernetesError(Exception):
    """A Kubernetes API call failed; ``retryable`` says whether trying again may succeed."""

    retryable = False

    def __init__(self, message: str, *, status: int | None = None, reason: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.reason = reason


class NotFound(KubernetesError):
    """404: the object (or its namespace) does not exist. Often success for a delete."""


class Conflict(KubernetesError):
    """409: the object changed since it was read (stale resourceVersion). Re-read and retry."""

    retryable = True


class AlreadyExists(Conflict):
    """409 on create: an object with that name exists. Idempotent creators treat it as done."""

    retryable = False


class Invalid(KubernetesError):
    """422 (or 400): the object failed validation, e.g. a CRD's openAPI or CEL rule."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        reason: str = "",
        causes: list[dict[str, Any]] | None = None,
    ) -> None:
        super().__init__(message, status=status, reason=reason)
        self.causes = causes or []

    def fields(self) -> list[str]:
        """The fields the API server named, e.g. ``spec.template.spec.requirements``."""
        return [str(c.get("field", "")) for c in self.causes if c.get("field")]


class Forbidden(KubernetesError):
    """403: RBAC does not allow this call (or a namespace is terminating). Fix the role."""


class Throttled(KubernetesError):
    """429 outside eviction: the API server asks us to slow down. Retry after ``retry_after``."""

    retryable = True

    def __init__(
        self, message: str, *, status: int | None = 429, reason: str = "", retry_after: float = 1.0
    ) -> None:
        super().__init__(message, status=status, reason=reason)
        self.retry_after = retry_after


class Unavailable(KubernetesError):
    """5xx, timeouts, refused or reset connections: the API server is not answering well."""

    retryable = True


class Expired(KubernetesError):
    """410: a watch or list continued from a resourceVersion etcd has compacted. Re-list."""

    retryable = True


class EvictionBlocked(KubernetesError):
    """An eviction was refused to protect a PodDisruptionBudget; retry with backoff.

    ``pdbs`` names (``namespace/name``) the budgets whose selector matches the pod, so the
    drain can say which budget holds the node.
    """

    retryable = True

    def __init__(
        self,
        message: str,
        *,
        pod: str,
        pdbs: list[str],
        status: int | None = 429,
        reason: str = "",
        retry_after: float = 5.0,
    ) -> None:
        super().__init__(message, status=status, reason=reason)
        self.pod = pod
        self.pdbs = pdbs
        self.retry_after = retry_after


def body_text(exc: ApiException) -> str:
    """The response body as text (bytes when the call was made without preloading)."""
    body = exc.body
    if isinstance(body, bytes):
        return body.decode("utf-8", errors="replace")
    return str(body or "")


def _status_body(exc: ApiException) -> dict[str, Any]:
    try:
        body = json.loads(body_text(exc) or "{}")
    except (TypeError, ValueError):
        return {}
    return body if isinstance(body, dict) else {}


def _retry_after(exc: ApiException, default: float) -> float:
    headers = exc.headers or {}
    value = headers.get("Retry-After") if hasattr(headers, "get") else None
    try:
        return float(value) if value is not None else default
    except ValueError:
        return default


def translate(exc: BaseException) -> KubernetesError:
    """Map a client-library or transport exception to its typed adapter error."""
    if isinstance(exc, KubernetesError):
        return exc
    if isinstance(exc, ApiException):
        body = _status_body(exc)
        status = int(exc.status or 0)
        reason = str(body.get("reason") or exc.reason or "")
        message = str(body.get("message") or exc.reason or f"HTTP {status}")
        if status == 404:
            return NotFound(message, status=status, reason=reason)
        if status == 409:
            if reason == "AlreadyExists":
                return AlreadyExists(message, status=status, reason=reason)
            return Conflict(message, status=status, reason=reason)
        if status in (400, 422):
            causes = (body.get("details") or {}).get("causes") or []
            return Invalid(message, status=status, reason=reason, causes=list(causes))
        if status in (401, 403):
            return Forbidden(message, status=status, reason=reason)
        if status == 410:
            return Expired(message, status=status, reason=reason)
        if status == 429:
            return Throttled(
                message, status=status, reason=reason, retry_after=_retry_after(exc, 1.0)
            )
        if status == 0 or status >= 500:
            return Unavailable(message, status=status or None, reason=reason)
        return KubernetesError(message, status=status, reason=reason)
    if isinstance(exc, urllib3.exceptions.HTTPError | ConnectionError | TimeoutError):
        return Unavailable(f"{type(exc).__name__}: {exc}")
    return KubernetesError(f"{type(exc).__name__}: {exc}")


@contextmanager
def api_errors() -> Iterator[None]:
    """Run a block of client calls, re-raising their failures as typed adapter errors."""
    try:
        yield
    except (ApiException, urllib3.exceptions.HTTPError, ConnectionError, TimeoutError) as exc:
        raise translate(exc) from exc
