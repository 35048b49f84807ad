"""Calling the typed client but keeping the JSON: every adapter function returns plain dicts.

Dicts in the API's own camelCase shape are what the CRD objects already are, serialise into
workflow payloads without a converter, and skip the client's slow model deserialisation on
large pod lists.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any, cast

from kubernetes.watch.watch import iter_resp_lines

from activities.kubernetes.errors import api_errors

# The kinds of a watch's events (the API server's words), and LISTED for the items of a
# (re-)list handed to the same handlers.
ADDED = "ADDED"
MODIFIED = "MODIFIED"
DELETED = "DELETED"
LISTED = "LISTED"

Obj = dict[str, Any]


def call(method: Callable[..., Any], *args: Any, **kwargs: Any) -> Obj:
    """Invoke a typed-client method and return the response body as a dict."""
    with api_errors():
        response = method(*args, _preload_content=False, **kwargs)
        try:
            data = response.data
        finally:
            response.release_conn()
    return cast(Obj, json.loads(data)) if data else {}


def list_all(method: Callable[..., Any], *args: Any, limit: int = 500, **kwargs: Any) -> list[Obj]:
    """Every item of a list call, following ``continue`` tokens."""
    items: list[Obj] = []
    token: str | None = None
    while True:
        page = call(method, *args, limit=limit, _continue=token, **kwargs)
        items.extend(page.get("items") or [])
        token = (page.get("metadata") or {}).get("continue") or None
        if not token:
            return items


def watch(
    method: Callable[..., Any], *args: Any, resource_version: str, timeout_seconds: int = 60
) -> Iterator[tuple[str, Obj]]:
    """A list call's watch from ``resource_version``: (event type, object as a dict) pairs,
    bookmarks included, until the server ends the stream after ``timeout_seconds``.

    The client's own ``Watch.stream`` turns every event into its typed model (a JSON dump
    and the model's deserialisation per event). A Node watch sees each Node's status
    heartbeats: at 1,000 Nodes that work was a fifth of the worker's CPU and put the watch
    seconds behind the API server (docs/performance.md). A watch error (``ERROR``, e.g. 410
    Gone) is yielded like any event; the caller re-lists.
    """
    with api_errors():
        response = method(
            *args,
            watch=True,
            resource_version=resource_version,
            timeout_seconds=timeout_seconds,
            allow_watch_bookmarks=True,
            _preload_content=False,
        )
    try:
        for line in iter_resp_lines(response):
            if not line.strip():
                continue
            event = json.loads(line)
            yield str(event.get("type")), cast(Obj, event.get("object") or {})
    finally:
        response.close()
        response.release_conn()
