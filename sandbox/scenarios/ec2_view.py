"""The EC2 emulator as scenarios see it: instances read through EC2's API, prices from the
emulation, spot interruptions as EventBridge messages on the interruption queue."""

from __future__ import annotations

import json
import time
import uuid

from activities.ec2.instances import InstanceProvider
from activities.ec2.partitions import partition
from sandbox.dev import DevStack
from sandbox.scenarios.cloud_view import Machine, Obj


class EC2View:
    name = "aws"

    def __init__(self, stack: DevStack) -> None:
        assert stack.aws and stack.emulation
        self.stack = stack
        self.region = stack.options.region
        self.instances = InstanceProvider(stack.aws.ec2, stack.options.cluster_name)

    def live(self) -> list[Machine]:
        return list(self.instances.list_owned())

    def price(self, machine: Machine) -> float:
        assert self.stack.emulation is not None
        return self.stack.emulation.price(
            self.region, machine.capacity_type, machine.instance_type, machine.zone
        )

    def interrupt(self, machine: Machine) -> str:
        """The EventBridge "EC2 Spot Instance Interruption Warning" for one instance, via SQS."""
        assert self.stack.aws is not None
        event = {
            "version": "0",
            "id": str(uuid.uuid4()),
            "detail-type": "EC2 Spot Instance Interruption Warning",
            "source": "aws.ec2",
            "account": "123456789012",
            "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "region": self.region,
            "resources": [f"arn:{partition(self.region)}:ec2:{machine.zone}:instance/{machine.id}"],
            "detail": {"instance-id": machine.id, "instance-action": "terminate"},
        }
        self.stack.aws.sqs.send_message(
            QueueUrl=self.stack.interruption_queue_url, MessageBody=json.dumps(event)
        )
        return str(event["id"])

    def leftovers(self) -> dict[str, int]:
        return {}

    def max_cpu_requirement(self, cpus: int) -> Obj:
        return {
            "key": "karpenter.k8s.aws/instance-cpu",
            "operator": "Lt",
            "values": [str(cpus + 1)],
        }

    def catalog_args(self) -> list[str]:
        assert self.stack.moto is not None
        return [
            "--region",
            self.region,
            "--endpoint-url",
            self.stack.moto.endpoint_url,
            "--cluster-name",
            self.stack.options.cluster_name,
        ]

    def close(self) -> None:
        return None
