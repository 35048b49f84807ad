"""OpenTelemetry: traces of workflows and activities through temporalio's OpenTelemetryPlugin,
exported over OTLP/HTTP only when an endpoint is configured (``--otlp-endpoint`` or
``OTEL_EXPORTER_OTLP_ENDPOINT``).

Every client and worker call gets a span (``StartWorkflow:<type>``, ``RunWorkflow:<type>``,
``StartActivity:<name>``, ``RunActivity:<name>``, signals, queries, updates), all of one
workflow run in one trace, with ``service.name`` ``joinery``.

The plugin reads the process-global tracer provider (it must be temporalio's replay-safe one),
and OpenTelemetry lets that be set only once per process. So ``tracing()`` installs it and
also returns it, for whoever must flush or shut it down (a test, in its own process); the
worker only calls ``plugins()`` and lets the provider flush at exit.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from temporalio.plugin import SimplePlugin

if TYPE_CHECKING:
    from temporalio.contrib.opentelemetry import ReplaySafeTracerProvider

log = logging.getLogger(__name__)


def traces_url(otlp_endpoint: str) -> str:
    """``OTEL_EXPORTER_OTLP_ENDPOINT`` is the collector's base URL; traces go to /v1/traces."""
    endpoint = otlp_endpoint.rstrip("/")
    return endpoint if endpoint.endswith("/v1/traces") else endpoint + "/v1/traces"


def tracing(
    otlp_endpoint: str, service_name: str = "joinery"
) -> tuple[list[SimplePlugin], ReplaySafeTracerProvider | None]:
    """The client plugins and the (now global) tracer provider; none without an endpoint."""
    if not otlp_endpoint:
        return [], None
    # Imported here: exporting is off by default and these pull in protobuf and requests.
    import opentelemetry.trace
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from temporalio.contrib.opentelemetry import OpenTelemetryPlugin, create_tracer_provider

    provider = create_tracer_provider(resource=Resource.create({"service.name": service_name}))
    url = traces_url(otlp_endpoint)
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=url)))
    opentelemetry.trace.set_tracer_provider(provider)
    log.info("exporting traces to %s", url)
    # Without add_temporal_spans the plugin only propagates context and records no span.
    return [OpenTelemetryPlugin(add_temporal_spans=True)], provider


def plugins(otlp_endpoint: str, service_name: str = "joinery") -> list[SimplePlugin]:
    return tracing(otlp_endpoint, service_name)[0]
