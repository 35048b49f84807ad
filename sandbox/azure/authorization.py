"""Azure RBAC, emulated where the SDK sends: each request is checked against role assignments
before it leaves, and a denied one is answered as ARM answers it (403 ``AuthorizationFailed``,
naming the action and the scope).

The emulator itself authorizes nothing (any bearer token will do), so without this a test
cannot show that the worker's calls fit the roles in deploy/azure/. ``EnforcingTransport``
wraps the SDK's own transport: give it to a client (``compute_client(..., transport=...)``)
with the assignments the operator would make, run the provider, and every request, and every
resource its body links to (the subnet a NIC joins, the NIC and identity a VM names), must be
allowed at a scope that contains it, as ARM's linked access checks require.

What is emulated of ARM: an action is allowed when some assignment's role holds it (exact
names, case-insensitive, ``*`` wildcards as ARM matches them) at a scope that is the
resource's id or an ancestor of it; a long-running operation's status polls are let through.
Not emulated: deny assignments, conditions, NotActions, management groups, and whatever
other implicit reads ARM may allow without a role.
"""

from __future__ import annotations

import fnmatch
import io
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import requests
from azure.core.pipeline.transport import RequestsTransport
from azure.core.pipeline.transport._requests_basic import _handle_non_stream_rest_response
from azure.core.rest._requests_basic import RestRequestsTransportResponse

from activities.azure.permissions import LINKS

PRINCIPAL = "11111111-2222-3333-4444-555555555555"  # the worker identity's object id
_VERBS = {"GET": "read", "HEAD": "read", "PUT": "write", "PATCH": "write", "DELETE": "delete"}


def arm_action(http_method: str, path: str) -> tuple[str, bool]:
    """The RBAC action of an ARM request, and whether it is subscription-wide (no resource
    group in its URL). ``GET /subscriptions/s/resourceGroups/g/providers/Microsoft.Compute/
    virtualMachines/v/instanceView`` is ``Microsoft.Compute/virtualMachines/instanceView/read``;
    ``POST .../virtualMachines/v/deallocate`` is ``.../virtualMachines/deallocate/action``."""
    segments = [s for s in path.split("/") if s]
    lowered = [s.lower() for s in segments]
    namespace, rest = "Microsoft.Resources", segments
    for i in range(len(segments) - 2, -1, -1):
        if lowered[i] == "providers" and "." in segments[i + 1] and i + 2 < len(segments):
            namespace, rest = segments[i + 1], segments[i + 2 :]
            break
    if http_method == "POST" and len(rest) % 2:  # an action on a resource: .../{name}/{verb}
        types, verb = rest[:-1:2], f"{rest[-1]}/action"
    else:
        types, verb = rest[::2], _VERBS.get(http_method, "action")
    return "/".join([namespace, *types, verb]), "resourcegroups" not in lowered


def _ids(value: Any) -> Iterator[str]:
    """Resource ids a link property holds: ``{"id": ...}``, a list of those, or (identities)
    a mapping keyed by id."""
    if isinstance(value, Mapping):
        if isinstance(value.get("id"), str):
            yield value["id"]
        else:
            yield from (k for k in value if isinstance(k, str) and k.startswith("/"))
    elif isinstance(value, list):
        for item in value:
            yield from _ids(item)


def linked(body: Any) -> list[tuple[str, str]]:
    """``(action, resource id)`` for every resource a request body links to."""
    out: list[tuple[str, str]] = []
    if isinstance(body, Mapping):
        for key, value in body.items():
            if key in LINKS:
                out.extend((LINKS[key].action, rid) for rid in _ids(value))
            out.extend(linked(value))
    elif isinstance(body, list):
        for item in body:
            out.extend(linked(item))
    return out


def is_operation_poll(method: str, path: str) -> bool:
    """A GET of a long-running operation's status (``.../providers/<ns>/locations/<l>/
    operations/<id>``, ``operationResults``, ``operationStatuses``: the URLs ARM hands back in
    ``Azure-AsyncOperation`` and ``Location``). Not checked against roles: these URLs sit at
    the subscription, yet a principal whose only role is on one resource group creates VMs and
    follows them to the end (Karpenter Azure's own roles are all on the node resource group),
    so ARM lets the operation's caller poll it."""
    segments = [s.lower() for s in path.split("/") if s]
    return (
        method == "GET"
        and "locations" in segments
        and any(s in ("operations", "operationresults", "operationstatuses") for s in segments)
        and "resourcegroups" not in segments
    )


def _contains(scope: str, resource: str) -> bool:
    s = scope.rstrip("/").lower().split("/")
    r = resource.rstrip("/").lower().split("/")
    return r[: len(s)] == s


@dataclass(frozen=True)
class Assignment:
    role: str
    actions: tuple[str, ...]
    scope: str

    def allows(self, action: str, resource: str) -> bool:
        return _contains(self.scope, resource) and any(
            fnmatch.fnmatchcase(action.lower(), a.lower()) for a in self.actions
        )


def assign(role: Mapping[str, Any], scope: str) -> Assignment:
    """A role definition (deploy/azure/*.json's shape) assigned at ``scope``."""
    return Assignment(str(role["Name"]), tuple(role["Actions"]), scope)


@dataclass
class Authorizer:
    assignments: Sequence[Assignment]
    # (action, resource id, allowed) of every check made, in order
    checks: list[tuple[str, str, bool]] = field(default_factory=list)
    polls: int = 0  # operation status polls let through

    def denials(self, method: str, path: str, body: Any = None) -> list[tuple[str, str]]:
        """``(action, scope)`` of each check the request fails: its own action on its URL,
        then each resource its body links to. A long-running operation's status poll is not
        checked (see :func:`is_operation_poll`)."""
        if is_operation_poll(method, path):
            self.polls += 1
            return []
        own, _ = arm_action(method, path)
        wanted = [(own, path), *linked(body)]
        out = []
        for action, resource in wanted:
            ok = any(a.allows(action, resource) for a in self.assignments)
            self.checks.append((action, resource, ok))
            if not ok:
                out.append((action, resource))
        return out

    def actions_checked(self) -> set[str]:
        return {action for action, _, _ in self.checks}


def _forbidden(request: Any, action: str, scope: str) -> requests.Response:
    """ARM's answer to a request its caller may not make."""
    message = (
        f"The client '{PRINCIPAL}' with object id '{PRINCIPAL}' does not have authorization "
        f"to perform action '{action}' over scope '{scope}' or the scope is invalid."
    )
    response = requests.Response()
    response.status_code = 403
    response.reason = "Forbidden"
    response.url = request.url
    response.headers["Content-Type"] = "application/json; charset=utf-8"
    response.headers["x-ms-failure-cause"] = "gateway"
    content = json.dumps({"error": {"code": "AuthorizationFailed", "message": message}}).encode()
    response._content = content
    response._content_consumed = True
    response.raw = io.BytesIO(content)
    return response


class EnforcingTransport(RequestsTransport):
    """The SDK's requests transport, asking ``authorizer`` before each request is sent."""

    def __init__(self, authorizer: Authorizer, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.authorizer = authorizer

    def send(self, request: Any, **kwargs: Any) -> Any:
        path = urlsplit(request.url).path
        content = getattr(request, "content", None)
        body = json.loads(content) if isinstance(content, str | bytes) and content else None
        denied = self.authorizer.denials(request.method, path, body)
        if not denied:
            return super().send(request, **kwargs)
        action, scope = denied[0]
        response = RestRequestsTransportResponse(
            request=request,
            internal_response=_forbidden(request, action, scope),
            block_size=self.connection_config.data_block_size,
        )
        _handle_non_stream_rest_response(response)
        return response


def role_assignments(
    roles: Mapping[str, Mapping[str, Any]], scopes: Mapping[str, Iterable[str]]
) -> list[Assignment]:
    """Each role (by scope kind) assigned at each of its scopes."""
    return [assign(roles[kind], scope) for kind, where in scopes.items() for scope in where]
