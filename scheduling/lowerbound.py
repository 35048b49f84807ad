"""A true lower bound on the hourly cost of placing the scheduled pods on new nodes.

For any node of type t holding pods P, and any weights λ ≥ 0 with Σλ = 1 over resources r:
    price(t) ≥ Σ_{p∈P} Σ_r λ_r · req(p, r) · price(t) / room(t, r)
because Σ_{p∈P} req(p, r) ≤ room(t, r) (allocatable minus daemonset overhead) for every r.
Each pod's share is at least its cheapest such rate over the types it could use, so summing
over all nodes, every feasible plan costs at least Σ_p min_t Σ_r λ_r req(p,r) price(t)/room(t,r).
We take the best λ on a grid. Pods that could fit on an existing node count zero (that
capacity is already paid for), which keeps the bound valid when the cluster has room.
"""

from __future__ import annotations

from collections.abc import Sequence

from models.resources import CPU, MEMORY, PODS
from scheduling.pods import Pod
from scheduling.solver import PodClass, RelaxState, Solver
from scheduling.taints import untolerated
from scheduling.targets import instance_type_compatible, vec_add, vec_fits

_DIMS = (CPU, MEMORY, PODS)


def _grid(step: int = 10) -> list[tuple[float, float, float]]:
    out = []
    for a in range(step + 1):
        for b in range(step + 1 - a):
            out.append((a / step, b / step, (step - a - b) / step))
    return out


def _rates(solver: Solver, cls: PodClass) -> list[tuple[float, float, float]]:
    """Price per unit of each resource, for every (pool, type) this pod class could use."""
    rates: set[tuple[float, float, float]] = set()
    idx = [solver.dim_index[d] for d in _DIMS]
    for pool in solver.pools:
        if untolerated(pool.taints, cls.tolerations) is not None:
            continue
        if pool.requirements.compatible(cls.reqs, solver.allow_undefined) is not None:
            continue
        reqs = pool.requirements.with_requirements(cls.reqs)
        need = vec_add(pool.daemon_overhead, cls.vec)
        for it in pool.instance_types:
            if not instance_type_compatible(it, reqs, solver.instance_keys):
                continue
            alloc = solver.vec(it.allocatable)
            if not vec_fits(need, alloc):
                continue
            offering = it.cheapest_offering(reqs)
            if offering is None:
                continue
            room = [alloc[i] - pool.daemon_overhead[i] for i in idx]
            rates.add(tuple(offering.price / r if r > 0 else 0.0 for r in room))  # type: ignore[arg-type]
    # Drop rate vectors another one beats in every resource: they can never be the minimum.
    pruned = [
        r for r in rates if not any(o != r and all(o[i] <= r[i] for i in range(3)) for o in rates)
    ]
    return pruned


def lower_bound(solver: Solver, pods: Sequence[Pod]) -> float:
    """Lower bound for placing ``pods`` (already known schedulable) on new capacity."""
    classes: dict[int, tuple[PodClass, int]] = {}
    for p in pods:
        cls = solver._pod_class(p, solver.states.get(id(p), RelaxState()))
        if any(
            vec_fits(vec_add(t.base_used, cls.vec), t.allocatable)
            and t.requirements.compatible(cls.reqs, solver.allow_undefined) is None
            and untolerated(t.taints, cls.tolerations) is None
            for t in solver.existing
        ):
            continue
        entry = classes.get(id(cls))
        classes[id(cls)] = (cls, (entry[1] if entry else 0) + 1)
    if not classes:
        return 0.0
    idx = [solver.dim_index[d] for d in _DIMS]
    prepared = []
    for cls, count in classes.values():
        rates = _rates(solver, cls)
        if not rates:
            continue
        req = [cls.vec[i] for i in idx]
        prepared.append((req, rates, count))
    best = 0.0
    for lam in _grid():
        total = 0.0
        for req, rates, count in prepared:
            total += count * min(
                lam[0] * req[0] * r[0] + lam[1] * req[1] * r[1] + lam[2] * req[2] * r[2]
                for r in rates
            )
        best = max(best, total)
    return best
