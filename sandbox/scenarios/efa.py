"""``efa``: pods that request EFA get nodes launched with EFA interfaces, then leave.

Two pods, one per node, each requesting ``vpc.amazonaws.com/efa: 1`` (as an MPI or NCCL job
would, through the EFA device plugin). Joinery must plan them onto types that have EFA and
launch those instances from a template with one EFA interface per network card the type
supports (Karpenter's rule): a node launched without them would never advertise the
resource and its pods would stay Pending. Checked against EC2's own answers: each
instance's launch template and the type's ``MaximumEfaInterfaces``. Then the Deployment is
deleted and every instance must be terminated.
"""

from __future__ import annotations

import time
from typing import Any

from activities.ec2.launch_templates import LT_ID_TAG
from sandbox.scenarios.common import (
    Sandbox,
    Summary,
    Workload,
    remove_workloads,
    start_workloads,
)

NAME = "efa"
EFA = "vpc.amazonaws.com/efa"
WORKLOADS: tuple[Workload, ...] = (("mpi", 2, "1", "1Gi"),)


def run(sandbox: Sandbox, summary: Summary, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    started = start_workloads(
        sandbox,
        summary,
        NAME,
        WORKLOADS,
        deadline=deadline,
        one_per_node=True,
        extra_requests={EFA: "1"},
    )
    checked = 0
    launched = {i.id for i in started.instances}
    for instance in [i for i in sandbox.instances.list_owned() if i.id in launched]:
        wanted = _max_efa(sandbox, instance.instance_type)
        got = _efa_interfaces(sandbox, instance.tags.get(LT_ID_TAG, ""))
        sandbox.log(f"{instance.id} {instance.instance_type}: {got} EFA interface(s) of {wanted}")
        if wanted < 1:
            summary.failures.append(f"{instance.instance_type} has no EFA, yet took an EFA pod")
        elif got != wanted:
            summary.failures.append(
                f"{instance.id} ({instance.instance_type}) launched with {got} EFA "
                f"interface(s); the type has {wanted}"
            )
        checked += 1
    for node in sandbox.nodes():
        offered = (node.get("status") or {}).get("capacity", {}).get(EFA)
        if not offered or offered == "0":
            name = node["metadata"]["name"]
            summary.failures.append(f"node {name} advertises no {EFA}")
    summary.extra["efaInstancesChecked"] = checked
    remove_workloads(sandbox, started, WORKLOADS, deadline=deadline)


def _max_efa(sandbox: Sandbox, instance_type: str) -> int:
    answer = sandbox.ec2.describe_instance_types(InstanceTypes=[instance_type])
    (info,) = answer["InstanceTypes"]
    efa: dict[str, Any] = info.get("NetworkInfo", {}).get("EfaInfo") or {}
    return int(efa.get("MaximumEfaInterfaces", 0))


def _efa_interfaces(sandbox: Sandbox, template_id: str) -> int:
    if not template_id:
        return 0
    versions = sandbox.ec2.describe_launch_template_versions(LaunchTemplateId=template_id)
    data = versions["LaunchTemplateVersions"][0]["LaunchTemplateData"]
    return sum(1 for i in data.get("NetworkInterfaces", []) if i.get("InterfaceType") == "efa")
