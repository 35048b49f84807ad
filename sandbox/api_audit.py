"""Who calls the sandbox's API server: an opt-in audit log, and its reading by client.

The API server's request counter (``sandbox/scenarios/api_requests.py``) has no client label,
so it cannot say whether a ``PATCH nodes`` came from Joinery's worker, the sandbox's node
simulator, kwok, the scheduler or the controller-manager. The API server's audit log can: at
the ``Metadata`` level each request is one JSON line with its user, user agent, verb,
resource and response code, and no bodies. Writing it costs the API server CPU, so it is
off unless asked for (``ENV`` set to ``1``, or ``Cluster.start(audit=True)``); the
benchmark's ``--audit`` turns it on.

:func:`by_client` groups the lines written after an offset (the burst's start) by client,
verb, resource[/subresource] and status code.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

ENV = "JOINERY_SANDBOX_API_AUDIT"
# One line per request, when the response is complete; watches and other long-running
# requests are logged when they start too ("ResponseStarted"), which is not wanted here.
POLICY = """\
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived", "ResponseStarted"]
rules:
  - level: Metadata
"""
# Long-running requests, logged once when they end: not call rates.
SKIPPED_VERBS = frozenset({"watch"})


def wanted() -> bool:
    """Whether the environment asks for the audit log."""
    return os.environ.get(ENV, "") == "1"


def apiserver_args(directory: Path) -> tuple[Path, list[str]]:
    """Write the policy into ``directory``; the log's path and the API server's flags.
    Batch mode keeps the log's writes off the requests' path."""
    policy = directory / "audit-policy.yaml"
    policy.write_text(POLICY)
    log = directory / "logs" / "audit.log"
    return log, [
        f"--audit-policy-file={policy}",
        f"--audit-log-path={log}",
        "--audit-log-format=json",
        "--audit-log-maxsize=0",  # one file: a reader's offset stays valid
        "--audit-log-mode=batch",
    ]


def client_of(user_agent: str) -> str:
    """A short client name: the program before the first ``/``, and for Kubernetes'
    own components the controller or tool named after its last ``/`` (the controller-
    manager's clients each carry their controller's name there)."""
    program = user_agent.split("/", 1)[0].strip() or "(none)"
    if " kubernetes/" in user_agent:
        tail = user_agent.rsplit("/", 1)[-1].strip()
        if tail and tail != program and not tail.startswith("v"):
            return f"{program}/{tail}"
    return program


def size(path: Path) -> int:
    """Where the log ends now (0 when there is none yet): the offset to read from later."""
    try:
        return path.stat().st_size
    except OSError:
        return 0


def stamp(at: float) -> str:
    """``at`` (seconds since the epoch) as the log stamps requests (``MicroTime``), so
    stamps compare as strings."""
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def by_client(
    path: Path, offset: int = 0, *, since: float = 0.0, until: float = float("inf")
) -> Counter[tuple[str, str, str, int]]:
    """(client, verb, resource[/subresource], code) -> requests received between ``since``
    and ``until`` (epoch seconds), read from ``offset`` on. The batch backend writes a
    second or so late: read a little after ``until``."""
    counts: Counter[tuple[str, str, str, int]] = Counter()
    first, last = stamp(since), stamp(until) if until != float("inf") else "~"
    with path.open("rb") as f:
        f.seek(offset)
        for line in f:
            try:
                event = json.loads(line)
            except ValueError:
                continue  # a line still being written
            verb = str(event.get("verb") or "")
            if not first <= str(event.get("requestReceivedTimestamp") or "") <= last:
                continue
            if verb in SKIPPED_VERBS:
                continue
            ref = event.get("objectRef") or {}
            resource = str(ref.get("resource") or event.get("requestURI") or "")
            if ref.get("subresource"):
                resource += "/" + str(ref["subresource"])
            code = int((event.get("responseStatus") or {}).get("code") or 0)
            counts[(client_of(str(event.get("userAgent") or "")), verb, resource, code)] += 1
    return counts


def table(counts: Counter[tuple[str, str, str, int]], nodes: int) -> dict[str, object]:
    """Per client: its total per node, and its rows ("VERB resource[ CODE]" -> count),
    largest first. Successful responses leave the code out."""
    out: dict[str, object] = {}
    clients: dict[str, Counter[str]] = {}
    for (client, verb, resource, code), n in counts.items():
        key = f"{verb.upper()} {resource}" + ("" if 200 <= code < 300 else f" {code}")
        clients.setdefault(client, Counter())[key] += n
    for client, rows in sorted(clients.items(), key=lambda kv: -sum(kv[1].values())):
        total = sum(rows.values())
        out[client] = {
            "total": total,
            "perNode": round(total / max(1, nodes), 2),
            "requests": dict(rows.most_common()),
        }
    return out
