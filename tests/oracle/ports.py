"""NodePorts: two pods on one node may not take the same host port, protocol and address
(an unset or 0.0.0.0 address takes every address)."""

from __future__ import annotations

from tests.oracle.cluster import Cluster, Obj

Port = tuple[str, str, int]  # protocol, host IP, port


def host_ports(pod: Obj) -> list[Port]:
    out = []
    for c in (pod.get("spec") or {}).get("containers") or []:
        for p in c.get("ports") or []:
            if p.get("hostPort"):
                out.append(
                    (p.get("protocol") or "TCP", p.get("hostIP") or "0.0.0.0", int(p["hostPort"]))
                )
    return out


def _conflict(a: Port, b: Port) -> bool:
    if a[0] != b[0] or a[2] != b[2]:
        return False
    return a[1] == "0.0.0.0" or b[1] == "0.0.0.0" or a[1] == b[1]


def port_failure(pod: Obj, node: Obj, cluster: Cluster) -> str | None:
    wanted = host_ports(pod)
    if not wanted:
        return None
    for other in cluster.pods_on(node["metadata"]["name"]):
        for theirs in host_ports(other):
            for mine in wanted:
                if _conflict(mine, theirs):
                    return f"host port {mine[0]}/{mine[2]} already taken on the node"
    return None
