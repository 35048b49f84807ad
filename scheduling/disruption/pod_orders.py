"""Other pod orders for a small consolidation move: a deliberate difference from Karpenter.

A simulation places the moving pods one by one, on the existing nodes first, in the
solver's pod order, as Karpenter's scheduler does. A pod placed first can pin the others: it
takes the room on an existing node that only another pod could use (that pod then needs a
dearer new node), or a pod with zonal affinity follows a pod into a zone the others' spread
refuses, and the move "fits nowhere", "needs 2 new nodes" or needs a dearer node than the
same pods in another order. Karpenter keeps the node; on a small cluster that leaves the
fixpoint well above the cheapest reachable cluster (docs/disruption.md, "Exactness").

So when few pods move (``MAX_PODS``) in a round with few candidates (the exhaustive subset
search's condition, underutilized.py), a move that is not a delete is simulated again in a
bounded set of other orders (``orders``: each pod first, then smallest first), then with
each node that takes its pods left out in turn, then with its replacement in each other
zone (consolidation.py drives the three; all deterministic), and the best outcome is kept
(``best``): a delete before any replacement, a cheaper replacement before a dearer one, the
solver's own order on a tie. Large clusters never get here, so they pay nothing and decide
exactly as before.

Every order's plan is still the solver's: each pod admitted on what the pods before it
leave, the replacement's requirements those of the pods it holds (its zone, its types).
So an outcome found here is as achievable on a live cluster as the solver's own order's:
the replacement admits its pods, and the evicted pods, scheduled in that order, land as
planned. Neither order is one Joinery can impose (the kube-scheduler picks among the nodes
that admit a pod), which is why the search is bounded to moves of few pods onto few nodes.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import TypeVar

from scheduling.pods import Pod
from scheduling.solving.order import cpu_order

# At most this many moving pods: 2n + 1 orders, each one outcome (a few simulations).
MAX_PODS = 8

T = TypeVar("T")


def orders(pods: Sequence[Pod], key: Callable[[Pod], Hashable]) -> list[list[Pod]]:
    """Other orders to try ``pods`` in, distinct by the pods' ``key`` (pods alike are
    interchangeable): Karpenter's order (cpu, then memory, descending) with each pod first
    in turn, then smallest first. Empty above ``MAX_PODS`` pods."""
    if len(pods) > MAX_PODS or len(pods) < 2:
        return []
    base = cpu_order(list(pods))
    out: list[list[Pod]] = []
    seen: set[tuple[Hashable, ...]] = set()

    def add(order: list[Pod]) -> None:
        sig = tuple(key(p) for p in order)
        if sig not in seen:
            seen.add(sig)
            out.append(order)

    for i, p in enumerate(base):
        add([p, *base[:i], *base[i + 1 :]])
    add(base[::-1])
    return out


def best(first: T, tries: Iterable[Callable[[], T]], rank: Callable[[T], tuple[float, ...]]) -> T:
    """The outcome of lowest ``rank`` among ``first`` (the solver's own) and each try's, the
    earliest on a tie; stops once one ranks (0, ...) or below (a delete: nothing beats it)."""
    chosen, chosen_rank = first, rank(first)
    for attempt in tries:
        if chosen_rank[0] <= 0:
            break
        out = attempt()
        r = rank(out)
        if r < chosen_rank:
            chosen, chosen_rank = out, r
    return chosen
