"""The real kube-scheduler judges Joinery's plans and disruption rounds (issue 35, part 4).

Each round is a generated cluster (``scheduler_scenarios``) in a namespace of its own on the
session's control plane, with nodes named and labelled for the round and deleted after it, so
rounds share the control plane but never each other's nodes or pods. Every pod Joinery
moves (``--disruption``) or places (``plan``) is pinned to Joinery's node and must be bound
there by the real scheduler. ``KUBE_ORACLE_ROUNDS`` sets how many disruption rounds run (50
by default; a third as many plan rounds run besides), ``KUBE_ORACLE_SEED`` the first seed;
the first ``KUBE_ORACLE_SHRINK`` (2) failing rounds are shrunk (``scheduler_shrink``) and
printed as `joinery plan` input.
"""

from __future__ import annotations

import os
import sys
import time
import uuid
from pathlib import Path

import pytest
from k8s_helpers import eventually
from scheduler_judge import Outcome, Stage, describe, disruption_round, pinned, plan_round
from scheduler_scenarios import ROUND, ZONE, ZONES, Scenario, generate, node_object
from scheduler_shrink import as_yaml, shrink

from activities.kubernetes.client import Kube

ROUNDS = int(os.environ.get("KUBE_ORACLE_ROUNDS", "50"))
FIRST_SEED = int(os.environ.get("KUBE_ORACLE_SEED", "3500"))
SHRINK = int(os.environ.get("KUBE_ORACLE_SHRINK", "2"))  # failing rounds to shrink and print


def _no_foreign_nodes(admin: Kube) -> None:
    """Nodes other tests left would be topology domains Joinery was never told about."""
    deadline = time.monotonic() + 30
    while True:
        foreign = [
            n.metadata.name
            for n in admin.core.list_node().items
            if ROUND not in (n.metadata.labels or {})
        ]
        if not foreign:
            return
        if time.monotonic() > deadline:
            pytest.fail(f"nodes from other tests still exist: {foreign}")
        time.sleep(0.5)


def _summary(kind: str, outcomes: list[Outcome]) -> str:
    seconds = [o.seconds for o in outcomes]
    judged = sum(o.judged for o in outcomes)
    late = sum(len(o.late) for o in outcomes)
    return (
        f"{kind}: {len(outcomes)} rounds, {sum(o.commands for o in outcomes)} commands/claims, "
        f"{judged} pods judged ({late} bound only on the scheduler's retry), "
        f"{sum(seconds):.1f}s ({sum(seconds) / max(1, len(seconds)):.2f}s/round, "
        f"max {max(seconds, default=0):.2f}s)"
    ) + "".join(
        f"\n  {phase}: {sum(o.phases.get(phase, 0) for o in outcomes):.1f}s"
        for phase in dict.fromkeys(p for o in outcomes for p in o.phases)
    )


@pytest.mark.parametrize("kind", ["disruption", "plan"])
def test_the_kube_scheduler_admits_every_pod_joinery_places(
    admin: Kube, tmp_path: Path, kind: str
) -> None:
    _no_foreign_nodes(admin)
    rounds = ROUNDS if kind == "disruption" else max(1, ROUNDS // 3)
    run = disruption_round if kind == "disruption" else plan_round
    outcomes: list[Outcome] = []
    reports: list[str] = []
    for seed in range(FIRST_SEED, FIRST_SEED + rounds):
        tag = uuid.uuid4().hex[:6]
        sc = generate(seed, f"ko-{seed}-{tag}", f"ko{seed}{tag}", pending=kind == "plan")
        outcome = run(admin, sc, tmp_path)
        outcomes.append(outcome)
        if outcome.failures:
            report = describe(sc, outcome)
            if len(reports) < SHRINK:
                small, small_outcome = shrink(admin, sc, outcome, run, tmp_path)
                report += "\nshrunk to:\n" + describe(small, small_outcome)
                report += "\n---\n" + as_yaml(small, small_outcome.daemon_pods)
            print(report, file=sys.stderr)
            reports.append(report)
    print(_summary(kind, outcomes), file=sys.stderr)
    assert sum(o.judged for o in outcomes) > rounds, "too few pods judged to mean anything"
    assert not reports, "\n".join(reports)


def test_the_judge_refuses_a_move_that_breaks_zonal_spread(admin: Kube) -> None:
    """The judge can fail: a pod moved from zone a to zone b while zone a still holds a node
    leaves skew 2 under ``maxSkew: 1``, and the scheduler must refuse the pin (issue 35's
    first case). The same pin without the judge's ``nodeAffinityPolicy: Ignore`` is bound:
    a hostname selector alone would narrow the spread to the pinned node's zone."""
    _no_foreign_nodes(admin)
    tag = uuid.uuid4().hex[:6]
    ns, prefix = f"kj-{tag}", f"kj{tag}"
    room = {"cpu": "2", "memory": "4Gi", "pods": "10"}
    nodes = [node_object(f"{prefix}-{z}", {ZONE: z}, [], room, ns) for z in ZONES]
    nodes.append(node_object(f"{prefix}-spare", {ZONE: ZONES[0]}, [], room, ns))
    spread = {
        "maxSkew": 1,
        "topologyKey": ZONE,
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": "web"}},
    }
    pods = []
    for i in range(3):
        body = generate(0, ns, prefix).pods[0]  # a pod as the generator writes them
        body["metadata"] |= {"name": f"web-{i}", "labels": {"app": "web"}}
        body["spec"] = {
            "containers": body["spec"]["containers"],
            "terminationGracePeriodSeconds": 0,
            "topologySpreadConstraints": [dict(spread)],
        }
        pods.append(body)
    placed = {f"web-{i}": f"{prefix}-{z}" for i, z in enumerate(ZONES)}
    sc = Scenario(0, ns, prefix, {"instanceTypes": []}, [], nodes, pods, [], [], placed=placed)
    stage = Stage(admin, sc)
    stage.open()
    try:
        stage.create_nodes(nodes)
        stage.place(pods)
        stage.remove_nodes({f"{prefix}-{ZONES[0]}"})
        outcome = Outcome(0, "disruption")
        stage.judge([(pods[0], f"{prefix}-{ZONES[1]}")], outcome)
        assert [f.node for f in outcome.failures] == [f"{prefix}-{ZONES[1]}"], outcome
        assert "topology spread" in outcome.failures[0].message, outcome.failures
        unfair = pinned(pods[0], f"{prefix}-{ZONES[1]}")
        for c in unfair["spec"]["topologySpreadConstraints"]:
            del c["nodeAffinityPolicy"]
        unfair["metadata"]["name"] = "web-unfair"
        admin.core.create_namespaced_pod(ns, unfair)
        eventually(
            lambda: admin.core.read_namespaced_pod("web-unfair", ns).spec.node_name,
            what="the pin without Ignore to be bound",
        )
        admin.core.delete_namespaced_pod("web-unfair", ns, grace_period_seconds=0)
        admin.core.delete_namespaced_pod("web-0", ns, grace_period_seconds=0)
        fair = Outcome(0, "disruption")
        stage.judge([(pods[0], f"{prefix}-spare")], fair)
        assert fair.failures == [] and fair.judged == 1, fair
    finally:
        stage.close()
