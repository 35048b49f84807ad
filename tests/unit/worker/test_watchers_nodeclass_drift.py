"""The watchers start a disruption round when an EC2NodeClass changes in a way that may drift
nodes (its spec's generation, or the ids of its resolved AMIs, subnets or security groups),
not on every status write (its conditions move without drifting anything)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.support.watcher_signals import signalling_watchers


def nodeclass(generation: int, amis: list[str], ready_since: str) -> dict[str, Any]:
    return {
        "metadata": {"name": "default", "generation": generation},
        "status": {
            "amis": [{"id": a, "requirements": []} for a in amis],
            "subnets": [{"id": "subnet-a", "zone": "us-east-1a"}],
            "securityGroups": [{"id": "sg-1"}],
            "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": ready_since}],
        },
    }


def test_a_new_ami_or_spec_edit_signals_disruption_a_condition_write_does_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    watchers, signals = signalling_watchers(monkeypatch)
    watchers.on_nodeclass("ADDED", nodeclass(1, ["ami-1"], "t0"))
    assert signals == ["changed"]  # first seen
    watchers.on_nodeclass("MODIFIED", nodeclass(1, ["ami-1"], "t1"))
    assert signals == ["changed"]  # a condition moved: nothing drifts
    watchers.on_nodeclass("MODIFIED", nodeclass(1, ["ami-2", "ami-1"], "t1"))
    assert signals == ["changed"] * 2  # a newer AMI
    watchers.on_nodeclass("MODIFIED", nodeclass(2, ["ami-2", "ami-1"], "t1"))
    assert signals == ["changed"] * 3  # the spec was edited
    other = copy.deepcopy(nodeclass(2, ["ami-2", "ami-1"], "t1"))
    other["status"]["securityGroups"].append({"id": "sg-2"})
    watchers.on_nodeclass("MODIFIED", other)
    assert signals == ["changed"] * 4  # another security group
    watchers.on_nodeclass("DELETED", other)
    watchers.on_nodeclass("ADDED", other)
    assert signals == ["changed"] * 5  # recreated: seen anew
