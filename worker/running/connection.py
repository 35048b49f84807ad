"""Connecting to Temporal: address, namespace, mTLS or API key, optional OpenTelemetry."""

from __future__ import annotations

from pathlib import Path

from temporalio.client import Client
from temporalio.plugin import SimplePlugin
from temporalio.runtime import Runtime
from temporalio.service import TLSConfig

from worker.running.settings import TemporalSettings
from worker.usage import UsageError


def _read(path: str, what: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise UsageError(f"{what} {path}: {exc.strerror}") from None


def tls_config(s: TemporalSettings) -> TLSConfig | bool:
    if not s.tls:
        return False
    if bool(s.tls_cert) != bool(s.tls_key):
        raise UsageError("--tls-cert and --tls-key go together")
    if not (s.tls_cert or s.tls_ca):
        return True
    return TLSConfig(
        client_cert=_read(s.tls_cert, "--tls-cert") if s.tls_cert else None,
        client_private_key=_read(s.tls_key, "--tls-key") if s.tls_key else None,
        server_root_ca_cert=_read(s.tls_ca, "--tls-ca") if s.tls_ca else None,
    )


async def connect(
    s: TemporalSettings, plugins: list[SimplePlugin] | None = None, runtime: Runtime | None = None
) -> Client:
    """``runtime`` carries the SDK's telemetry (``worker.running.sdk_metrics``); the default one
    records no metrics."""
    try:
        return await Client.connect(
            s.address,
            namespace=s.namespace,
            tls=tls_config(s),
            api_key=s.api_key or None,
            plugins=list(plugins or []),
            runtime=runtime,
        )
    except RuntimeError as exc:
        raise UsageError(f"cannot reach Temporal at {s.address}: {exc}") from None
