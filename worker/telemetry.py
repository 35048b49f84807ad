"""OpenTelemetry: traces of workflows and activities through temporalio's OpenTelemetryPlugin,
exported over OTLP only when an endpoint is configured (``--otlp-endpoint`` or
``OTEL_EXPORTER_OTLP_ENDPOINT``)."""

from __future__ import annotations

import logging

from temporalio.plugin import SimplePlugin

from worker.cli import UsageError

log = logging.getLogger(__name__)


def plugins(otlp_endpoint: str, service_name: str = "joinery") -> list[SimplePlugin]:
    if not otlp_endpoint:
        return []
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import (  # type: ignore[import-not-found,unused-ignore]
            OTLPSpanExporter,
        )
    except ImportError:
        raise UsageError(
            "--otlp-endpoint needs the opentelemetry-exporter-otlp-proto-http package"
        ) from None
    import opentelemetry.trace
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from temporalio.contrib.opentelemetry import OpenTelemetryPlugin, create_tracer_provider

    provider = create_tracer_provider(resource=Resource.create({"service.name": service_name}))
    endpoint = otlp_endpoint.rstrip("/")
    if not endpoint.endswith("/v1/traces"):
        endpoint += "/v1/traces"
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint)))
    opentelemetry.trace.set_tracer_provider(provider)
    log.info("exporting traces to %s", endpoint)
    return [OpenTelemetryPlugin()]
