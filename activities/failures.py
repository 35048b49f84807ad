"""Adapter failures as the workflows see them: ``ApplicationError``s typed by class.

A failure the adapter calls non-retryable becomes a non-retryable ``ApplicationError`` whose
``type`` is the adapter's class name, so workflows branch on the type and never on text.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from temporalio.exceptions import ApplicationError

from activities.kubernetes.errors import KubernetesError


@contextmanager
def typed_failures() -> Iterator[None]:
    """Turn adapter errors into ApplicationErrors that keep their class and retryability."""
    try:
        yield
    except ApplicationError:
        raise
    except KubernetesError as exc:
        raise ApplicationError(
            str(exc), type=type(exc).__name__, non_retryable=not exc.retryable
        ) from exc
    except Exception as exc:
        retryable = getattr(exc, "retryable", None)
        if retryable is None:
            raise
        raise ApplicationError(
            str(exc), type=type(exc).__name__, non_retryable=not retryable
        ) from exc
