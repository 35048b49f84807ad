"""The API server's requests by client over one phase of a side-by-side run, per node.

The bar compares the requests "that Joinery's parts make" with Karpenter's: the autoscaler's
own clients (Karpenter's process, which also hosts its kwok cloud provider; Joinery's worker)
apart from the rest (kwok, the scheduler, the controller-manager, the sandbox's simulated
kubelets and this benchmark's own polling). The counts come from the API server's audit log
(``sandbox/api_audit.py``), read from where it ended when the phase began; watches are left
out (long-running, one line when they end).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sandbox import api_audit

# The batch audit backend writes a second or so after a request: read this much later.
FLUSH_SECONDS = 2.0
# Rows of the autoscaler's own requests kept in the report, largest first.
TOP = 8


def joinery_client(client: str) -> bool:
    """Joinery's worker (``activities/kubernetes/client.USER_AGENT``), not the sandbox's
    clients (``joinery-sandbox``, ``joinery-sandbox-nodes``)."""
    return client == "joinery"


def karpenter_client(client: str) -> bool:
    """Karpenter's kwok binary: Go's default user agent names the executable
    (``build.sh`` names it ``karpenter-kwok-<version>``)."""
    return client.startswith("karpenter")


@dataclass(frozen=True)
class AuditMark:
    """Where the audit log ended, and when, as a phase began."""

    path: Path
    offset: int
    since: float

    @classmethod
    def now(cls, path: Path) -> AuditMark:
        return cls(path, api_audit.size(path), time.time())


def summary(
    counts: Counter[tuple[str, str, str, int]],
    nodes: int,
    own: Callable[[str], bool],
) -> dict[str, Any]:
    """Requests per node by the autoscaler's own clients and by the rest, the autoscaler's
    largest rows ("VERB resource" with the code when not 2xx), and every client's total."""
    mine: Counter[str] = Counter()
    rest: Counter[str] = Counter()
    clients: Counter[str] = Counter()
    for (client, verb, resource, code), n in counts.items():
        clients[client] += n
        if own(client):
            key = f"{verb.upper()} {resource}" + ("" if 200 <= code < 300 else f" {code}")
            mine[key] += n
        else:
            rest[client] += n
    per = max(1, nodes)
    total_mine, total_rest = sum(mine.values()), sum(rest.values())
    return {
        "nodes": nodes,
        "autoscaler": total_mine,
        "autoscalerPerNode": round(total_mine / per, 2),
        "rest": total_rest,
        "restPerNode": round(total_rest / per, 2),
        "autoscalerTop": dict(mine.most_common(TOP)),
        "clients": dict(clients.most_common()),
    }


def measure(mark: AuditMark, nodes: int, own: Callable[[str], bool]) -> dict[str, Any]:
    """The phase since ``mark`` up to now, once the audit backend has flushed it."""
    until = time.time()
    time.sleep(FLUSH_SECONDS)
    counts = api_audit.by_client(mark.path, mark.offset, since=mark.since, until=until)
    return summary(counts, nodes, own)


def line(side: str, phase: str, r: dict[str, Any]) -> str:
    top = ", ".join(f"{k} {v}" for k, v in list(r["autoscalerTop"].items())[:4])
    return (
        f"{side:<9} {phase} API requests: autoscaler {r['autoscaler']} "
        f"({r['autoscalerPerNode']}/node), rest {r['rest']} ({r['restPerNode']}/node) "
        f"over {r['nodes']} nodes; top: {top}"
    )
