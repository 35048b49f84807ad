"""``joinery doctor``: is this account and cluster ready for Joinery? One line per finding.

It reads, never writes: the EKS cluster (DescribeCluster), each EC2NodeClass (from files, or
from the cluster with a kubeconfig) resolved as the worker would (subnets, security groups,
AMIs for the cluster's Kubernetes version, the role or instance profile, the capacity
reservations each selector term finds), the interruption queue, the Spot service-linked
role, the account's instance metadata defaults, and the caller's IAM permissions against the
policy in activities/ec2/permissions.py (``iam:SimulatePrincipalPolicy``). Lines start with
``ok``, ``missing`` or ``unchecked``; the exit code is 1 when anything is missing, 0
otherwise, 2 on bad input.
"""

from __future__ import annotations

import argparse
import asyncio
import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import boto3
import yaml
from botocore.exceptions import ClientError
from pydantic import ValidationError

from activities.ec2 import permissions
from activities.ec2.capacity_reservations import list_reservations
from activities.ec2.clients import AWSClients
from activities.ec2.errors import EC2Error, classify
from activities.ec2.instance_profiles import InstanceProfiles
from activities.ec2.interruption import InterruptionQueue
from activities.ec2.provider import EC2Provider
from activities.ec2.selectors import describe_term
from activities.ec2.settings import ClusterInfo, ProviderSettings
from models.ec2nodeclass import EC2NodeClass
from models.errors import field_error
from worker.running.settings import add_aws_args, add_cluster_args
from worker.usage import UsageError

OK, MISSING, UNCHECKED = "ok", "missing", "unchecked"


@dataclass(frozen=True)
class Finding:
    status: str
    subject: str
    message: str

    def line(self) -> str:
        return f"{self.status:<9} {self.subject}: {self.message}"


def register(sub: Any) -> None:
    p = sub.add_parser("doctor", help="check the AWS account and cluster Joinery will run in")
    env = os.environ.get
    p.add_argument("--cluster", default=env("JOINERY_CLUSTER", "joinery"), help="EKS name")
    add_aws_args(p, queue_help="SQS interruption queue to check, name or URL")
    p.add_argument(
        "-f",
        "--nodeclass",
        action="append",
        default=[],
        help="EC2NodeClass YAML (repeatable; AKSNodeClass with --provider azure)",
    )
    p.add_argument("--kubeconfig", default="", help="read the EC2NodeClasses from this cluster")
    p.add_argument(
        "--temporal-address",
        default=env("TEMPORAL_ADDRESS", ""),
        help="check this Temporal frontend's namespace for Joinery's search attributes"
        " (default $TEMPORAL_ADDRESS; none: not checked)",
    )
    p.add_argument(
        "--namespace",
        default=env("TEMPORAL_NAMESPACE", "default"),
        help="the Temporal namespace the workers use (default $TEMPORAL_NAMESPACE, else default)",
    )
    add_cluster_args(p)
    _register_azure(p)
    p.set_defaults(func=run)


def _register_azure(p: argparse.ArgumentParser) -> None:
    """``--provider azure`` and its options (worker/cli/azure_doctor.py)."""
    from worker.cli.azure_args import add_azure_args, add_provider_arg
    from worker.cli.azure_doctor import register_args

    add_provider_arg(p)
    add_azure_args(p)
    register_args(p)


def run(args: argparse.Namespace) -> int:
    if args.provider == "azure":
        from worker.cli.azure_doctor import run_azure

        return run_azure(args)
    nodeclasses = [nc for path in args.nodeclass for nc in _load(path)]
    clients = AWSClients.create(args.region, args.aws_endpoint_url or None)
    static = ClusterInfo(
        args.cluster,
        **{
            k: v
            for k, v in {
                "endpoint": args.cluster_endpoint,
                "certificate_authority": args.cluster_ca_bundle,
                "service_cidr": args.service_cidr,
                "kubernetes_version": args.kubernetes_version,
            }.items()
            if v
        },
    )
    settings = ProviderSettings(region=args.region, cluster=static, discover_cluster=True)
    provider = EC2Provider.create(settings, clients, use_pricing_api=False)
    findings = list(check_cluster(provider))
    if args.kubeconfig:
        findings.extend(_from_cluster(args.kubeconfig, nodeclasses))
    profiles = InstanceProfiles(clients.iam, args.cluster, args.region)
    for nc in nodeclasses:
        findings.extend(check_nodeclass(provider, profiles, nc))
        findings.extend(check_capacity_reservations(clients.ec2, nc))
    findings.extend(check_queue(clients, args.interruption_queue))
    findings.extend(check_spot_service_role(clients.iam))
    findings.extend(check_metadata_defaults(clients.ec2))
    if args.temporal_address:
        findings.extend(check_search_attributes(args.temporal_address, args.namespace))
    roles = [nc.spec.role for nc in nodeclasses if nc.spec.role]
    findings.extend(
        check_permissions(
            args.region,
            args.aws_endpoint_url or None,
            clients.iam,
            args.cluster,
            args.interruption_queue,
            roles,
        )
    )
    for f in findings:
        print(f.line())
    return 1 if any(f.status == MISSING for f in findings) else 0


def _load(path: str) -> list[EC2NodeClass]:
    try:
        with open(path, encoding="utf-8") as fh:
            docs = [d for d in yaml.safe_load_all(fh) if isinstance(d, dict)]
    except (OSError, yaml.YAMLError) as exc:
        raise UsageError(f"{path}: {str(exc).splitlines()[0]}") from None
    out = []
    for doc in docs:
        if doc.get("kind") != "EC2NodeClass":
            continue
        try:
            out.append(EC2NodeClass.model_validate(doc))
        except ValidationError as exc:
            name = (doc.get("metadata") or {}).get("name", "?")
            raise UsageError(f"{path}: EC2NodeClass {name}: {field_error(exc)}") from None
    if not out:
        raise UsageError(f"{path}: no EC2NodeClass document")
    return out


def _from_cluster(kubeconfig: str, into: list[EC2NodeClass]) -> Iterable[Finding]:
    from activities.kubernetes import nodeclasses
    from activities.kubernetes.client import connect

    try:
        items, _ = nodeclasses.list_(connect(kubeconfig))
    except Exception as exc:
        yield Finding(MISSING, "Kubernetes", f"cannot list EC2NodeClasses: {_first_line(exc)}")
        return
    for item in items:
        try:
            into.append(EC2NodeClass.model_validate(item))
        except ValidationError as exc:
            name = item.get("metadata", {}).get("name", "?")
            yield Finding(MISSING, f"EC2NodeClass {name}", f"invalid: {field_error(exc)}")
    yield Finding(OK, "Kubernetes", f"{len(items)} EC2NodeClasses read")


def check_cluster(provider: EC2Provider) -> Iterable[Finding]:
    subject = f"EKS cluster {provider.settings.cluster_name}"
    try:
        info = provider.cluster.current()
    except EC2Error as exc:
        yield Finding(MISSING, subject, f"cannot be described ({exc})")
        return
    yield Finding(
        OK,
        subject,
        f"Kubernetes {info.kubernetes_version}, service CIDR {info.service_cidr}, "
        f"endpoint {info.endpoint or '(none)'}",
    )


def check_nodeclass(
    provider: EC2Provider, profiles: InstanceProfiles, nodeclass: EC2NodeClass
) -> Iterable[Finding]:
    subject = f"EC2NodeClass {nodeclass.name}"
    try:
        resolved = provider.resolve_nodeclass(nodeclass)
    except EC2Error as exc:
        yield Finding(MISSING, subject, f"cannot be resolved ({exc})")
        return
    problems = [
        c
        for c in resolved.conditions
        if c.status != "True" and c.type not in ("Ready", "InstanceProfileReady")
    ]
    for c in problems:
        yield Finding(MISSING, subject, c.message)
    try:
        state = profiles.check(nodeclass)
    except EC2Error as exc:
        yield Finding(UNCHECKED, subject, f"role / instance profile: {exc}")
        return
    if not state.ready:
        yield Finding(MISSING, subject, state.message)
        return
    if not problems:
        yield Finding(
            OK,
            subject,
            f"{len(resolved.subnets)} subnets, {len(resolved.security_groups)} security groups, "
            f"{len(resolved.amis)} AMIs, {state.message}",
        )


def check_capacity_reservations(ec2: Any, nodeclass: EC2NodeClass) -> Iterable[Finding]:
    """Each capacity-reservation term must find an active reservation: one that finds none
    leaves the pool on on-demand without a word (Karpenter's condition stays True)."""
    subject = f"EC2NodeClass {nodeclass.name}"
    for i, term in enumerate(nodeclass.spec.capacity_reservation_selector_terms):
        where = f"capacityReservationSelectorTerms[{i}] {describe_term(term)}"
        try:
            found = list_reservations(ec2, [term])
        except EC2Error as exc:
            yield Finding(UNCHECKED, subject, f"{where}: {exc}")
            continue
        if not found:
            yield Finding(MISSING, subject, f"{where}: no active capacity reservation matches")
        else:
            ids = ", ".join(
                f"{r.id} ({r.instance_type} {r.zone}, {r.available} free)" for r in found
            )
            yield Finding(OK, subject, f"{where}: {ids}")


def check_queue(clients: AWSClients, queue: str) -> Iterable[Finding]:
    if not queue:
        yield Finding(
            MISSING,
            "interruption queue",
            "none configured (--interruption-queue): spot interruptions and scheduled "
            "maintenance would go unnoticed",
        )
        return
    try:
        url = InterruptionQueue(clients.sqs, queue).url
        attrs = clients.sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])
    except Exception as exc:
        yield Finding(MISSING, f"interruption queue {queue}", f"does not exist ({_aws(exc)})")
        return
    yield Finding(OK, f"interruption queue {queue}", attrs["Attributes"]["QueueArn"])


def check_permissions(
    region: str,
    endpoint: str | None,
    iam: Any,
    cluster: str = "",
    queue: str = "",
    node_roles: Iterable[str] = (),
) -> Iterable[Finding]:
    """Simulate the documented policy's requests (activities/ec2/permissions.py, filled for
    this cluster) against the caller's role: each statement's actions on a resource of its
    kind with the tags Joinery sends, so tag-conditioned grants are checked as they apply."""
    subject = "IAM permissions"
    try:
        sts = boto3.session.Session().client("sts", region_name=region, endpoint_url=endpoint)
        arn = principal_arn(sts.get_caller_identity()["Arn"])
        fields = arn.split(":")
        partition, account = fields[1], fields[4]
        requests = []
        for role in sorted(set(node_roles)) or [""]:
            document = permissions.filled(
                partition,
                region,
                account,
                cluster or "<cluster>",
                queue or "<queue>",
                role or "<node-role>",
            )
            requests += [r for r in permissions.simulations(document, account) if r not in requests]
        denied: set[str] = set()
        for request in requests:
            resp = iam.simulate_principal_policy(PolicySourceArn=arn, **request)
            denied |= {
                r["EvalActionName"]
                for r in resp["EvaluationResults"]
                if r["EvalDecision"] != "allowed"
            }
    except ClientError as exc:
        yield Finding(UNCHECKED, subject, f"cannot simulate the policy ({_aws(exc)})")
        return
    except Exception as exc:  # an endpoint without the simulator answers garbage (moto)
        why = _first_line(exc)[:120]
        yield Finding(UNCHECKED, subject, f"no policy simulator at this endpoint ({why})")
        return
    checked = {a for r in requests for a in r["ActionNames"]}
    unchecked = sorted(set(permissions.actions()) - checked)
    note = (
        f" ({', '.join(unchecked)} not checked: no queue or node role given)" if unchecked else ""
    )
    if denied:
        yield Finding(MISSING, subject, f"{arn} is not allowed {', '.join(sorted(denied))}{note}")
    else:
        yield Finding(OK, subject, f"{arn} has all {len(checked)} actions, as scoped{note}")


SPOT_SERVICE_ROLE = "AWSServiceRoleForEC2Spot"


def check_spot_service_role(iam: Any) -> Iterable[Finding]:
    """Spot launches need EC2's Spot service-linked role; an account that never used Spot
    lacks it, and Joinery's policy may not create it (docs/deploy.md says how, once)."""
    subject = "Spot service-linked role"
    try:
        iam.get_role(RoleName=SPOT_SERVICE_ROLE)
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") == "NoSuchEntity":
            yield Finding(
                MISSING,
                subject,
                f"{SPOT_SERVICE_ROLE} does not exist: every spot launch will fail until it does"
                " (on-demand pools do not need it); create it with `aws iam"
                " create-service-linked-role --aws-service-name spot.amazonaws.com`",
            )
        else:
            yield Finding(UNCHECKED, subject, f"cannot read {SPOT_SERVICE_ROLE} ({_aws(exc)})")
        return
    yield Finding(OK, subject, f"{SPOT_SERVICE_ROLE} exists")


def check_search_attributes(address: str, namespace: str) -> Iterable[Finding]:
    """The namespace has every search attribute Joinery's workflows upsert, as Keyword: a
    missing one fails the disruption workflow's first acting round (BadSearchAttributes)."""
    from temporalio.client import Client
    from temporalio.service import RPCError

    from models import contract
    from worker.running import search_attributes

    subject = f"Temporal namespace {namespace}"

    async def read() -> tuple[list[str], list[str]]:
        client = await Client.connect(address, namespace=namespace)
        return await search_attributes.problems(client, namespace)

    try:
        missing, wrong = asyncio.run(asyncio.wait_for(read(), timeout=20))
    except RPCError as exc:
        yield Finding(UNCHECKED, subject, f"cannot list its search attributes ({exc.message})")
        return
    except Exception as exc:  # unreachable, TLS, timeout: said, not raised
        yield Finding(UNCHECKED, subject, f"cannot reach {address} ({_first_line(exc)[:120]})")
        return
    if missing or wrong:
        parts = []
        if missing:
            parts.append(f"lacks search attributes {', '.join(missing)}")
        if wrong:
            parts.append(f"has {', '.join(wrong)} of a type other than Keyword")
        fix = " ".join(f"--name {n} --type Keyword" for n in (*missing, *wrong))
        yield Finding(
            MISSING,
            subject,
            "; ".join(parts)
            + f" (register them: temporal operator search-attribute create --namespace"
            f" {namespace} {fix}, or start the worker with --register-search-attributes)",
        )
        return
    yield Finding(OK, subject, f"has all {len(contract.SEARCH_ATTRIBUTES)} search attributes")


def check_metadata_defaults(ec2: Any) -> Iterable[Finding]:
    """The account's IMDS defaults: said, since they apply wherever a template is silent
    (Joinery's templates set every field, InstanceMetadataTags included)."""
    subject = "instance metadata defaults"
    try:
        level = ec2.get_instance_metadata_defaults().get("AccountLevel") or {}
    except ClientError as exc:
        yield Finding(UNCHECKED, subject, f"cannot read them ({_aws(exc)})")
        return
    set_ = ", ".join(f"{k}={v}" for k, v in sorted(level.items())) or "none set (EC2's own)"
    note = ""
    if level.get("InstanceMetadataTags") == "enabled":
        note = (
            "; tags in IMDS would refuse Joinery's tag keys, so its launch templates set"
            " InstanceMetadataTags=disabled explicitly"
        )
    yield Finding(OK, subject, f"account defaults: {set_}{note}")


def principal_arn(caller: str) -> str:
    """An assumed-role session ARN → the role's ARN (what the policy simulator takes), in
    the caller's own partition (``arn:aws-cn:…`` in China, ``arn:aws-us-gov:…`` in GovCloud)."""
    if ":assumed-role/" in caller:
        fields = caller.split(":")
        partition, account = fields[1], fields[4]
        role = caller.split(":assumed-role/", 1)[1].split("/", 1)[0]
        return f"arn:{partition}:iam::{account}:role/{role}"
    return caller


def _aws(exc: BaseException) -> str:
    return _first_line(classify(exc) if not isinstance(exc, EC2Error) else exc)


def _first_line(exc: BaseException) -> str:
    return (str(exc).splitlines() or [type(exc).__name__])[0]
