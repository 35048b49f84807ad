"""One provisioning round in one activity: read the cluster, solve, create the NodeClaims.

Only the created claims' names go back to the workflow. Handing the planned bodies to the
workflow and from there to a create activity made a burst's payloads megabytes: at 250
pods, (de)serialising them in the workflow task tripped the SDK's deadlock detector and the
round's workflow tasks took 39-57 s (docs/performance.md).

A retried round never makes a claim twice:
- every claim carries the round's key (``L.PROVISIONING_ROUND``, derived from the workflow
  run and the activity's id, the same on every attempt), so a retry finds what its earlier
  attempts made, counts it as in-flight capacity (the solver sees every NodeClaim) and only
  plans the remainder; the round returns the earlier claims' names with its own;
- a name is a hash of the round key, the attempt and the claim's index, so a create the
  Kubernetes client repeats within one attempt meets ``AlreadyExists`` and adopts its own
  claim; names already taken in the cluster are skipped.
"""

from __future__ import annotations

import hashlib
import itertools

from activities.deps import Deps
from activities.planning import cluster_state, create, plan, pod_events
from activities.planning.plan import ALPHABET, Namer
from activities.planning.types import ProvisionOutcome
from models import labels as L

# Examples of skipped inputs the workflow's history keeps (the pods' events have them all).
KEEP = 20


def round_key(workflow_id: str, run_id: str, activity_id: str) -> str:
    """The key every attempt of one round's activity shares (16 hex chars)."""
    return hashlib.sha256(f"{workflow_id}/{run_id}/{activity_id}".encode()).hexdigest()[:16]


def suffix(text: str, length: int = 5) -> str:
    """``length`` characters of [a-z0-9] derived from ``text``."""
    n = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")
    out = []
    for _ in range(length):
        n, digit = divmod(n, len(ALPHABET))
        out.append(ALPHABET[digit])
    return "".join(out)


def round_namer(key: str, attempt: int, taken: set[str]) -> Namer:
    """Names for one attempt's claims: deterministic, and never one already in ``taken``."""
    used = set(taken)

    def name(pool: str, index: int) -> str:
        for salt in itertools.count():
            candidate = f"{pool}-{suffix(f'{key}/{attempt}/{index}/{salt}')}"
            if candidate not in used:
                used.add(candidate)
                return candidate
        raise AssertionError("unreachable")

    return name


def provision(
    deps: Deps, paused_pools: frozenset[str], key: str, attempt: int = 1
) -> ProvisionOutcome:
    state = cluster_state.read(
        deps.kube,
        paused_pools,
        deps.watched,
        deps.provider().nodeclass_kind.resource,
        managed_only=True,
    )
    earlier = sorted(name for name, made_by in state.claim_rounds.items() if made_by == key)
    outcome = plan.plan_state(
        state,
        deps.provider(),
        deps.counters,
        name=round_namer(key, attempt, set(state.claim_rounds)),
        annotations={L.PROVISIONING_ROUND: key},
        kept=deps.kept_catalog,
        policies=deps.policies,
    )
    made = create.create(deps, outcome.claims)
    pod_events.publish(deps.kube, outcome)
    return ProvisionOutcome(
        created=[*earlier, *(c.name for c in made)],
        pending_pods=outcome.pending_pods,
        unschedulable=len(outcome.unschedulable),
        skipped=outcome.skipped[:KEEP],
        onto_in_flight=outcome.onto_in_flight,
        onto_nodes=outcome.onto_nodes,
    )
