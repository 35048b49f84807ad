"""A provisioning round that creates no claim, in-process: the worker's watches hold N
pending pods and the N in-flight NodeClaims planned for them, and each round reads them
(``activities.planning.cluster_state.read`` with the watches), builds the solver's problem
and solves it, placing every pod on a claim still launching.

This is the round a burst repeats while its claims launch (``benchmarks.scale --pods``
prints them as "0 claim(s) for N pending pod(s)"). The shapes are the scale scenario's
(``sandbox.scenarios.scale``): one Deployment of 2-CPU pods, a NodePool of m5.large and
m5.xlarge, on-demand. Only what the round reads from its watches is measured with real
objects; the few small lists it asks the API server for (NodePools, EC2NodeClasses,
DaemonSets, volumes) are answered in-process with the NodePool alone and nothing else.

    python -m benchmarks.round_reading [--pods 1000] [--rounds 5] [--json]

Prints, per phase (read the watches, build the problem, solve), the first round's seconds
(every object new) and the median of the following rounds (nothing changed in between).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from activities.kubernetes.object_cache import ObjectCache, WatchedObjects  # noqa: E402
from activities.kubernetes.raw import LISTED  # noqa: E402
from activities.planning import cluster_state, plan  # noqa: E402
from benchmarks.catalogs import ec2_like_catalog  # noqa: E402
from benchmarks.workloads import nodepool_manifest, pod  # noqa: E402
from models import labels as L  # noqa: E402
from models.nodepool import NodePool  # noqa: E402
from scheduling.inputs import Document, build_problem  # noqa: E402
from scheduling.solver import Solver  # noqa: E402
from scheduling.solving.kept import KeptCatalog  # noqa: E402

UNSCHEDULABLE = {
    "phase": "Pending",
    "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}],
}


def pool_body() -> dict[str, Any]:
    body = nodepool_manifest(
        "scale",
        requirements=[
            {"key": L.INSTANCE_TYPE, "operator": "In", "values": ["m5.large", "m5.xlarge"]},
            {"key": L.CAPACITY_TYPE, "operator": "In", "values": ["on-demand"]},
        ],
    )
    body["metadata"].update(uid="pool-uid", resourceVersion="1")
    return body


def pods(count: int) -> list[dict[str, Any]]:
    out = []
    for i in range(count):
        body = pod(
            f"scale-app-{i:05d}",
            cpu="2",
            memory="1Gi",
            labels={"app": "scale-app"},
            nodeSelector={L.NODEPOOL: "scale"},
        )
        body["metadata"].update(
            uid=f"pod-uid-{i}",
            resourceVersion=str(10 + i),
            ownerReferences=[{"kind": "ReplicaSet", "name": "scale-app-1", "controller": True}],
        )
        body["status"] = UNSCHEDULABLE
        out.append(body)
    return out


def claims_for(pod_bodies: list[dict[str, Any]], types: list[Any]) -> list[dict[str, Any]]:
    """The NodeClaims a round plans for the pods, as the provisioner writes them."""
    docs = [Document(pool_body(), "NodePool scale")]
    docs += [Document(p, f"Pod {p['metadata']['name']}") for p in pod_bodies]
    result = Solver(build_problem(docs, types).problem).solve()
    pool = NodePool.model_validate(pool_body())
    out = []
    for i, c in enumerate(result.claims):
        body = plan.body_for(c, pool, f"scale-{i:05d}", {L.PROVISIONING_ROUND: "r1"})
        body.update(kind="NodeClaim", apiVersion="karpenter.sh/v1", status={})
        body["metadata"].update(uid=f"claim-uid-{i}", resourceVersion=str(100_000 + i))
        out.append(body)
    return out


class _Unused:
    """The API lists the round makes besides its watches (answered by ``_answers``)."""

    def __getattr__(self, name: str) -> Any:
        return name


class _Kube:
    core = _Unused()
    storage = _Unused()
    api_client = None


@contextmanager
def _answers(pool: dict[str, Any]) -> Iterator[None]:
    """NodePools: the one pool; EC2NodeClasses, DaemonSets and volumes: none (for the
    duration of the measurement only: the modules are put back as they were)."""
    replaced = [
        (cluster_state.nodepools, "list_", lambda kube: ([pool], "1")),
        (cluster_state.custom_objects, "list_", lambda kube, res: ([], "1")),
        (cluster_state.raw, "list_all", lambda method, *a, **k: []),
        (cluster_state.k8s, "AppsV1Api", lambda client: _Unused()),
    ]
    saved = [(module, name, getattr(module, name)) for module, name, _ in replaced]
    try:
        for module, name, answer in replaced:
            setattr(module, name, answer)
        yield
    finally:
        for module, name, original in saved:
            setattr(module, name, original)


def synced(objects: list[dict[str, Any]]) -> ObjectCache:
    cache = ObjectCache()
    for o in objects:
        cache.observe(LISTED, o)
    cache.set_synced(True)
    return cache


def _round(
    watched: WatchedObjects,
    types: list[Any],
    phases: dict[str, list[float]],
    kept: KeptCatalog,
) -> int:
    """One round: read the watches, build the problem, solve (with what the last round
    kept, as the provisioner does); returns the pods placed."""
    t0 = time.perf_counter()
    state = cluster_state.read(_Kube(), watched=watched)  # type: ignore[arg-type]
    t1 = time.perf_counter()
    problem = build_problem(state.documents, types).problem
    t2 = time.perf_counter()
    with kept.solving(problem) as catalog:
        result = Solver(problem, catalog=catalog).solve()
    t3 = time.perf_counter()
    assert not result.claims, "every pod fits a claim in flight"
    for name, secs in (("read", t1 - t0), ("build", t2 - t1), ("solve", t3 - t2)):
        phases[name].append(secs)
    phases["round"].append(t3 - t0)
    return sum(len(v) for v in result.existing.values())


def measure(count: int, rounds: int) -> dict[str, Any]:
    types = ec2_like_catalog()
    pod_bodies = pods(count)
    claim_bodies = claims_for(pod_bodies, types)
    watched = WatchedObjects(
        pods=synced(pod_bodies), nodes=synced([]), nodeclaims=synced(claim_bodies)
    )
    phases: dict[str, list[float]] = {"read": [], "build": [], "solve": [], "round": []}
    placed_on_claims = 0
    kept = KeptCatalog()  # the worker's (``Deps.kept_catalog``)
    with _answers(pool_body()):
        for _ in range(rounds):
            placed_on_claims = _round(watched, types, phases, kept)
    return {
        "pods": count,
        "inFlightClaims": len(claim_bodies),
        "placedOnClaims": placed_on_claims,
        "rounds": rounds,
        "first": {k: round(v[0], 3) for k, v in phases.items()},
        "next": {k: round(statistics.median(v[1:]), 3) for k, v in phases.items() if v[1:]},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pods", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    r = measure(args.pods, max(2, args.rounds))
    if args.json:
        print(json.dumps(r))
        return
    print(
        f"{r['pods']} pending pods, {r['inFlightClaims']} in-flight claims, "
        f"{r['placedOnClaims']} placed on them; medians of {r['rounds'] - 1} rounds"
    )
    for phase in ("read", "build", "solve", "round"):
        print(f"  {phase:6s} first {r['first'][phase]:.3f} s, next {r['next'][phase]:.3f} s")


if __name__ == "__main__":
    main()
