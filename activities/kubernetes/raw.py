"""Calling the typed client but keeping the JSON: every adapter function returns plain dicts.

Dicts in the API's own camelCase shape are what the CRD objects already are, serialise into
workflow payloads without a converter, and skip the client's slow model deserialisation on
large pod lists.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, cast

from activities.kubernetes.errors import api_errors

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
