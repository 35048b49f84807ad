"""AWS faults at the boto3 layer, in front of moto: absorbed, reported, never a second instance.

Faults are injected by sandbox.ec2.faults (botocore ``before-send`` hooks), so botocore's own
retry handler (exponential backoff with full jitter) and Joinery's error classification run
as in production. The call inventory (activities/ec2/permissions.py) is checked against the
code here too: every boto3 call in activities/ec2 is listed, and every listed call is faulted.
"""

from __future__ import annotations

import ast
import json
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.retries.standard import ExponentialBackoff

from activities.ec2.clients import AWSClients
from activities.ec2.errors import EC2Error, Throttled, TransientError
from activities.ec2.interruption import InterruptionQueue
from activities.ec2.launch_types import LaunchResult
from activities.ec2.permissions import CALLS
from activities.ec2.pricing import PRICING_API, PricingProvider, offline_table
from activities.ec2.provider import EC2Provider
from activities.ec2.settings import ClusterInfo, ProviderSettings
from sandbox.ec2.faults import KINDS, LOST, FaultInjector
from sandbox.ec2.pricing_api import PricingApi

REGION = "us-east-1"
CLUSTER = "test-cluster"
ROLE = f"KarpenterNodeRole-{CLUSTER}"
EC2_DIR = Path(__file__).resolve().parents[3] / "activities" / "ec2"
CLIENT_NAMES = {
    "ec2": "ec2",
    "_ec2": "ec2",
    "ssm": "ssm",
    "_ssm": "ssm",
    "_sqs": "sqs",
    "_iam": "iam",
    "_eks": "eks",
    "_pricing": "pricing",
}


def calls_in_code() -> set[str]:
    """``service:Operation`` of every boto3 call (or paginator) in activities/ec2."""
    mapping = {
        svc: boto3.client(svc, region_name=REGION).meta.method_to_api_mapping
        for svc in set(CLIENT_NAMES.values())
    }
    found: set[str] = set()
    for path in EC2_DIR.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            target = node.func.value
            name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
            service = CLIENT_NAMES.get(name)
            if service is None:
                continue
            method = node.func.attr
            if method == "get_paginator" and node.args:
                arg = node.args[0]
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    method = arg.value
                else:
                    method = ""
            if method in mapping[service]:
                found.add(f"{service}:{mapping[service][method]}")
    return found


def test_permission_inventory_matches_the_code() -> None:
    assert calls_in_code() == set(CALLS)


def test_the_pricing_api_gap_pages_like_the_real_api() -> None:
    """moto has no Price List API; sandbox.ec2.pricing_api answers GetProducts in its wire
    format, a page of 100 at a time, and the provider reads every page."""
    client = boto3.client(
        "pricing",
        region_name=REGION,
        endpoint_url="http://127.0.0.1:9",  # never reached: every GetProducts is answered
        aws_access_key_id="x",
        aws_secret_access_key="x",
    )
    api = PricingApi().attach(client)
    pricing = PricingProvider(REGION, ec2=None, pricing=client)
    pricing.refresh_on_demand()
    table = offline_table()[REGION]
    assert pricing.on_demand_source == PRICING_API
    assert pricing.snapshot()[0] == table
    assert api.answered == -(-len(table) // 100) > 1


# -- the provider under fault --------------------------------------------------------------------
BACKOFF_SCALE = 0.05


@pytest.fixture(autouse=True)
def shortened_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """botocore's own backoff (truncated exponential, full jitter, throttles slower than other
    errors) decides every retry as in production; only the wait is 1/20 of it. Unscaled,
    throttling alone slept ~20 s per test here (random(0, 1) x 2^attempt for each of ~30
    faulted calls)."""
    delay_amount = ExponentialBackoff.delay_amount

    def shortened(self: ExponentialBackoff, context: Any) -> float:
        return float(delay_amount(self, context)) * BACKOFF_SCALE

    monkeypatch.setattr(ExponentialBackoff, "delay_amount", shortened)


def _provider(env: Any, catalog: Any, injector: FaultInjector, queue: str = "") -> EC2Provider:
    clients = AWSClients.create(REGION, env.server.endpoint_url, env.server.session())
    injector.attach(clients.ec2, clients.ssm, clients.sqs, clients.eks, clients.iam)
    injector.attach(clients.pricing)
    PricingApi().attach(clients.pricing)  # moto lacks it: after the faults, like moto's calls
    settings = ProviderSettings(
        region=REGION,
        cluster=ClusterInfo(CLUSTER),
        discover_cluster=True,
        manage_instance_profiles=True,
        interruption_queue=queue or None,
    )
    provider = EC2Provider.create(settings, clients, clock=env.clock)
    provider.pricing.load(catalog.on_demand, catalog.spot, catalog.source)
    return provider


def _interruption(instance_id: str) -> str:
    return json.dumps(
        {
            "source": "aws.ec2",
            "detail-type": "EC2 Spot Instance Interruption Warning",
            "detail": {"instance-id": instance_id, "instance-action": "terminate"},
        }
    )


def _live_instances(env: Any) -> Counter[str]:
    """NodeClaim tag → live instances (read without faults)."""
    out: Counter[str] = Counter()
    for r in env.clients.ec2.describe_instances()["Reservations"]:
        for i in r["Instances"]:
            if i["State"]["Name"] in ("pending", "running"):
                tags = {t["Key"]: t["Value"] for t in i.get("Tags", [])}
                out[tags.get("karpenter.sh/nodeclaim", "")] += 1
    return out


def every_call(env: Any, provider: EC2Provider, make_nodeclass: Any, make_request: Any) -> None:
    """One pass through every AWS call Joinery makes, asserting each outcome."""
    assert provider.cluster.current().kubernetes_version == "1.31"  # eks:DescribeCluster
    provider.pricing.refresh_on_demand()  # pricing:GetProducts (emulated: moto lacks it)
    assert provider.pricing.on_demand_price("m5.large") == offline_table()[REGION]["m5.large"]
    nc = make_nodeclass.build(role=ROLE)
    types = provider.instance_types(nc)  # catalog, spot prices, NodeClass resolution, IAM
    assert any(t.name == "m5.large" for t in types)
    resolved = provider.resolve_nodeclass(nc)
    assert resolved.ready, resolved.not_ready_reason()
    result = provider.launch(make_request.build("claim-a"), nc)
    assert _live_instances(env)["claim-a"] == 1
    env.clients.iam.create_role(RoleName="OtherRole", AssumeRolePolicyDocument="{}")
    assert provider.resolve_nodeclass(make_nodeclass.build(role="OtherRole")).ready
    env.clients.ec2.create_placement_group(GroupName="faults-pg", Strategy="spread")
    placed = make_nodeclass.build(role=ROLE, placementGroupSelector={"name": "faults-pg"})
    group = provider.resolve_nodeclass(placed).placement_group  # DescribePlacementGroups
    assert group is not None and group.strategy == "spread"
    reserving = make_nodeclass.build(
        role=ROLE, capacityReservationSelectorTerms=[{"tags": {"team": "faults"}}]
    )
    found = provider.resolve_nodeclass(reserving)  # DescribeCapacityReservations
    assert found.ready and found.capacity_reservations == []
    assert provider.unhealthy_instances(datetime.now(UTC)) == []  # DescribeInstanceStatus
    assert provider.interruption_queue() is not None
    # as the provider's queue (found by name: GetQueueUrl), a kept message back after 1 s, not 10
    queue = InterruptionQueue(
        provider.clients.sqs, provider.settings.interruption_queue or "", retry_seconds=1
    )
    env.clients.sqs.send_message(QueueUrl=queue.url, MessageBody=_interruption(result.instance_id))
    seen: list[str] = []
    first_try = True

    def handle(event: Any) -> bool:
        nonlocal first_try
        if first_try:  # not known yet: kept (ChangeMessageVisibility)
            first_try = False
            return False
        seen.extend(event.instance_ids)
        return True

    deadline = time.monotonic() + 20
    while not seen and time.monotonic() < deadline:
        queue.poll_once(handle)
    assert seen == [result.instance_id]
    provider.delete(result.instance_id)
    assert _live_instances(env)["claim-a"] == 0
    later = datetime.now(UTC) + timedelta(minutes=10)
    deleted = provider.garbage_collect([], now=later)
    assert deleted["launchTemplates"] and deleted["instanceProfiles"]


@pytest.fixture
def queue_url(env: Any) -> str:
    attrs = {"VisibilityTimeout": "1"}  # a lost ReceiveMessage hides the message 1 s only
    return str(env.clients.sqs.create_queue(QueueName="faults", Attributes=attrs)["QueueUrl"])


@pytest.mark.parametrize("kind", KINDS)
def test_every_call_survives_a_fault_on_its_first_attempt(
    env: Any,
    session_catalog: Any,
    make_nodeclass: Any,
    make_request: Any,
    queue_url: str,
    kind: str,
) -> None:
    injector = FaultInjector(every_first_attempt=kind)
    provider = _provider(env, session_catalog, injector, "faults")  # by name: GetQueueUrl
    every_call(env, provider, make_nodeclass, make_request)
    faulted = {op for op, k in injector.injected if k == kind}
    assert faulted >= set(CALLS), sorted(set(CALLS) - faulted)
    # the Pricing API (one retry, as it is optional) answered on its retry
    assert provider.pricing.on_demand_source == PRICING_API
    # each faulted call was retried: more attempts than calls
    assert sum(injector.attempts.values()) >= 2 * len(faulted)


def test_persistent_faults_are_reported_typed_and_the_retry_launches_once(
    env: Any, session_catalog: Any, make_nodeclass: Any, make_request: Any
) -> None:
    injector = FaultInjector()
    provider = _provider(env, session_catalog, injector)
    provider.catalog.use_raw(session_catalog.raw)  # its faults are the tests' above
    nc = make_nodeclass.build(role=ROLE)
    provider.instance_types(nc)
    # boto3 gives up after its retries: the activity sees a typed, retryable error naming
    # the call, and Temporal's retry of the activity launches exactly once.
    injector.inject("CreateFleet", LOST, *["throttle"] * 5)
    with pytest.raises(Throttled, match="CreateFleet") as throttled:
        provider.launch(make_request.build("claim-p"), nc)
    assert throttled.value.retryable
    result = provider.launch(make_request.build("claim-p"), nc)
    assert result.reused  # found by its NodeClaim tag: the lost call had launched it
    assert _live_instances(env)["claim-p"] == 1
    injector.inject("DescribeSubnets", *["5xx"] * 6)
    with pytest.raises(TransientError, match="DescribeSubnets"):
        provider.resolve_nodeclass(nc)


def test_a_refusal_no_retry_fixes_becomes_a_condition(
    env: Any, session_catalog: Any, make_nodeclass: Any
) -> None:
    injector = FaultInjector()
    provider = _provider(env, session_catalog, injector)
    original = injector._on_send

    def deny(service: str, protocol: str, operation: str, request: Any) -> Any:
        if operation == "CreateInstanceProfile":
            from sandbox.ec2.faults import error_response

            return error_response(protocol, 403, "AccessDenied", request.url)
        return original(service, protocol, operation, request)

    injector._on_send = deny  # type: ignore[method-assign]
    resolved = provider.resolve_nodeclass(make_nodeclass.build(role=ROLE))
    c = next(c for c in resolved.conditions if c.type == "InstanceProfileReady")
    assert (c.status, c.reason) == ("False", "InstanceProfileError")
    assert "AccessDenied" in c.message and "CreateInstanceProfile" in c.message


def test_hundred_launches_with_30_percent_of_calls_failing_never_double_launch(
    env: Any, session_catalog: Any, make_nodeclass: Any, make_request: Any
) -> None:
    injector = FaultInjector(rate=0.3, seed=11)
    provider = _provider(env, session_catalog, injector)
    provider.catalog.use_raw(session_catalog.raw)
    nc = make_nodeclass.build(role=ROLE)
    activity_retries: Counter[str] = Counter()
    # Launches are batched, so a hundred claims make only a dozen or two CreateFleet calls and
    # a random lost answer among them is not certain: the first one's answer is lost on purpose.
    injector.inject("CreateFleet", LOST)

    def launch(name: str) -> LaunchResult:
        """What the NodeClaim workflow does: retry the activity while the error is retryable."""
        for _ in range(40):
            try:
                return provider.launch(make_request.build(name), nc)
            except EC2Error as exc:
                if not exc.retryable:
                    raise
                activity_retries[name] += 1
        raise AssertionError(f"{name}: still failing after 40 activity attempts")

    names = [f"claim-{i:03d}" for i in range(100)]
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(launch, names))
    injector.clear()
    live = _live_instances(env)
    assert {n: live[n] for n in names} == dict.fromkeys(names, 1)  # zero double launches
    assert len({r.instance_id for r in results}) == 100
    faults = Counter(k for _, k in injector.injected)
    attempts = sum(injector.attempts.values())
    print(
        f"\n100 launches: {attempts} AWS attempts, {len(injector.injected)} faults "
        f"({dict(faults)}), {sum(activity_retries.values())} activity retries, "
        f"{sum(r.reused for r in results)} launches found by tag after a lost answer"
    )
    assert 0.2 < len(injector.injected) / attempts < 0.4
    assert faults[LOST] > 0 and {k for k in faults} == set(KINDS)
    # the dangerous case happened: CreateFleet took effect and its answer was lost
    assert ("ec2:CreateFleet", LOST) in injector.injected
