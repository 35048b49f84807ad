"""Disruption benchmark: how fast a round decides, and how cheap the cluster ends up.

A cluster is built by provisioning a workload (Karpenter's diverse benchmark pods over 400
fake types, or releases of 50 Deployments over the EC2-shaped catalog, one release per
solve), turning each planned claim into a
running managed Node with its pods bound, in two pools with different budgets, and then
deleting 60% of the pods (seeded). Each case runs in its own process and prints: the first
round's decision time (``joinery plan --disruption``'s work after reading the inputs, and
with parsing), peak memory, commands, nodes removed, $/h before and after, and, repeating
rounds to a fixpoint, the final $/h against the lower bound of the remaining pods. The same
is done for a Karpenter-like baseline on the same engine: one method per round (emptiness,
else multi-node over at most 100 candidates, else the first single-node command).

    python benchmarks/disruption.py [--nodes 100,1000,5000] [--workloads diverse,deployments]

``--write-cli-inputs DIR`` writes the same clusters as files instead and prints, for each, the
arguments of ``joinery plan --disruption`` on them, to time the command as users run it.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import resource
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.catalogs import ec2_like_catalog  # noqa: E402
from benchmarks.workloads import deployments, diverse_pods, fake_instance_types  # noqa: E402
from models import labels as L  # noqa: E402
from models.instancetype import InstanceType  # noqa: E402
from scheduling.disruption.consolidation import (  # noqa: E402
    consolidatable,
    multi_node_pass,
    single_node_pass,
)
from scheduling.disruption.context import RoundContext  # noqa: E402
from scheduling.disruption.emptiness import empty_nodes  # noqa: E402
from scheduling.disruption.engine import decide  # noqa: E402
from scheduling.disruption.prepare import RoundInputs, prepare_round  # noqa: E402
from scheduling.disruption.simulate import RoundState  # noqa: E402
from scheduling.disruption.types import RoundDecision  # noqa: E402
from scheduling.inputs import Document, build_problem  # noqa: E402
from scheduling.lowerbound import lower_bound  # noqa: E402
from scheduling.solver import PlannedClaim, Solver  # noqa: E402

NOW = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)
POOLS = (("general", "20%"), ("burst", "50%"))
MAX_ROUNDS = 40


def _pool(name: str, budget: str) -> dict[str, Any]:
    return {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": name},
        "spec": {
            "template": {
                "spec": {
                    "nodeClassRef": {
                        "group": "karpenter.k8s.aws",
                        "kind": "EC2NodeClass",
                        "name": "x",
                    },
                    "requirements": [],
                }
            },
            "disruption": {"consolidateAfter": "0s", "budgets": [{"nodes": budget}]},
        },
    }


def _node(name: str, pool: str, claim: PlannedClaim) -> dict[str, Any]:
    """A running managed Node for a planned claim: its cheapest type, zone and capacity type."""
    it = claim.instance_types[0]
    offers = [
        o
        for o in it.offerings
        if o.available and o.zone in claim.zones and o.capacity_type in claim.capacity_types
    ]
    best = min(offers, key=lambda o: (o.price, o.zone, o.capacity_type))
    return _node_of(name, pool, it, best.zone, best.capacity_type)


def _node_of(name: str, pool: str, it: InstanceType, zone: str, ct: str) -> dict[str, Any]:
    labels = {
        k: v for k, v in it.requirements.labels().items() if k not in (L.ZONE, L.CAPACITY_TYPE)
    }
    labels.update(
        {
            L.HOSTNAME: name,
            L.NODEPOOL: pool,
            L.NODE_INITIALIZED: "true",
            L.INSTANCE_TYPE: it.name,
            L.ZONE: zone,
            L.CAPACITY_TYPE: ct,
        }
    )
    alloc = {k: f"{v}m" for k, v in it.allocatable.items()}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "spec": {},
        "status": {"capacity": alloc, "allocatable": alloc},
    }


def build_cluster(
    workload: str, nodes: int, seed: int = 7
) -> tuple[list[dict[str, Any]], list[InstanceType]]:
    """Provision a workload sized for about ``nodes`` nodes, bind it, remove 60% of its pods."""
    if workload in ("diverse", "plain"):
        types = fake_instance_types()
        raw = diverse_pods(nodes * 5, seed=seed, plain_only=workload == "plain")
    else:
        types = ec2_like_catalog()
        raw = []
        releases: list[list[dict[str, Any]]] = []
        d = 0
        while True:
            batch = deployments(seed=seed + d, count=50)
            for p in batch:
                p["metadata"]["name"] = f"r{d}-{p['metadata']['name']}"
                p["metadata"]["labels"] = {"app": f"r{d}-{p['metadata']['labels']['app']}"}
            raw += batch
            releases.append(batch)
            d += 1
            if len(raw) >= nodes * 40:
                break
    pools = [_pool(name, budget) for name, budget in POOLS]
    if workload == "plain":
        # Unconstrained pods would all fit one huge node at once; as they arrive over time,
        # a few at a time, each batch gets its own node: provision them five at a time.
        chunks = [raw[k : k + 5] for k in range(0, len(raw), 5)]
    elif workload == "deployments":
        # Fifty Deployments at a time, as a cluster grows release by release (one
        # 40,000-pod solve is not how a 1,000-node cluster comes to be).
        chunks = releases
    else:
        chunks = [raw]
    claims = []
    for chunk in chunks:
        parsed = build_problem(
            [*(Document(p, "pod") for p in chunk), Document(pools[0], "pool")], types
        )
        claims += Solver(parsed.problem).solve().claims
    claims = claims[:nodes]
    docs: list[dict[str, Any]] = list(pools)
    by_key = {
        f"{p['metadata'].get('namespace', 'default')}/{p['metadata']['name']}": p for p in raw
    }
    rng = random.Random(seed)
    for i, claim in enumerate(claims):
        pool = POOLS[i % len(POOLS)][0]
        name = f"node-{i:05d}"
        docs.append(_node(name, pool, claim))
        for placed in claim.pods:
            if rng.random() < 0.6:
                continue
            body = by_key[placed.key]
            body["spec"]["nodeName"] = name
            body["status"] = {"phase": "Running"}
            docs.append(body)
    return docs, types


def karpenter_like(i: RoundInputs) -> RoundDecision:
    """One method per round, the first that finds anything: emptiness, then multi-node (one
    command, at most 100 candidates), then the first single-node command."""
    ctx = RoundContext(
        RoundState.after_plan(i.parsed.problem, i.plan), i.budgets, i.pdbs, i.cluster.pools
    )
    empty_nodes(ctx, i.candidates)
    if not ctx.commands:
        order = consolidatable(ctx, i.candidates)
        if not multi_node_pass(ctx, order, repeat=False, prefer_delete=False):
            single_node_pass(ctx, order, first_only=True)
    before = sum(n.price or 0.0 for n in i.cluster.managed) + i.plan.cost
    saved = sum(c.savings_per_hour for c in ctx.commands)
    return RoundDecision(ctx.commands, [], [], before, before - saved)


def apply(
    docs: list[dict[str, Any]], decision: RoundDecision, types: list[InstanceType], rnd: int
) -> list[dict[str, Any]]:
    """The cluster after every command of a round has run."""
    gone = {n for c in decision.commands for n in c.nodes}
    by_type = {it.name: it for it in types}
    moves: dict[str, str] = {}
    new_nodes: list[dict[str, Any]] = []
    for k, c in enumerate(decision.commands):
        names = {}
        for j, r in enumerate(c.replacements):
            name = f"r{rnd}-{k}-{j}"
            pool = r.nodepool
            it = by_type[r.instance_types[0].name]
            offers = [
                o
                for o in it.offerings
                if o.available and o.zone in r.zones and o.capacity_type in r.capacity_types
            ]
            best = min(offers, key=lambda o: (o.price, o.zone))
            new_nodes.append(_node_of(name, pool, it, best.zone, best.capacity_type))
            names[f"replacement-{j}"] = name
        for pod, dest in c.pods.items():
            moves[pod] = names.get(dest, dest)
    out = []
    for d in docs:
        if d.get("kind") == "Node" and d["metadata"]["name"] in gone:
            continue
        if d.get("kind") == "Pod":
            key = f"{d['metadata'].get('namespace', 'default')}/{d['metadata']['name']}"
            if key in moves:
                d = {**d, "spec": {**d["spec"], "nodeName": moves[key]}}
        out.append(d)
    return out + new_nodes


def _docs(raw: list[dict[str, Any]]) -> list[Document]:
    return [Document(d, f"doc {i}") for i, d in enumerate(raw)]


def run_case(workload: str, nodes: int, fixpoint: bool = True) -> dict[str, Any]:
    docs, types = build_cluster(workload, nodes)
    t0 = time.perf_counter()
    inputs = prepare_round(_docs(docs), types, NOW)
    t1 = time.perf_counter()
    first = decide(
        inputs.parsed.problem,
        inputs.plan,
        inputs.cluster.managed,
        inputs.candidates,
        inputs.blocked,
        inputs.budgets,
        inputs.pdbs,
        inputs.cluster.pools,
    )
    t2 = time.perf_counter()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    result: dict[str, Any] = {
        "workload": workload,
        "nodes": len(inputs.cluster.managed),
        "pods": sum(1 for d in docs if d.get("kind") == "Pod"),
        "prepareSeconds": round(t1 - t0, 2),
        "decideSeconds": round(t2 - t1, 2),
        "peakMiB": round(peak),
        "commands": len(first.commands),
        "nodesRemoved": sum(len(c.nodes) for c in first.commands),
        "before": round(first.cost_before, 2),
        "after": round(first.cost_after, 2),
    }
    methods = (("joinery", None), ("karpenterLike", karpenter_like)) if fixpoint else ()
    for label, method in methods:
        state, rounds, spent = docs, 0, 0.0
        cost = first.cost_before
        while rounds < MAX_ROUNDS:
            s = time.perf_counter()
            i = prepare_round(_docs(state), types, NOW)
            d = (
                method(i)
                if method
                else decide(
                    i.parsed.problem,
                    i.plan,
                    i.cluster.managed,
                    i.candidates,
                    i.blocked,
                    i.budgets,
                    i.pdbs,
                    i.cluster.pools,
                )
            )
            spent += time.perf_counter() - s
            cost = d.cost_before
            if not d.commands:
                break
            rounds += 1
            state = apply(state, d, types, rounds)
        pods = [p for n in i.parsed.problem.nodes for p in n.pods]
        fresh = Solver(
            build_problem(
                [Document(d, "x") for d in state if d.get("kind") in ("NodePool",)]
                + [
                    Document({**p_doc, "spec": {**p_doc["spec"], "nodeName": None}}, "p")
                    for p_doc in state
                    if p_doc.get("kind") == "Pod"
                ],
                types,
            ).problem
        )
        fresh_plan = fresh.solve()
        lb = lower_bound(fresh, fresh_plan.scheduled)
        result[label] = {
            "rounds": rounds,
            "fixpointCost": round(cost, 2),
            "seconds": round(spent, 1),
            "lowerBound": round(lb, 2),
            "overLowerBound": round(cost / lb, 3) if lb else None,
            "podsKept": len(pods),
        }
    return result


def write_cli_inputs(out: Path, workloads: list[str], sizes: list[int]) -> list[str]:
    """Write each cluster (pools, nodes, bound pods) and its catalog as files; return the
    ``joinery plan --disruption`` command line for each, so the command users run can be timed
    as a whole process."""
    import yaml

    from models.catalog import dump_catalog

    out.mkdir(parents=True, exist_ok=True)
    lines = []
    for workload in workloads:
        for n in sizes:
            docs, types = build_cluster(workload, n)
            catalog = out / f"{'ec2' if workload == 'deployments' else 'fake'}-catalog.yaml"
            if not catalog.exists():
                with catalog.open("w") as fh:
                    yaml.safe_dump(dump_catalog(types), fh, sort_keys=False)
            cluster = out / f"{workload}-{n}.yaml"
            with cluster.open("w") as fh:
                yaml.safe_dump_all(docs, fh, sort_keys=False)
            lines.append(
                f"plan --disruption -f {cluster} --catalog {catalog} "
                f"--now {NOW.strftime('%Y-%m-%dT%H:%M:%SZ')}"
            )
    return lines


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", default="100,1000,5000")
    parser.add_argument("--workloads", default="plain,diverse,deployments")
    parser.add_argument(
        "--fixpoint-max-nodes",
        type=int,
        default=1000,
        help="repeat rounds to a fixpoint only on clusters up to this size",
    )
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--write-cli-inputs",
        metavar="DIR",
        help="only write the clusters and catalogs, and print the joinery arguments for each",
    )
    parser.add_argument("--case", help=argparse.SUPPRESS)
    parser.add_argument("--size", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--no-fixpoint", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.case:
        print(json.dumps(run_case(args.case, args.size, not args.no_fixpoint)))
        return 0
    if args.write_cli_inputs:
        sizes = [int(n) for n in args.nodes.split(",")]
        for line in write_cli_inputs(Path(args.write_cli_inputs), args.workloads.split(","), sizes):
            print(line)
        return 0
    print(
        f"# {platform.machine()} python {platform.python_version()}, one core per case", flush=True
    )
    for workload in args.workloads.split(","):
        for n in args.nodes.split(","):
            extra = [] if int(n) <= args.fixpoint_max_nodes else ["--no-fixpoint"]
            out = subprocess.run(
                [sys.executable, __file__, "--case", workload, "--size", n, *extra],
                check=True,
                capture_output=True,
                text=True,
            )
            print(out.stdout.strip().splitlines()[-1], flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
