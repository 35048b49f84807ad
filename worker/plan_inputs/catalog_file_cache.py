"""`joinery plan --catalog`: the decoded documents of large catalog files, kept between runs.

A real EC2 catalog (1,000-1,400 types, ~1 MB of YAML) costs ~0.25 s to decode with libyaml,
a tenth of a whole ``joinery plan`` on 5,000 pods; the same catalog is read by run after run
while the manifests change. Its decoded documents are stored as JSON (read back ~20x faster)
under a name that is the SHA-256 of everything that decides them: the file's bytes, PyYAML's
version and whether libyaml is used, and the source of our loader
(worker/plan_inputs/manifest_yaml.py). A changed file, parser or loader is a new name, so an
entry is never stale; what is read back is validated exactly like a fresh parse. Only
documents JSON gives back unchanged are stored (plain mappings with string keys, lists,
strings, ints, finite floats, booleans, None, no aliases); a file with a date, binary, NaN or
an alias is parsed every time. Small files are not stored (their parse is already fast).
Every cache failure (no home, read-only disk, a corrupt entry) falls back to parsing.
``JOINERY_CACHE_DIR`` moves the cache; set to an empty string it turns it off.

(Not worker/running/catalog_cache.py, which keeps the worker's EC2 catalog across restarts.)
The manifests are not cached: a user's manifests are new on each run, and a benchmark that
reads the same file again would time the cache, not the command.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import yaml

from activities.cache_root import cache_root
from worker.plan_inputs import manifest_yaml

# Files smaller than this are parsed every time (a few milliseconds at most).
MIN_BYTES = 64 * 1024
# Entries kept; the least recently used beyond this are removed after each store.
KEEP = 8
_FORMAT = b"joinery-catalog-cache/1"


def cache_dir() -> Path | None:
    """Where entries live, or None when the cache is turned off."""
    configured = os.environ.get("JOINERY_CACHE_DIR")
    if configured is not None:
        return Path(configured) if configured else None
    return cache_root() / "catalogs"


def _loader_source() -> bytes:
    return Path(manifest_yaml.__file__).read_bytes()


def entry_name(data: bytes) -> str:
    h = hashlib.sha256(_FORMAT)
    for part in (yaml.__version__.encode(), str(manifest_yaml.uses_libyaml()).encode()):
        h.update(len(part).to_bytes(8, "big") + part)
    source = _loader_source()
    h.update(len(source).to_bytes(8, "big") + source)
    h.update(data)
    return h.hexdigest() + ".json"


def json_faithful(value: Any) -> bool:
    """Whether JSON gives ``value`` back equal and of the same types (so a stored entry reads
    back as the parse that made it). A list or mapping met twice (a YAML alias, or a value
    that contains itself) is not: JSON would copy it, or never end."""
    stack = [value]
    seen: set[int] = set()
    while stack:
        v = stack.pop()
        t = type(v)
        if t is str or t is int or t is bool or v is None:
            continue
        if t is float:
            if v != v or v in (float("inf"), float("-inf")):
                return False
            continue
        if t is list or t is dict:
            if id(v) in seen:
                return False
            seen.add(id(v))
        if t is list:
            stack.extend(v)
            continue
        if t is dict:
            if any(type(k) is not str for k in v):
                return False
            stack.extend(v.values())
            continue
        return False
    return True


def load(data: bytes) -> list[Any] | None:
    """The stored documents for these file bytes, or None (not stored, off, or unreadable)."""
    where = cache_dir()
    if where is None or len(data) < MIN_BYTES:
        return None
    name = entry_name(data)
    path = where / name
    try:
        stored = json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError):
        return None
    # An entry names itself, so a file put there by anything else is not taken for one.
    if not isinstance(stored, dict) or stored.get("entry") != name:
        return None
    docs = stored.get("documents")
    if not isinstance(docs, list):
        return None
    with contextlib.suppress(OSError):
        os.utime(path)  # most recently used: kept longest
    return docs


def store(data: bytes, docs: list[Any]) -> None:
    """Keep ``docs`` (the parse of ``data``) if the file is large and JSON keeps them exactly."""
    where = cache_dir()
    if where is None or len(data) < MIN_BYTES or not json_faithful(docs):
        return
    try:
        name = entry_name(data)
        stored = {"entry": name, "documents": docs}
        text = json.dumps(stored, allow_nan=False, separators=(",", ":"))
        where.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=where, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="ascii") as fh:
                fh.write(text)
            os.replace(tmp, where / name)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        _prune(where)
    except (OSError, ValueError, RecursionError):
        return


def _prune(where: Path) -> None:
    entries = sorted(where.glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in entries[KEEP:]:
        old.unlink(missing_ok=True)
