"""Failures reach callers as the adapter's typed errors."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from kubernetes.client.exceptions import ApiException

from activities.kubernetes import nodeclaims, nodes
from activities.kubernetes.client import Kube, from_kubeconfig
from activities.kubernetes.errors import (
    AlreadyExists,
    Conflict,
    Expired,
    Forbidden,
    Invalid,
    KubernetesError,
    NotFound,
    Throttled,
    Unavailable,
    translate,
)
from sandbox.cluster import Cluster


def test_missing_objects_are_not_found(kube: Kube) -> None:
    with pytest.raises(NotFound) as caught:
        nodeclaims.get(kube, "does-not-exist")
    assert not caught.value.retryable
    with pytest.raises(NotFound):
        nodes.get(kube, "does-not-exist")


def test_unreachable_api_server_is_unavailable(cluster: Cluster, tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    text = cluster.kubeconfig_path.read_text().replace(cluster.server, f"https://127.0.0.1:{port}")
    dead = tmp_path / "dead.kubeconfig"
    dead.write_text(text)
    client = from_kubeconfig(dead)
    try:
        with pytest.raises(Unavailable) as caught:
            nodeclaims.list_(client)
        assert caught.value.retryable
    finally:
        client.close()


def _api_exception(
    status: int, body: dict[str, object] | bytes, headers: dict[str, str] | None = None
) -> ApiException:
    exc = ApiException(status=status, reason="reason")
    exc.body = body if isinstance(body, bytes) else json.dumps(body)
    exc.headers = headers or {}
    return exc


@pytest.mark.parametrize(
    ("status", "reason", "expected", "retryable"),
    [
        (404, "NotFound", NotFound, False),
        (409, "Conflict", Conflict, True),
        (409, "AlreadyExists", AlreadyExists, False),
        (422, "Invalid", Invalid, False),
        (403, "Forbidden", Forbidden, False),
        (429, "TooManyRequests", Throttled, True),
        (410, "Expired", Expired, True),
        (503, "ServiceUnavailable", Unavailable, True),
        (500, "InternalError", Unavailable, True),
    ],
)
def test_status_codes_map_to_typed_errors(
    status: int, reason: str, expected: type[KubernetesError], retryable: bool
) -> None:
    error = translate(_api_exception(status, {"kind": "Status", "reason": reason, "message": "m"}))
    assert type(error) is expected
    assert error.retryable is retryable
    assert error.message == "m"


def test_throttled_keeps_retry_after_and_bytes_bodies_parse() -> None:
    error = translate(
        _api_exception(
            429, b'{"reason": "TooManyRequests", "message": "slow"}', {"Retry-After": "7"}
        )
    )
    assert isinstance(error, Throttled)
    assert error.retry_after == 7.0
    assert error.message == "slow"


def test_invalid_names_fields() -> None:
    error = translate(
        _api_exception(
            422,
            {
                "reason": "Invalid",
                "message": "bad",
                "details": {"causes": [{"field": "spec.weight", "message": "too big"}]},
            },
        )
    )
    assert isinstance(error, Invalid)
    assert error.fields() == ["spec.weight"]
