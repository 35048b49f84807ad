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

from bisect import bisect_right
from collections.abc import Sequence

from models.resources import CPU, MEMORY, PODS
from scheduling.pods import Pod
from scheduling.solver import PodClass, RelaxState, Solver
from scheduling.taints import untolerated
from scheduling.targets import undefined_allowed, vec_add, vec_fits

_DIMS = (CPU, MEMORY, PODS)


def _grid(step: int = 10) -> list[tuple[float, float, float]]:
    out = []
    for a in range(step + 1):
        for b in range(step + 1 - a):
            out.append((a / step, b / step, (step - a - b) / step))
    return out


# (pool position, requirement set, tolerations) -> [(allocatable, room rates)], the types of
# that pool a class with those requirements could use, sorted by rate.
_Candidates = list[tuple[list[int], tuple[float, float, float]]]


class _RateTable:
    """Memoised rate vectors, so the bound costs O(pod classes x instance types) plain steps.

    What a type offers a class (is it compatible, its cheapest allowed offering, its rate per
    unit of room) depends only on the class's requirements and tolerations, which most classes
    share; only the fit test depends on the class's requests. Both levels are cached.
    """

    def __init__(self, solver: Solver) -> None:
        self.solver = solver
        self.idx = [solver.view.dim_index[d] for d in _DIMS]
        self._by_reqs: dict[object, list[tuple[list[int], _Candidates]]] = {}
        self._fronts: dict[object, list[tuple[float, float, float]]] = {}

    def _pool_candidates(self, cls: PodClass) -> list[tuple[list[int], _Candidates]]:
        key = (frozenset(cls.reqs.values()), cls.tolerations)
        cached = self._by_reqs.get(key)
        if cached is not None:
            return cached
        solver = self.solver
        out = []
        for pool in solver.view.pools:
            if untolerated(pool.taints, cls.tolerations) is not None:
                continue
            if pool.requirements.compatible(cls.reqs, solver.view.allow_undefined) is not None:
                continue
            reqs = pool.requirements.with_requirements(cls.reqs)
            cands: _Candidates = []
            # The pool's types compatible with reqs and offered under them, in the pool's
            # order (the solver's per-requirement sets answer it).
            for it in solver.claims.compatible(pool.instance_types, reqs):
                offering = it.cheapest_offering(reqs)
                if offering is None:
                    continue
                alloc = solver.view.vec(it.allocatable)
                room = [alloc[i] - pool.daemon_overhead[i] for i in self.idx]
                rate = tuple(offering.price / r if r > 0 else 0.0 for r in room)
                cands.append((alloc, rate))  # type: ignore[arg-type]
            cands.sort(key=lambda c: c[1])
            out.append((pool.daemon_overhead, cands))
        self._by_reqs[key] = out
        return out

    def rates(self, cls: PodClass) -> list[tuple[float, float, float]]:
        """The rate vectors no other usable type beats in every resource (the Pareto front)."""
        key = (frozenset(cls.reqs.values()), cls.tolerations, tuple(cls.vec))
        front = self._fronts.get(key)
        if front is not None:
            return front
        fitting: list[tuple[float, float, float]] = []
        for overhead, cands in self._pool_candidates(cls):
            need = vec_add(overhead, cls.vec)
            fitting.extend(rate for alloc, rate in cands if vec_fits(need, alloc))
        fitting.sort()
        front = _pareto_front(fitting)
        self._fronts[key] = front
        return front


def _pareto_front(ordered: list[tuple[float, float, float]]) -> list[tuple[float, float, float]]:
    """The vectors of ``ordered`` (sorted lexicographically) that no earlier one is at most in
    every coordinate, in order; O(n log n) where pairwise pruning was O(n x front).

    Sorted so, every earlier vector is at most this one in the first coordinate, so it is
    dominated when an earlier one is at most it in the other two: when the least third
    coordinate among earlier vectors whose second is at most its own is at most its third.
    ``seconds``/``thirds`` keep the earlier vectors' (second, third) pairs that no other
    earlier pair dominates, by second ascending (so thirds descending): that least third is
    the one just left of where this vector's second would go.
    """
    front: list[tuple[float, float, float]] = []
    seconds: list[float] = []
    thirds: list[float] = []
    for r in ordered:
        j = bisect_right(seconds, r[1])
        if j and thirds[j - 1] <= r[2]:
            continue
        front.append(r)
        k = j
        while k < len(thirds) and thirds[k] >= r[2]:
            k += 1
        seconds[j:k] = [r[1]]
        thirds[j:k] = [r[2]]
    return front


def lower_bound(solver: Solver, pods: Sequence[Pod]) -> float:
    """Lower bound for placing ``pods`` (already known schedulable) on new capacity."""
    classes: dict[int, tuple[PodClass, int]] = {}
    for p in pods:
        cls = solver.classes.pod_class(p, solver.states.get(id(p), RelaxState()))
        if any(
            vec_fits(vec_add(t.base_used, cls.vec), t.allocatable)
            and t.requirements.compatible(
                cls.reqs, undefined_allowed(t, solver.view.allow_undefined)
            )
            is None
            and untolerated(t.taints, cls.tolerations) is None
            for t in solver.existing
        ):
            continue
        entry = classes.get(id(cls))
        classes[id(cls)] = (cls, (entry[1] if entry else 0) + 1)
    if not classes:
        return 0.0
    idx = [solver.view.dim_index[d] for d in _DIMS]
    table = _RateTable(solver)
    prepared = []
    for cls, count in classes.values():
        rates = table.rates(cls)
        if not rates:
            continue
        req = [cls.vec[i] for i in idx]
        prepared.append((req, rates, count))
    best = 0.0
    for lam in _grid():
        total = 0.0
        for req, rates, count in prepared:
            # The same products as lam[i] * req[i] * r[i], left to right, so the same floats.
            a, b, c = lam[0] * req[0], lam[1] * req[1], lam[2] * req[2]
            total += count * min([a * r0 + b * r1 + c * r2 for r0, r1, r2 in rates])
        best = max(best, total)
    return best
