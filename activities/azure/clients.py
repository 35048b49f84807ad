"""The Azure SDK clients, made in one place so tests and the sandbox can point them at the
emulator (``endpoint`` and its CA) without touching the code that uses them."""

from __future__ import annotations

from typing import Any

from azure.core.credentials import TokenCredential
from azure.mgmt.compute import ComputeManagementClient

ARM_ENDPOINT = "https://management.azure.com"


def default_credential() -> TokenCredential:
    """Workload identity, managed identity, environment or CLI login: whatever the host has."""
    from azure.identity import DefaultAzureCredential

    return DefaultAzureCredential()


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
    if endpoint:
        kwargs["base_url"] = endpoint.rstrip("/")
        kwargs.setdefault("credential_scopes", [f"{ARM_ENDPOINT}/.default"])
    if ca_file:
        kwargs["connection_verify"] = ca_file
    return ComputeManagementClient(credential or default_credential(), subscription_id, **kwargs)
