"""A local file cache of the cloud's catalog (instance types, zones, prices) across restarts.

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

from activities.cloud.provider import CloudProvider

log = logging.getLogger(__name__)
MAX_AGE_SECONDS = 300.0


def load_into(cloud: CloudProvider, path: Path, max_age: float = MAX_AGE_SECONDS) -> bool:
    """Adopt the cached catalog when fresh; False when there is none (or it is stale)."""
    try:
        if time.time() - path.stat().st_mtime > max_age:
            return False
        cloud.adopt_catalog_snapshot(pickle.loads(path.read_bytes()))
    except (OSError, pickle.UnpicklingError, ValueError, EOFError):
        return False
    return True


def save_from(cloud: CloudProvider, path: Path) -> None:
    data = pickle.dumps(cloud.catalog_snapshot())
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    tmp.write_bytes(data)
    tmp.replace(path)


def warm(cloud: CloudProvider, path: Path | None) -> None:
    """Load the catalog now: from the cache when fresh, else from the cloud (then save it)."""
    try:
        if path is not None and load_into(cloud, path):
            log.info("instance-type catalog loaded from %s", path)
            return
        cloud.load_catalog()
        if path is not None:
            save_from(cloud, path)
    except Exception as exc:  # the activities will load (and report) it themselves
        log.warning("warming the instance-type catalog failed: %s", exc)
