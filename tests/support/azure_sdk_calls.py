"""Which azure-mgmt SDK operations a body of code calls, and which ARM request each one sends.

Two independent readings for ``activities.azure.permissions``:

- :func:`calls_in` parses Python sources and finds every ``<anything>.<group>.<method>``,
  called or handed on as a bound method, where ``<group>`` is an operations attribute of the
  compute, network or resource management client and ``<method>`` a public method of that
  operations class; a name bound to an operations group (``vms = compute.virtual_machines``,
  ``self._nics = network.network_interfaces``) counts as the group. Generic: nothing here
  names the calls Joinery makes.
- :func:`request_of` calls the SDK method itself, with placeholder arguments, through a
  transport that records the first HTTP request and sends nothing; :func:`arm_action` turns
  that request into its Azure RBAC action by ARM's rule (the resource types of the URL, then
  read / write / delete, or ``<name>/action`` for a POST), and says whether its URL is
  subscription-wide (no resource group in it); it lives in sandbox/azure/authorization.py,
  whose emulated RBAC uses it too.
"""

from __future__ import annotations

import ast
import inspect
import json
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from azure.core.credentials import AccessToken
from azure.core.pipeline.transport import HttpTransport

from sandbox.azure.authorization import arm_action

__all__ = ["arm_action", "calls_in", "calls_in_source", "properties_in_source", "request_of"]

SUBSCRIPTION_ID = "00000000-0000-0000-0000-000000000000"
SDKS = ("compute", "network", "resource")
# Operations groups every client has (the provider's own operation list): never called.
_SHARED = {"operations"}


class _Credential:
    def get_token(self, *scopes: str, **kwargs: Any) -> AccessToken:
        return AccessToken("recorded-not-sent", 2**40)


class _Sent(Exception):
    """Raised by the recording transport in place of sending."""


class _Recorder(HttpTransport):
    def __init__(self) -> None:
        self.method = ""
        self.url = ""
        self.content: Any = None

    def __enter__(self) -> _Recorder:
        return self

    def __exit__(self, *args: object) -> None:
        return None

    def open(self) -> None:
        return None

    def close(self) -> None:
        return None

    def send(self, request: Any, **kwargs: Any) -> Any:
        self.method, self.url = request.method, request.url
        self.content = getattr(request, "content", None)
        raise _Sent


def _client(sdk: str, transport: HttpTransport | None = None) -> Any:
    kwargs: dict[str, Any] = {} if transport is None else {"transport": transport}
    if sdk == "compute":
        from azure.mgmt.compute import ComputeManagementClient

        return ComputeManagementClient(_Credential(), SUBSCRIPTION_ID, **kwargs)
    if sdk == "network":
        from azure.mgmt.network import NetworkManagementClient

        return NetworkManagementClient(_Credential(), SUBSCRIPTION_ID, **kwargs)
    from azure.mgmt.resource.resources import ResourceManagementClient

    return ResourceManagementClient(_Credential(), SUBSCRIPTION_ID, **kwargs)


@cache
def operation_groups() -> dict[str, tuple[str, frozenset[str]]]:
    """Each operations attribute of the three clients: its SDK and its public methods."""
    out: dict[str, tuple[str, frozenset[str]]] = {}
    for sdk in SDKS:
        for name, ops in vars(_client(sdk)).items():
            if not type(ops).__name__.endswith("Operations") or name in _SHARED:
                continue
            methods = frozenset(
                m for m, _ in inspect.getmembers(type(ops), callable) if not m.startswith("_")
            )
            assert name not in out, f"operations group {name} in two SDKs"
            out[name] = (sdk, methods)
    return out


@dataclass(frozen=True)
class Site:
    path: str
    line: int

    def __str__(self) -> str:
        return f"{self.path}:{self.line}"


def _attr_name(node: ast.expr) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return ""


def calls_in_source(source: str, path: str = "<source>") -> dict[str, list[Site]]:
    """``sdk.group.method`` of every SDK operation one module calls or hands on, with where."""
    groups = operation_groups()
    tree = ast.parse(source)
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        value = getattr(node, "value", None)
        if (
            isinstance(node, ast.Assign | ast.AnnAssign)
            and isinstance(value, ast.Attribute)
            and value.attr in groups
        ):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if name := _attr_name(target):
                    aliases[name] = value.attr
    found: dict[str, list[Site]] = {}
    for node in ast.walk(tree):
        # a method called, or handed on uncalled (``retry(vms.begin_delete, group, name)``)
        if not isinstance(node, ast.Attribute):
            continue
        receiver = _attr_name(node.value)
        group = receiver if receiver in groups else aliases.get(receiver, "")
        if not group:
            continue
        sdk, methods = groups[group]
        if node.attr in methods:
            name = f"{sdk}.{group}.{node.attr}"
            found.setdefault(name, []).append(Site(path, node.lineno))
    return found


def calls_in(root: Path, folders: Iterable[str]) -> dict[str, list[Site]]:
    """Every SDK operation called by the Python files under ``root/<folder>``."""
    found: dict[str, list[Site]] = {}
    for folder in folders:
        for path in sorted((root / folder).rglob("*.py")):
            rel = str(path.relative_to(root))
            for name, sites in calls_in_source(path.read_text(), rel).items():
                found.setdefault(name, []).extend(sites)
    return found


def _placeholder(parameter: inspect.Parameter) -> object:
    """A body for a model parameter (the SDK takes a JSON mapping), else a name."""
    annotation = str(parameter.annotation)
    return {} if "IO[bytes]" in annotation or "JSON" in annotation else "x"


def request_of(sdk: str, group: str, method: str) -> tuple[str, str]:
    """The HTTP method and URL path of the first request ``sdk.group.method`` sends."""
    http_method, path, _ = recorded(sdk, group, method)
    return http_method, path


def recorded(sdk: str, group: str, method: str, *args: Any) -> tuple[str, str, Any]:
    """The HTTP method, URL path and JSON body (None without one) of the first request
    ``sdk.group.method(*args)`` sends; placeholders stand in for arguments not given."""
    recorder = _Recorder()
    operation = getattr(getattr(_client(sdk, recorder), group), method)
    if not args:
        args = tuple(
            _placeholder(p)
            for p in inspect.signature(operation).parameters.values()
            if p.kind is p.POSITIONAL_OR_KEYWORD and p.default is p.empty
        )
    try:
        result = operation(*args)
        if hasattr(result, "by_page"):  # a pager sends on the first item asked for
            next(iter(result))
    except _Sent:
        pass
    assert recorder.method, f"{sdk}.{group}.{method} sent no request"
    path = recorder.url.split("://", 1)[-1].split("/", 1)[-1].split("?", 1)[0]
    content = recorder.content
    body = json.loads(content) if isinstance(content, str | bytes) and content else None
    return recorder.method, "/" + path, body


def _normal(name: str) -> str:
    return name.replace("_", "").lower()


def properties_in_source(
    source: str, properties: Iterable[str], path: str = "<source>"
) -> dict[str, list[Site]]:
    """Which of ``properties`` (ARM JSON names, camelCase) a module puts in a request body:
    as a model's keyword (the SDK's snake_case, ``load_balancer_backend_address_pools=``) or
    as a dict key (``{"loadBalancerBackendAddressPools": ...}``)."""
    wanted = {_normal(p): p for p in properties}
    found: dict[str, list[Site]] = {}
    for node in ast.walk(ast.parse(source)):
        names: list[tuple[str, int]] = []
        if isinstance(node, ast.keyword) and node.arg:
            names.append((node.arg, getattr(node.value, "lineno", 0)))
        elif isinstance(node, ast.Dict):
            names.extend(
                (k.value, k.lineno)
                for k in node.keys
                if isinstance(k, ast.Constant) and isinstance(k.value, str)
            )
        for name, line in names:
            if (prop := wanted.get(_normal(name))) is not None:
                found.setdefault(prop, []).append(Site(path, line))
    return found
