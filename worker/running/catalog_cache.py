"""A local file cache of the EC2 catalog (instance types, zones, prices) across restarts.

Loading the catalog is the slowest thing a fresh worker does (seconds against EC2, about ten
against the emulator). With ``--catalog-cache PATH`` a restarted worker adopts a catalog saved
less than ``max_age`` ago instead, so a crash-looping or rescheduled worker is useful at once.
The file is written only by the worker itself (atomically, by rename).
"""

from __future__ import annotations

import logging
import os
import pickle
import time
from pathlib import Path

from activities.ec2.provider import EC2Provider

log = logging.getLogger(__name__)
MAX_AGE_SECONDS = 300.0


def load_into(ec2: EC2Provider, path: Path, max_age: float = MAX_AGE_SECONDS) -> bool:
    """Adopt the cached catalog when fresh; False when there is none (or it is stale)."""
    try:
        if time.time() - path.stat().st_mtime > max_age:
            return False
        raw, prices = pickle.loads(path.read_bytes())
    except (OSError, pickle.UnpicklingError, ValueError, EOFError):
        return False
    ec2.pricing.load(*prices)
    ec2.catalog.use_raw(raw)
    return True


def save_from(ec2: EC2Provider, path: Path) -> None:
    data = pickle.dumps((ec2.catalog.raw(), ec2.pricing.snapshot()))
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    tmp.write_bytes(data)
    tmp.replace(path)


def warm(ec2: EC2Provider, path: Path | None) -> None:
    """Load the catalog now: from the cache when fresh, else from EC2 (then save it)."""
    try:
        if path is not None and load_into(ec2, path):
            log.info("instance-type catalog loaded from %s", path)
            return
        ec2.catalog.raw()
        if path is not None:
            save_from(ec2, path)
    except Exception as exc:  # the activities will load (and report) it themselves
        log.warning("warming the instance-type catalog failed: %s", exc)
