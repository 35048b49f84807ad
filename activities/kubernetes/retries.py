"""Optimistic-lock retries: every status or metadata write carries the resourceVersion it read,
so a writer that loses a race re-reads and tries again instead of undoing the winner."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

from activities.kubernetes.errors import Conflict

T = TypeVar("T")


def retry_conflicts(write: Callable[[], T], attempts: int = 8) -> T:
    """Run ``write`` (which re-reads the object) again while it loses optimistic-lock races."""
    for i in range(attempts - 1):
        try:
            return write()
        except Conflict:
            time.sleep(min(0.05 * (2**i), 0.5))
    return write()
