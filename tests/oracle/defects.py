"""Open defects the property tests tell apart instead of failing, until their fixes merge.

Each entry names the class of violation it explains; a violation no entry explains fails the
test. Delete an entry once its fix is merged, and the tests hold Joinery to the
kube-scheduler again."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tests.oracle.cluster import Obj

# D4 (a round's later commands not counting the pods earlier commands put on their
# replacements) and issue 35 (1) (a round's moves breaking a zonal spread: full zones as
# domains, every node defining domains, and a later command's replacement opening a domain
# that an earlier move was counted without) are fixed. Nothing is open now; an entry names
# a class of violation while its fix is under way.
OPEN_DEFECTS: dict[str, str] = {}


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
