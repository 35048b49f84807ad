"""Shrinking a round the kube-scheduler failed to the fewest nodes and pods that still fail.

Greedy, one piece at a time (an app, a node with its pods, a DaemonSet, a
PodDisruptionBudget, a pod),
each try a whole round on the control plane. The starting placement is kept fixed
(``Scenario.placed``), so a try differs from the last only by what was removed; every try
runs under a fresh namespace and node prefix, as rounds do.
"""

from __future__ import annotations

import copy
import json
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import yaml
from scheduler_judge import Outcome
from scheduler_scenarios import Obj, Scenario

from activities.kubernetes.client import Kube

Round = Callable[[Kube, Scenario, Path], Outcome]


def renamed(sc: Scenario) -> Scenario:
    """``sc`` under a fresh namespace and node prefix (both are unique tags, so a textual
    replacement renames exactly them)."""
    tag = uuid.uuid4().hex[:6]
    ns, prefix = f"ks-{sc.seed}-{tag}", f"ks{sc.seed}{tag}"
    parts = [sc.catalog, sc.pools, sc.nodes, sc.pods, sc.pending, sc.pdbs, sc.notes]
    text = json.dumps([*parts, sc.placed, sc.daemonsets])
    text = text.replace(sc.namespace, ns).replace(sc.prefix, prefix)
    catalog, pools, nodes, pods, pending, pdbs, notes, placed, daemons = json.loads(text)
    return Scenario(
        sc.seed, ns, prefix, catalog, pools, nodes, pods, pending, pdbs, notes, placed, daemons
    )


def _app(pod: dict[str, object]) -> str:
    return str(pod["metadata"]["labels"]["app"])  # type: ignore[index]


def _smaller(sc: Scenario) -> Iterator[Scenario]:
    """Each scenario one piece smaller than ``sc``."""
    assert sc.placed is not None
    for app in sorted({_app(p) for p in sc.pods + sc.pending}):
        out = copy.deepcopy(sc)
        out.pods = [p for p in sc.pods if _app(p) != app]
        out.pending = [p for p in sc.pending if _app(p) != app]
        out.pdbs = [d for d in sc.pdbs if d["metadata"]["name"] != app]
        yield out
    for node in [n["metadata"]["name"] for n in sc.nodes]:
        out = copy.deepcopy(sc)
        out.nodes = [n for n in sc.nodes if n["metadata"]["name"] != node]
        out.placed = {p: n for p, n in sc.placed.items() if n != node}
        out.pods = [p for p in sc.pods if p["metadata"]["name"] in out.placed]
        yield out
    for i in range(len(sc.daemonsets)):
        out = copy.deepcopy(sc)
        del out.daemonsets[i]
        yield out
    for i in range(len(sc.pdbs)):
        out = copy.deepcopy(sc)
        del out.pdbs[i]
        yield out
    for pod in [p["metadata"]["name"] for p in sc.pods + sc.pending]:
        out = copy.deepcopy(sc)
        out.pods = [p for p in sc.pods if p["metadata"]["name"] != pod]
        out.pending = [p for p in sc.pending if p["metadata"]["name"] != pod]
        yield out


def shrink(
    admin: Kube, sc: Scenario, outcome: Outcome, run: Round, workdir: Path, *, tries: int = 80
) -> tuple[Scenario, Outcome]:
    """The smallest failing scenario greedy removal finds within ``tries`` rounds."""
    best = copy.deepcopy(sc)
    best.placed = dict(outcome.placed)
    best.pods = [p for p in sc.pods if p["metadata"]["name"] in best.placed]
    best_outcome = outcome
    progress = True
    while progress and tries > 0:
        progress = False
        for candidate in _smaller(best):
            if tries <= 0:
                break
            tries -= 1
            trial = renamed(candidate)
            result = run(admin, trial, workdir)
            if result.failures:
                best, best_outcome, progress = trial, result, True
                break
    return best, best_outcome


def as_yaml(sc: Scenario, daemon_pods: list[Obj]) -> str:
    """The shrunk round as a `joinery plan` input (nodes, bound pods, pools, PDBs, pending
    pods) followed by its catalog, for a report or a scenario test."""
    placed = sc.placed or {}
    bound = []
    for p in sc.pods:
        body = copy.deepcopy(p)
        body["spec"]["nodeName"] = placed[p["metadata"]["name"]]
        bound.append(body)
    docs = [*sc.pools, *sc.nodes, *bound, *daemon_pods, *sc.daemonsets, *sc.pdbs, *sc.pending]
    return yaml.safe_dump_all([*docs, sc.catalog], sort_keys=False)
