"""Open defects the property tests tell apart instead of failing, until their fixes merge.

Each entry names the class of violation it explains; a violation no entry explains fails the
test. Delete an entry once its fix is merged, and the tests hold Joinery to the
kube-scheduler again."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tests.oracle.cluster import Obj

OPEN_DEFECTS = {
    # Issue 35 (1), fixed on another branch: a consolidation whose moves break a zonal spread
    # (a zone left with fewer of the spread's pods than the skew allows while it keeps
    # eligible nodes). Every PodTopologySpread refusal of a moved pod is this class.
    "issue-35-1": "a round's moves break a topology spread",
    # D4 (report): a round of several commands that breaks a required pod affinity or
    # anti-affinity between pods its different commands move (each command is decided as if
    # the others' pods were not where those commands put them).
    "D4": "a round's commands break inter-pod affinity between them",
}


def open_defect(
    objects: Sequence[Obj], catalog: Mapping[str, Any], out: Mapping[str, Any], why: str
) -> str | None:
    """The open defect that explains the round violation ``why``, or None."""
    if "issue-35-1" in OPEN_DEFECTS and ": PodTopologySpread: " in why:
        return "issue-35-1"
    d = out["disruption"]
    if "D4" in OPEN_DEFECTS and ": InterPodAffinity: " in why and len(d["commands"]) > 1:
        return "D4"
    return None
