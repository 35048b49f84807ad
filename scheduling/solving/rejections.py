"""Existing nodes that reject a pod class on their own facts, remembered across solves.

A disruption round runs hundreds of simulations on one cluster: each solves "these pods
without these nodes" over the same remaining nodes. Without a memory, every simulation's
every pod class scans every node again, and on a consolidated cluster most nodes reject
most moving pods (full, or already holding the one replica a hostname rule allows).

A rejection is remembered only when it is exact for every later simulation of the round:

* it is *local* and independent of the pod's size: decided by the node's own taints, labels
  and host ports, or by the pods on its hostname for hostname-keyed spread and
  anti-affinity; never by counts over zones or other wider domains, which change when other
  nodes are left out, and never by free room (the solver's ``RoomIndex`` handles room);
* it was made on the node as the round left it (no pod of this simulation placed there
  yet), and a round only ever adds pods to a node, so every such reason still holds later;
* the node's hostname is its own (no other node, and no claim's placeholder, carries it), so
  no pod elsewhere counts toward its hostname domain.

A class is named by everything but its requests that its placement depends on, with its
labels in full (a solve keeps only the labels the selectors it sees look at, and those
differ between simulations). Leaving out a node that would reject the class anyway changes no
placement: the solver drops a node after such a failure for good, and the reasons it reports
come from pools, not from existing nodes.
"""

from __future__ import annotations

from collections.abc import Iterable

PLACEHOLDER_PREFIX = "hostname-placeholder-"


class NodeRejections:
    """Per pod class, the names of existing nodes known to reject it (see module doc).

    Valid only while the nodes' pods only grow: one disruption round (``RoundState``)."""

    def __init__(self, hostnames: Iterable[tuple[str, str]]) -> None:
        """``hostnames``: every node of the round with its hostname, removed ones included."""
        seen: dict[str, str] = {}
        shared: set[str] = set()
        for name, host in hostnames:
            other = seen.setdefault(host, name)
            if other != name:
                shared.update((other, name))
            if host.startswith(PLACEHOLDER_PREFIX):
                shared.add(name)
        self._shared = frozenset(shared)
        self._by_class: dict[tuple[object, ...], set[str]] = {}

    def of(self, class_key: tuple[object, ...]) -> set[str]:
        """The nodes known to reject the class (a live set that ``note`` adds to)."""
        found = self._by_class.get(class_key)
        if found is None:
            found = self._by_class[class_key] = set()
        return found

    def note(self, rejecting: set[str], node: str) -> None:
        """Remember that ``node`` rejected the class whose set is ``rejecting``, for a local
        reason, before this solve placed anything on it."""
        if node not in self._shared:
            rejecting.add(node)
