"""How many requests the sandbox's API server served, by verb and resource, over a stretch.

Read from the API server's own ``apiserver_request_total`` counter (its ``/metrics``), so
every client is counted: Joinery's worker and watchers, kwok, the scheduler, the
controller-manager and the scenario itself. The counter has no client label; the resources
only Joinery writes (``nodeclaims``, ``ec2nodeclasses``, the ``configmaps`` of its
unavailable-offerings record) tell its share apart from the simulated kubelets' ``nodes`` and
``pods`` traffic. The scale scenario reports the difference over its burst, per node
launched: the figure the launch path's Kubernetes calls are judged by
(docs/performance.md).
"""

from __future__ import annotations

import re
from typing import Any

METRIC = "apiserver_request_total"
_LINE = re.compile(r"^" + METRIC + r"\{(?P<labels>[^}]*)\}\s+(?P<value>\S+)$")
_LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')
# Long-running requests (watches) are counted once, when they end: not call rates.
SKIPPED_VERBS = frozenset({"WATCH", "CONNECT"})


def parse(text: str) -> dict[str, float]:
    """``"VERB resource[/subresource]"`` → requests so far, the successful ones; those
    answered otherwise under ``"VERB resource[/subresource] CODE"``."""
    out: dict[str, float] = {}
    for line in text.splitlines():
        match = _LINE.match(line)
        if match is None:
            continue
        labels = dict(_LABEL.findall(match.group("labels")))
        verb = labels.get("verb", "")
        if verb in SKIPPED_VERBS:
            continue
        resource = labels.get("resource", "") or "(none)"
        if labels.get("subresource"):
            resource += "/" + labels["subresource"]
        key = f"{verb} {resource}"
        code = labels.get("code", "")
        if code and not code.startswith("2"):  # refusals apart: 409 is a lost race
            key += f" {code}"
        out[key] = out.get(key, 0.0) + float(match.group("value"))
    return out


def snapshot(api_client: Any) -> dict[str, float]:
    """The counter now, through an admin ``kubernetes`` ApiClient."""
    response = api_client.call_api(
        "/metrics",
        "GET",
        auth_settings=["BearerToken"],
        _preload_content=False,
    )
    raw = response[0] if isinstance(response, tuple) else response
    return parse(raw.data.decode())


def delta(before: dict[str, float], after: dict[str, float]) -> dict[str, int]:
    """What was served between two snapshots, largest first, zeros left out."""
    out = {k: round(v - before.get(k, 0.0)) for k, v in after.items()}
    return dict(sorted(((k, v) for k, v in out.items() if v > 0), key=lambda kv: -kv[1]))


def per_node(served: dict[str, int], nodes: int, resources: tuple[str, ...]) -> dict[str, float]:
    """Requests per node launched for the resources named (subresources included)."""
    keep = {k: v for k, v in served.items() if k.split(" ")[1].split("/", 1)[0] in set(resources)}
    return {k: round(v / max(1, nodes), 2) for k, v in keep.items()}
