"""Traces over OTLP/HTTP: a workflow with one activity, run through a worker with
``worker.running.telemetry``'s plugins on the dev server, reaches a loopback OTLP receiver as
spans of one trace with ``service.name`` ``joinery``.

The plugin needs the process-global tracer provider, which can be set once per process, so
the traced part runs in a child Python process (``child_main``); the receiver and the checks
stay here.
"""

from __future__ import annotations

import asyncio
import gzip
import os
import sys
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import opentelemetry.trace
import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from temporalio import activity, workflow
from temporalio.testing import WorkflowEnvironment

from worker.running import telemetry

# -- what the child runs ---------------------------------------------------------------------


@activity.defn
async def telemetry_probe(name: str) -> str:
    return f"hello {name}"


@workflow.defn
class TelemetryProbe:
    @workflow.run
    async def run(self, name: str) -> str:
        return await workflow.execute_activity(
            telemetry_probe, name, start_to_close_timeout=timedelta(seconds=30)
        )


async def _traced_run(address: str, endpoint: str, task_queue: str, workflow_id: str) -> None:
    from temporalio.worker import Worker

    from worker.running.connection import connect
    from worker.running.settings import TemporalSettings

    plugins, provider = telemetry.tracing(endpoint)
    assert plugins and provider is not None
    client = await connect(TemporalSettings(address=address, task_queue=task_queue), plugins)
    async with Worker(
        client, task_queue=task_queue, workflows=[TelemetryProbe], activities=[telemetry_probe]
    ):
        result = await client.execute_workflow(
            TelemetryProbe.run, "traces", id=workflow_id, task_queue=task_queue
        )
    assert result == "hello traces", result
    assert provider.force_flush(10_000), "spans not flushed"
    provider.shutdown()


def child_main(argv: list[str]) -> None:
    asyncio.run(_traced_run(*argv))


# -- a loopback OTLP/HTTP receiver -----------------------------------------------------------


@dataclass
class Receiver:
    url: str
    requests: list[ExportTraceServiceRequest] = field(default_factory=list)
    bad_paths: list[str] = field(default_factory=list)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    got = Receiver(url="")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if self.path != "/v1/traces":
                got.bad_paths.append(self.path)
                self.send_error(404)
                return
            if self.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            request = ExportTraceServiceRequest()
            request.ParseFromString(body)
            got.requests.append(request)
            reply = ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    got.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield got
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


@dataclass(frozen=True)
class Span:
    service: str
    name: str
    trace_id: bytes
    span_id: bytes
    parent_span_id: bytes
    attributes: dict[str, str]


def spans_of(requests: list[ExportTraceServiceRequest]) -> list[Span]:
    out = []
    for request in requests:
        for resource_spans in request.resource_spans:
            resource = {a.key: a.value.string_value for a in resource_spans.resource.attributes}
            for scope_spans in resource_spans.scope_spans:
                for s in scope_spans.spans:
                    out.append(
                        Span(
                            service=resource.get("service.name", ""),
                            name=s.name,
                            trace_id=s.trace_id,
                            span_id=s.span_id,
                            parent_span_id=s.parent_span_id,
                            attributes={a.key: a.value.string_value for a in s.attributes},
                        )
                    )
    return out


# -- tests -----------------------------------------------------------------------------------


@pytest.mark.asyncio(loop_scope="session")
async def test_workflow_and_activity_spans_reach_the_otlp_receiver(
    dev_env: WorkflowEnvironment, task_queue: str, receiver: Receiver
) -> None:
    address = dev_env.client.service_client.config.target_host
    workflow_id = f"otel-{uuid.uuid4().hex[:8]}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    code = "import sys; import tests.workflows.test_telemetry as t; t.child_main(sys.argv[1:])"
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        code,
        address,
        receiver.url,  # the collector's base URL, as OTEL_EXPORTER_OTLP_ENDPOINT gives it
        task_queue,
        workflow_id,
        env=env,
        cwd=Path(__file__).resolve().parents[2],  # the repository root: `tests` imports
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    output, _ = await asyncio.wait_for(child.communicate(), 120)
    assert child.returncode == 0, output.decode(errors="replace")

    assert not receiver.bad_paths
    spans = spans_of(receiver.requests)
    assert spans, "the receiver got no spans"
    assert {s.service for s in spans} == {"joinery"}
    by_name = {s.name: s for s in spans}
    start_wf = by_name.get("StartWorkflow:TelemetryProbe")
    run_wf = by_name.get("RunWorkflow:TelemetryProbe")
    start_act = by_name.get("StartActivity:telemetry_probe")
    run_act = by_name.get("RunActivity:telemetry_probe")
    assert start_wf and run_wf and start_act and run_act, sorted(by_name)
    assert run_wf.attributes["temporalWorkflowID"] == workflow_id
    assert run_act.attributes["temporalWorkflowID"] == workflow_id
    # One trace, parented client → workflow → activity across the server and the worker.
    assert len({s.trace_id for s in (start_wf, run_wf, start_act, run_act)}) == 1
    assert run_wf.parent_span_id == start_wf.span_id
    assert start_act.parent_span_id == run_wf.span_id
    assert run_act.parent_span_id == start_act.span_id


def test_no_endpoint_no_plugins_and_no_provider() -> None:
    before = opentelemetry.trace.get_tracer_provider()
    assert telemetry.tracing("") == ([], None)
    assert telemetry.plugins("") == []
    assert opentelemetry.trace.get_tracer_provider() is before


@pytest.mark.parametrize(
    "endpoint",
    ["http://collector:4318", "http://collector:4318/", "http://collector:4318/v1/traces"],
)
def test_traces_url(endpoint: str) -> None:
    assert telemetry.traces_url(endpoint) == "http://collector:4318/v1/traces"
