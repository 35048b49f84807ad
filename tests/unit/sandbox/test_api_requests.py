"""The API server request counter the scale scenario reports (sandbox/scenarios/api_requests.py)."""

from __future__ import annotations

from sandbox.scenarios import api_requests


def _line(verb: str, resource: str, subresource: str, code: str, value: int) -> str:
    labels = (
        f'code="{code}",component="apiserver",dry_run="",group="karpenter.sh",'
        f'resource="{resource}",scope="resource",subresource="{subresource}",'
        f'verb="{verb}",version="v1"'
    )
    return f"apiserver_request_total{{{labels}}} {value}"


TEXT = "\n".join(
    [
        "# HELP apiserver_request_total [STABLE] Counter of apiserver requests",
        "# TYPE apiserver_request_total counter",
        _line("GET", "nodeclaims", "", "200", 10),
        _line("GET", "nodeclaims", "", "404", 2),
        _line("PATCH", "nodeclaims", "status", "200", 4),
        _line("WATCH", "nodes", "", "200", 7),
        _line("GET", "", "/metrics", "200", 1),
        'apiserver_request_duration_seconds_count{verb="GET"} 99',
    ]
)


def test_parse_sums_codes_and_skips_watches() -> None:
    got = api_requests.parse(TEXT)
    assert got["GET nodeclaims"] == 10
    assert got["GET nodeclaims 404"] == 2
    assert got["PATCH nodeclaims/status"] == 4
    assert not any(k.startswith("WATCH") for k in got)
    assert "GET (none)//metrics" in got


def test_delta_and_per_node() -> None:
    before = {"GET nodeclaims": 12.0, "PATCH nodeclaims/status": 4.0}
    after = {"GET nodeclaims": 32.0, "PATCH nodeclaims/status": 4.0, "GET nodes": 50.0}
    served = api_requests.delta(before, after)
    assert served == {"GET nodes": 50, "GET nodeclaims": 20}
    assert api_requests.per_node(served, 10, ("nodeclaims",)) == {"GET nodeclaims": 2.0}
