"""Timing a provider call for the worker's metrics, the same on every cloud."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def timed(
    observe: Callable[[str, float, str | None], None] | None, method: str, call: Callable[[], T]
) -> T:
    """Run ``call`` and report it as Karpenter's cloud provider decorator does (``method`` as
    Karpenter's CloudProvider interface spells it: Create, Get, List, Delete, ...)."""
    if observe is None:
        return call()
    start = time.perf_counter()
    try:
        value = call()
    except Exception as exc:
        observe(method, time.perf_counter() - start, type(exc).__name__)
        raise
    observe(method, time.perf_counter() - start, None)
    return value
