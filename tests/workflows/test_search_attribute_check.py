"""The worker's start-up check of its namespace's search attributes, on the real dev server."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

import pytest
from google.protobuf.duration_pb2 import Duration
from temporalio.api.enums.v1 import IndexedValueType
from temporalio.api.operatorservice.v1 import (
    AddSearchAttributesRequest,
    ListSearchAttributesRequest,
)
from temporalio.api.workflowservice.v1 import RegisterNamespaceRequest
from temporalio.client import Client
from temporalio.service import RPCError
from temporalio.testing import WorkflowEnvironment

from models import contract
from worker.running import search_attributes
from worker.running.search_attributes import SearchAttributesMissing

pytestmark = pytest.mark.asyncio(loop_scope="session")
ROOT = Path(__file__).resolve().parents[2]
T = TypeVar("T")


async def eventually(call: Callable[[], Awaitable[T]], timeout: float = 30.0) -> T:
    """A namespace created a moment ago is unknown to the frontend's cache for a while."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        try:
            return await call()
        except (RPCError, SearchAttributesMissing) as exc:
            if isinstance(exc, SearchAttributesMissing) or (
                asyncio.get_running_loop().time() > deadline
            ):
                raise
            await asyncio.sleep(0.5)


async def fresh_namespace(client: Client) -> str:
    name = f"sa-{uuid.uuid4().hex[:8]}"
    await client.workflow_service.register_namespace(
        RegisterNamespaceRequest(
            namespace=name, workflow_execution_retention_period=Duration(seconds=86400)
        )
    )
    listing = ListSearchAttributesRequest(namespace=name)
    await eventually(lambda: client.operator_service.list_search_attributes(listing))
    return name


async def registered(client: Client, namespace: str) -> dict[str, int]:
    answer = await client.operator_service.list_search_attributes(
        ListSearchAttributesRequest(namespace=namespace)
    )
    return dict(answer.custom_attributes)


async def test_the_test_servers_namespace_passes(dev_env: WorkflowEnvironment) -> None:
    assert await search_attributes.ensure(dev_env.client, "default") == []


async def test_a_namespace_without_them_stops_the_worker_naming_each(
    dev_env: WorkflowEnvironment,
) -> None:
    client = dev_env.client
    namespace = await fresh_namespace(client)
    # one registered already, by hand, as operators following an older doc did
    await client.operator_service.add_search_attributes(
        AddSearchAttributesRequest(
            namespace=namespace,
            search_attributes={contract.SA_NODEPOOL: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD},
        )
    )
    with pytest.raises(SearchAttributesMissing) as raised:
        await search_attributes.ensure(client, namespace)
    line = str(raised.value)
    assert "\n" not in line and f"Temporal namespace {namespace} lacks" in line
    absent = [n for n in contract.SEARCH_ATTRIBUTES if n != contract.SA_NODEPOOL]
    assert line.split(" lacks the search attributes ")[1].startswith(", ".join(absent) + " ")
    # allowed to register: it adds exactly what was missing, and the next start passes
    added = await search_attributes.ensure(client, namespace, register=True)
    assert added == absent
    names = await registered(client, namespace)
    assert set(contract.SEARCH_ATTRIBUTES) <= set(names)
    assert await eventually(lambda: search_attributes.ensure(client, namespace)) == []


async def test_one_of_the_wrong_type_is_named(dev_env: WorkflowEnvironment) -> None:
    client = dev_env.client
    namespace = await fresh_namespace(client)
    await client.operator_service.add_search_attributes(
        AddSearchAttributesRequest(
            namespace=namespace,
            search_attributes={contract.SA_ZONE: IndexedValueType.INDEXED_VALUE_TYPE_TEXT},
        )
    )
    with pytest.raises(SearchAttributesMissing, match=r"search attributes Zone are not of type"):
        await search_attributes.ensure(client, namespace, register=True)


KUBECONFIG = """apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:9"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
"""


async def test_the_worker_command_exits_2_in_one_line(
    dev_env: WorkflowEnvironment, tmp_path: Path
) -> None:
    """Nothing else is reachable (Kubernetes, EC2): the check comes before any use of them."""
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(KUBECONFIG)
    namespace = await fresh_namespace(dev_env.client)
    address = dev_env.client.service_client.config.target_host
    done = await asyncio.to_thread(
        subprocess.run,
        [
            sys.executable, "-m", "worker.cli", "worker",
            "--address", address,
            "--namespace", namespace,
            "--search-attributes",
            "--aws-endpoint-url", "http://127.0.0.1:9",
            "--kubeconfig", str(kubeconfig),
            "--cluster-endpoint", "https://k8s.example",
            "--cluster-ca-bundle", "Q0E=",
            "--service-cidr", "10.100.0.0/16",
            "--kubernetes-version", "1.31",
            "--health-port", "0",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT), "AWS_ACCESS_KEY_ID": "x",
             "AWS_SECRET_ACCESS_KEY": "x"},
    )  # fmt: skip
    assert done.returncode == 2, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(f"joinery worker: Temporal namespace {namespace} lacks the search")


async def test_doctor_names_the_missing_ones_and_passes_a_complete_namespace(
    dev_env: WorkflowEnvironment,
) -> None:
    """``joinery doctor --temporal-address``: the same check, read only, one line each."""
    from worker.cli.doctor_command import MISSING, OK, check_search_attributes

    address = dev_env.client.service_client.config.target_host
    namespace = await fresh_namespace(dev_env.client)
    (finding,) = await asyncio.to_thread(lambda: list(check_search_attributes(address, namespace)))
    assert finding.status == MISSING
    assert all(name in finding.message for name in contract.SEARCH_ATTRIBUTES)
    assert "--register-search-attributes" in finding.message
    (finding,) = await asyncio.to_thread(lambda: list(check_search_attributes(address, "default")))
    assert finding.status == OK
    (finding,) = await asyncio.to_thread(
        lambda: list(check_search_attributes("127.0.0.1:1", "default"))
    )
    assert finding.status == "unchecked" and "127.0.0.1:1" in finding.message
