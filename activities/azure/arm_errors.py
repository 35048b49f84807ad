"""The Azure SDK's failures, classified once into the neutral cloud errors.

Throttling (429, after the SDK's own retries honouring ``Retry-After``) and server or network
failures (5xx, timeouts, dropped connections) are retryable; a missing resource is
``InstanceNotFound``; anything else is an ``AzureError`` carrying ARM's code and message, which
the launch reads for the capacity refusals (``activities.azure.refusals``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager

from azure.core.exceptions import (
    HttpResponseError,
    ResourceNotFoundError,
    ServiceRequestError,
    ServiceResponseError,
)

from activities.cloud.errors import CloudError, InstanceNotFound, Throttled, TransientError


class AzureError(CloudError):
    """An ARM refusal that is neither throttling, a server fault nor "not found"."""


def code_and_message(exc: HttpResponseError) -> tuple[str, str]:
    """ARM's ``error.code`` and ``error.message``, from the parsed error or the body (a
    failed long-running operation's status body holds them)."""
    error = getattr(exc, "error", None)
    code = str(getattr(error, "code", "") or "")
    message = str(getattr(error, "message", "") or "")
    if not code and exc.response is not None:
        try:
            body = json.loads(exc.response.text())
        except (ValueError, TypeError):
            body = {}
        detail = body.get("error") if isinstance(body, dict) else None
        if isinstance(detail, dict):
            code = str(detail.get("code") or "")
            message = str(detail.get("message") or "")
    return code, message or str(exc.message or exc)


def classify(operation: str, exc: Exception) -> CloudError:
    """The neutral error for one failed call."""
    if isinstance(exc, ResourceNotFoundError):
        return InstanceNotFound(f"{operation}: {exc.message}", "ResourceNotFound")
    if isinstance(exc, HttpResponseError):
        code, message = code_and_message(exc)
        status = exc.status_code or 0
        text = f"{operation}: ({code or status}) {message}"
        if status == 429 or code in ("TooManyRequests", "SubscriptionRequestsThrottled"):
            return Throttled(text, code or "TooManyRequests")
        if status >= 500:
            return TransientError(text, code or str(status))
        if status == 404 or code in ("ResourceNotFound", "NotFound"):
            return InstanceNotFound(text, code or "NotFound")
        return AzureError(text, code)
    if isinstance(exc, ServiceRequestError | ServiceResponseError):
        return TransientError(f"{operation}: {exc}", "ServiceUnavailable")
    return TransientError(f"{operation}: {exc}", type(exc).__name__)


@contextmanager
def azure_errors(operation: str) -> Iterator[None]:
    """Raise the neutral error for any Azure SDK failure inside."""
    try:
        yield
    except CloudError:
        raise
    except (HttpResponseError, ServiceRequestError, ServiceResponseError) as exc:
        raise classify(operation, exc) from exc
