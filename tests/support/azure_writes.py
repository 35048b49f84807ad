"""What the Azure emulator was asked to write, counted at its request handler: the crash test's
oracle for "one VM per claim, ever" (independent of Joinery's own records)."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

_WRITE = re.compile(
    r"/providers/Microsoft\.(Compute/virtualMachines|Network/networkInterfaces)/(?P<name>[^/]+)$",
    re.I,
)


@dataclass
class ArmWrites:
    """Every VM and NIC write the emulator answered, seen from its request handler."""

    vms_by_claim: dict[str, set[str]] = field(default_factory=dict)
    writes: int = 0
    last_kind: str = ""
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def observe(self, emulator: Any) -> None:
        inner: Callable[..., tuple[int, dict[str, Any], dict[str, str]]] = emulator.handle

        def handle(method: str, target: str, headers: Any, *rest: Any) -> Any:
            answer = inner(method, target, headers, *rest)
            body = rest[0] if rest else b""
            self._saw(method, target.split("?", 1)[0], body, answer[0])
            return answer

        emulator.handle = handle

    def _saw(self, method: str, path: str, body: bytes, status: int) -> None:
        m = _WRITE.search(path)
        if m is None or method not in ("PUT", "DELETE") or not 200 <= status < 300:
            return
        with self._lock:
            self.writes += 1
            self.last_kind = "launch" if method == "PUT" else "termination"
            if method == "PUT" and "virtualmachines" in m.group(1).lower():
                claim = _claim_tag(body) or f"untagged:{m['name']}"
                self.vms_by_claim.setdefault(claim, set()).add(m["name"].lower())

    def doubles(self) -> dict[str, list[str]]:
        with self._lock:
            return {c: sorted(v) for c, v in self.vms_by_claim.items() if len(v) != 1}


def _claim_tag(body: bytes) -> str:
    """The NodeClaim a VM's create names in its tags (Azure tag names cannot hold ``/``, so
    Karpenter Azure writes ``karpenter.sh_nodeclaim``)."""
    try:
        tags = (json.loads(body or b"{}") or {}).get("tags") or {}
    except ValueError:
        return ""
    for key, value in tags.items():
        if key.lower().replace("/", "_").endswith("karpenter.sh_nodeclaim"):
            return str(value)
    return ""
