"""The EC2 emulator's answers about instance types, serialized once and kept.

moto's DescribeInstanceTypes (about 1,400 types in one page) and
DescribeInstanceTypeOfferings (about 6,400 offerings) are the slowest calls any sandbox makes:
the handlers themselves take a tenth of a second, but building the XML answer takes ~5 s on an
idle 2-core box and 10-15 s on a busy one, and every stack (each ``joinery dev``, each worker
that reads the catalog, each test fixture) asks again. On a loaded machine the answer passed
the client's 30 s read timeout and every retry asked again (docs/performance.md, "Test suite
time").

Both answers depend only on moto's bundled data (its version), the region and the request's
parameters, never on what a test created, so the same request gets the same bytes. This module
keeps each serialized answer in memory and in a file under ``~/.cache/joinery/ec2-answers``
(``JOINERY_EC2_ANSWERS_CACHE`` moves it; set to an empty string it keeps answers in memory
only), named by a SHA-256 of moto's version, the action, the region and the sorted
parameters. A file is written atomically (by rename), so a concurrent reader sees a whole
answer or none; an unreadable entry is ignored and answered afresh. EC2's own answers are
what moto gives; only their cost changes here.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import moto
from moto.core.responses import ActionResult
from moto.ec2.responses import EC2Response

from activities.cache_root import cache_root
from sandbox.ec2 import partition_regions

# EC2Response method names whose answers depend only on moto's data, the region and the request.
STATIC_ACTIONS = ("describe_instance_types", "describe_instance_type_offerings")
_FORMAT = "joinery-ec2-answer/1"
_memory: dict[str, tuple[int, dict[str, str], str]] = {}
_lock = threading.Lock()
_originals: dict[str, Callable[..., Any]] = {}


def cache_dir() -> Path | None:
    """Where answers are kept on disk, or None to keep them in memory only."""
    configured = os.environ.get("JOINERY_EC2_ANSWERS_CACHE")
    if configured is not None:
        return Path(configured) if configured else None
    return cache_root() / "ec2-answers"


def answer_key(action: str, region: str, querystring: dict[str, list[str]]) -> str:
    """The name of an answer: everything that decides its bytes."""
    doc = {
        "format": _FORMAT,
        "moto": moto.__version__,
        "action": action,
        "region": region,
        "params": sorted((k, sorted(v)) for k, v in querystring.items()),
    }
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


def _read(key: str) -> tuple[int, dict[str, str], str] | None:
    directory = cache_dir()
    if directory is None:
        return None
    try:
        doc = json.loads((directory / f"{key}.json").read_text())
        return int(doc["status"]), {str(k): str(v) for k, v in doc["headers"].items()}, doc["body"]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def _write(key: str, answer: tuple[int, dict[str, str], str]) -> None:
    directory = cache_dir()
    if directory is None:
        return
    status, headers, body = answer
    with contextlib.suppress(OSError):
        directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".answer-")
        try:
            with os.fdopen(fd, "w") as out:
                json.dump({"status": status, "headers": headers, "body": body}, out)
            os.replace(tmp, directory / f"{key}.json")
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def _kept(action: str) -> Callable[[EC2Response], Any]:
    original = _originals[action]

    def answer(self: EC2Response) -> Any:
        if partition_regions.is_emulated(self.region):
            return original(self)  # built from the price table, not moto's data: cheap
        key = answer_key(action, self.region, self.querystring)
        found = _memory.get(key) or _read(key)
        if found is None:
            result = original(self)
            if not isinstance(result, ActionResult):
                return result
            status, headers, body = self.serialized(result)
            if status != 200 or not isinstance(body, str):
                return status, headers, body
            found = (status, {k: str(v) for k, v in headers.items()}, body)
            _write(key, found)
        with _lock:
            _memory[key] = found
        status, headers, body = found
        return status, dict(headers), body

    return answer


def install() -> None:
    """Answer the static actions from the kept answers (idempotent; this process only)."""
    with _lock:
        if _originals:
            return
        for action in STATIC_ACTIONS:
            _originals[action] = getattr(EC2Response, action)
    for action in STATIC_ACTIONS:
        setattr(EC2Response, action, _kept(action))


def uninstall() -> None:
    """Restore moto's own handlers (kept answers stay for the next install)."""
    with _lock:
        for action, original in _originals.items():
            setattr(EC2Response, action, original)
        _originals.clear()
