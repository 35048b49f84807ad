"""One kind of emulated ARM resource (VMs, NICs, disks): bodies keyed by resource id, case-
insensitively as ARM keys them, listed per resource group in pages with ``nextLink``."""

from __future__ import annotations

import copy
import threading
import urllib.parse
from dataclasses import dataclass, field
from typing import Any

from sandbox.azure.arm_reads import NotFound


@dataclass
class ResourceTable:
    """The bodies of one resource type; every answer is a copy (callers may change it)."""

    display: str  # "virtual machine": error messages name it
    _items: dict[str, dict[str, Any]] = field(default_factory=dict)
    _lock: threading.RLock = field(default_factory=threading.RLock)

    def put(self, body: dict[str, Any]) -> None:
        with self._lock:
            self._items[str(body["id"]).lower()] = body

    def get(self, rid: str) -> dict[str, Any]:
        with self._lock:
            body = self._items.get(rid.lower())
            if body is None:
                name = rid.rsplit("/", 1)[-1]
                raise NotFound(
                    "ResourceNotFound", f"The {self.display} '{name}' could not be found."
                )
            return copy.deepcopy(body)

    def live(self, rid: str) -> dict[str, Any] | None:
        """The stored body itself (not a copy), for the table's owner to change in place."""
        with self._lock:
            return self._items.get(rid.lower())

    def remove(self, rid: str) -> dict[str, Any] | None:
        with self._lock:
            return self._items.pop(rid.lower(), None)

    def in_group(self, sub: str, rg: str) -> list[dict[str, Any]]:
        prefix = f"/subscriptions/{sub}/resourcegroups/{rg}/".lower()
        with self._lock:
            return [
                copy.deepcopy(b) for k, b in sorted(self._items.items()) if k.startswith(prefix)
            ]

    def all(self) -> list[dict[str, Any]]:
        with self._lock:
            return [copy.deepcopy(b) for _, b in sorted(self._items.items())]

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


def page(
    items: list[dict[str, Any]], base_url: str, path: str, query: dict[str, str], size: int
) -> dict[str, Any]:
    """One page of a list answer, with ``nextLink`` (a ``$skiptoken`` offset) when more."""
    try:
        start = max(0, int(query.get("$skiptoken", "0")))
    except ValueError:
        start = 0
    end = start + size
    body: dict[str, Any] = {"value": items[start:end]}
    if end < len(items):
        params = {k: v for k, v in query.items() if k != "$skiptoken"}
        params["$skiptoken"] = str(end)
        body["nextLink"] = f"{base_url}{path}?" + urllib.parse.urlencode(
            params, quote_via=urllib.parse.quote
        )
    return body


# (status, JSON body, extra headers): one emulated answer
Answer = tuple[int, dict[str, Any], dict[str, str]]


class ArmFailure(Exception):
    """An ARM error answer (``{"error": {"code", "message"}}``) raised by a resource's code."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def listed(
    items: list[dict[str, Any]], base_url: str, path: str, query: dict[str, str], size: int
) -> Answer:
    """The answer to a list request: one page of ``items``."""
    return 200, page(items, base_url, urllib.parse.quote(path), query, size), {}
