"""The Azure SDK clients, made in one place so tests and the sandbox can point them at the
emulator (``endpoint`` and its CA) without touching the code that uses them."""

from __future__ import annotations

import os
import time
from typing import Any

from azure.core.credentials import AccessToken, TokenCredential
from azure.mgmt.compute import ComputeManagementClient

ARM_ENDPOINT = "https://management.azure.com"
# A bearer token given outright (``az account get-access-token --query accessToken -o tsv``),
# used instead of the identity chain when set: for a one-off CLI run, and for an emulator.
TOKEN_ENV = "JOINERY_AZURE_ACCESS_TOKEN"


class StaticTokenCredential:
    """A ``TokenCredential`` that hands out one token it was given (it cannot renew it)."""

    def __init__(self, token: str, lifetime_s: int = 3600) -> None:
        self._token = token
        self._expires = int(time.time()) + lifetime_s

    def get_token(self, *scopes: str, **kwargs: Any) -> AccessToken:
        return AccessToken(self._token, self._expires)


def default_credential() -> TokenCredential:
    """``$JOINERY_AZURE_ACCESS_TOKEN`` when set; else workload identity, managed identity,
    environment or CLI login: whatever the host has."""
    token = os.environ.get(TOKEN_ENV, "")
    if token:
        return StaticTokenCredential(token)
    from azure.identity import DefaultAzureCredential

    return DefaultAzureCredential()


def _pipeline_kwargs(endpoint: str | None, ca_file: str | None, kwargs: dict[str, Any]) -> None:
    if endpoint:
        kwargs["base_url"] = endpoint.rstrip("/")
        kwargs.setdefault("credential_scopes", [f"{ARM_ENDPOINT}/.default"])
        # ARM names each long-running operation's wait (Retry-After); an endpoint that may
        # not (an emulator) is polled every second, not at the SDK's 30 s default
        kwargs.setdefault("polling_interval", 1.0)
    if ca_file:
        kwargs["connection_verify"] = ca_file


def compute_client(
    subscription_id: str,
    *,
    endpoint: str | None = None,
    credential: TokenCredential | None = None,
    ca_file: str | None = None,
    **kwargs: Any,
) -> ComputeManagementClient:
    """A ``ComputeManagementClient``; ``endpoint`` replaces ARM (with ``ca_file`` to trust a
    private CA), and other keywords go to the SDK's pipeline (retry settings, transport)."""
    _pipeline_kwargs(endpoint, ca_file, kwargs)
    return ComputeManagementClient(credential or default_credential(), subscription_id, **kwargs)


def resource_client(
    subscription_id: str,
    *,
    endpoint: str | None = None,
    credential: TokenCredential | None = None,
    ca_file: str | None = None,
    **kwargs: Any,
) -> Any:
    """A ``ResourceManagementClient`` (resource groups, provider registrations), made like
    :func:`compute_client`."""
    from azure.mgmt.resource.resources import ResourceManagementClient

    _pipeline_kwargs(endpoint, ca_file, kwargs)
    return ResourceManagementClient(credential or default_credential(), subscription_id, **kwargs)


def network_client(
    subscription_id: str,
    *,
    endpoint: str | None = None,
    credential: TokenCredential | None = None,
    ca_file: str | None = None,
    **kwargs: Any,
) -> Any:
    """A ``NetworkManagementClient`` (subnets), made like :func:`compute_client`."""
    from azure.mgmt.network import NetworkManagementClient

    _pipeline_kwargs(endpoint, ca_file, kwargs)
    return NetworkManagementClient(credential or default_credential(), subscription_id, **kwargs)
