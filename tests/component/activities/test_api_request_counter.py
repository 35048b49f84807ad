"""The scale scenario's API server request counter reads the real server's /metrics."""

from __future__ import annotations

from activities.kubernetes import nodeclaims
from activities.kubernetes.client import Kube
from sandbox.scenarios import api_requests


def test_the_counter_counts_the_requests_made_between_two_snapshots(admin: Kube) -> None:
    before = api_requests.snapshot(admin.api_client)
    for _ in range(3):
        nodeclaims.list_(admin)
    served = api_requests.delta(before, api_requests.snapshot(admin.api_client))
    assert served.get("LIST nodeclaims", 0) >= 3
