"""The order pods are tried in: Karpenter's (cpu, then memory, descending) or ours, which
keeps every claim's cpu:memory mix close to the catalog's."""

from __future__ import annotations

from models.resources import CPU, MEMORY
from scheduling.pods import Pod


def cpu_order(pods: list[Pod]) -> list[Pod]:
    """Karpenter's order: cpu, then memory, descending (ties by key)."""
    return sorted(pods, key=lambda p: (-p.requests.get(CPU, 0), -p.requests.get(MEMORY, 0), p.key))


def balanced_order(pods: list[Pod], memory_per_cpu: float) -> list[Pod]:
    """Largest first, zipped from cpu-heavy and memory-heavy pods to keep the mix even.

    Pods are sorted by size (cpu and memory weighed by how the catalog sells them), then
    split by which resource dominates; the queue takes the next pod from whichever side
    brings the running cpu:memory mix back toward the catalog's. Claims are filled in
    queue order, so each ends up with a mix its instance types can hold without paying for
    an idle resource. (Karpenter sorts by cpu, then memory, which puts the cpu-heavy pods
    on the first nodes and the memory-heavy ones on the last: both half-used.)
    """
    ordered = sorted(pods, key=lambda p: _order_key(p, memory_per_cpu))
    k = memory_per_cpu
    cpu_heavy = [p for p in ordered if p.requests.get(CPU, 0) * k >= p.requests.get(MEMORY, 0)]
    mem_heavy = [p for p in ordered if p.requests.get(CPU, 0) * k < p.requests.get(MEMORY, 0)]
    out: list[Pod] = []
    i = j = 0
    balance = 0.0
    while i < len(cpu_heavy) or j < len(mem_heavy):
        take_cpu = j >= len(mem_heavy) or (i < len(cpu_heavy) and balance <= 0)
        p = cpu_heavy[i] if take_cpu else mem_heavy[j]
        if take_cpu:
            i += 1
        else:
            j += 1
        balance += p.requests.get(CPU, 0) * k - p.requests.get(MEMORY, 0)
        out.append(p)
    return out


def _order_key(p: Pod, memory_per_cpu: float) -> tuple[object, ...]:
    """Largest first, where size weighs cpu and memory by how the catalog sells them.

    Karpenter sorts by cpu, then memory; that puts cpu-heavy pods together on the first
    nodes and memory-heavy ones on the last, and both kinds of node end up half empty in
    the other resource. Weighing both keeps every node's mix close to the catalog's.
    """
    size = p.requests.get(CPU, 0) * memory_per_cpu + p.requests.get(MEMORY, 0)
    return (-size, -p.requests.get(CPU, 0), p.namespace, p.owner_name or "", p.name)
