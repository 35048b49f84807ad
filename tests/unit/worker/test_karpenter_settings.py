"""Karpenter's settings under their own names: precedence, parsing, refusals, the rate limit."""

from __future__ import annotations

import logging
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client

from activities.kubernetes import rate_limit
from activities.kubernetes.rate_limit import TokenBucket
from worker.cli import main, worker_command
from worker.cli.command import build_parser
from worker.running import karpenter_settings as K
from worker.running.settings import Settings
from worker.usage import UsageError

ROOT = Path(__file__).resolve().parents[3]

# Every setting of Karpenter v1.14 (kubernetes-sigs/karpenter and aws/karpenter-provider-aws
# pkg/operator/options), written out here from reading them: each must have a row.
KARPENTER_V1_14 = {
    # core
    "KARPENTER_SERVICE", "METRICS_PORT", "HEALTH_PROBE_PORT", "KUBE_CLIENT_QPS",
    "KUBE_CLIENT_BURST", "ENABLE_PROFILING", "DISABLE_CONTROLLER_WARMUP",
    "DISABLE_LEADER_ELECTION", "DISABLE_CLUSTER_STATE_OBSERVABILITY", "LEADER_ELECTION_NAME",
    "LEADER_ELECTION_NAMESPACE", "MEMORY_LIMIT", "CPU_REQUESTS", "LOG_LEVEL",
    "LOG_OUTPUT_PATHS", "LOG_ERROR_OUTPUT_PATHS", "BATCH_MAX_DURATION", "BATCH_IDLE_DURATION",
    "PREFERENCE_POLICY", "MIN_VALUES_POLICY", "IGNORE_DRA_REQUESTS", "FEATURE_GATES",
    "SCHEDULER_CONFIG",
    # AWS provider
    "CLUSTER_CA_BUNDLE", "CLUSTER_NAME", "CLUSTER_ENDPOINT", "ISOLATED_VPC", "EKS_CONTROL_PLANE",
    "VM_MEMORY_OVERHEAD_PERCENT", "INTERRUPTION_QUEUE", "RESERVED_ENIS", "DISABLE_DRY_RUN",
    "ENABLE_ZONAL_SHIFT", "AMI_REFRESH_INTERVAL", "SUBNET_REFRESH_INTERVAL", "AWS_FEATURE_GATES",
}  # fmt: skip
# Another part of the settings parses these (the scheduling policies and feature gates).
OWNED_ELSEWHERE = {"FEATURE_GATES", "MIN_VALUES_POLICY", "PREFERENCE_POLICY"}


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for setting in K.SETTINGS:
        for var in (setting.env, setting.joinery_env):
            if var:
                monkeypatch.delenv(var, raising=False)


def settings(*argv: str) -> Settings:
    args = build_parser(["worker"]).parse_args(["worker", *argv])
    return worker_command.settings_from(args)


def test_every_karpenter_setting_is_implemented_or_refused() -> None:
    listed = {s.env for s in K.SETTINGS}
    assert listed >= KARPENTER_V1_14, f"no row for {sorted(KARPENTER_V1_14 - listed)}"
    assert {s.env for s in K.SETTINGS if s.status == K.MINVALUES} == OWNED_ELSEWHERE
    for s in K.SETTINGS:
        if s.status == K.IMPLEMENTED:
            assert s.flag and s.joinery_env, f"{s.env} has no flag or JOINERY_ name"
        if s.status == K.REFUSED and s.env != "METRICS_PORT":
            assert s.accepts is not None, s.env


def test_go_durations() -> None:
    assert K.duration_seconds("1s") == 1.0
    assert K.duration_seconds("500ms") == 0.5
    assert K.duration_seconds("1m30s") == 90.0
    assert K.duration_seconds("1h0m2.5s") == 3602.5
    assert K.duration_seconds("0") == 0.0
    assert K.duration_seconds("2.5") == 2.5  # plain seconds
    for bad in ("", "1d", "s", "1 s", "-1s", "ten"):
        with pytest.raises(ValueError):
            K.duration_seconds(bad)


def test_defaults_are_karpenters() -> None:
    s = settings()
    assert (s.batch_idle_seconds, s.batch_max_seconds) == (1.0, 10.0)
    assert (s.vm_memory_overhead_percent, s.reserved_enis) == (0.075, 0)
    assert s.isolated_vpc is False and s.eks_control_plane is None
    assert s.nodeclass_refresh_seconds == 60.0
    assert s.log_level == "info" and s.kube_client_qps == 0
    assert s.cluster == "joinery" and s.temporal.task_queue == "joinery@joinery"


def test_karpenter_names_are_read(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in {
        "CLUSTER_NAME": "prod-east",
        "CLUSTER_ENDPOINT": "https://ABC.gr7.us-east-1.eks.amazonaws.com",
        "CLUSTER_CA_BUNDLE": "Q0E=",
        "INTERRUPTION_QUEUE": "prod-east",
        "ISOLATED_VPC": "true",
        "EKS_CONTROL_PLANE": "false",
        "VM_MEMORY_OVERHEAD_PERCENT": "0.1",
        "RESERVED_ENIS": "1",
        "BATCH_IDLE_DURATION": "2s",
        "BATCH_MAX_DURATION": "1m",
        "AMI_REFRESH_INTERVAL": "5m",
        "SUBNET_REFRESH_INTERVAL": "2m",
        "KUBE_CLIENT_QPS": "50",
        "KUBE_CLIENT_BURST": "80",
        "LOG_LEVEL": "DEBUG",
        "HEALTH_PROBE_PORT": "9090",
    }.items():
        monkeypatch.setenv(name, value)
    s = settings()
    assert s.cluster == "prod-east"
    assert s.temporal.task_queue == "joinery@prod-east"
    assert s.cluster_endpoint.startswith("https://ABC")
    assert s.cluster_ca_bundle == "Q0E="
    assert s.interruption_queue == "prod-east"
    assert s.isolated_vpc is True and s.eks_control_plane is False
    assert (s.vm_memory_overhead_percent, s.reserved_enis) == (0.1, 1)
    assert (s.batch_idle_seconds, s.batch_max_seconds) == (2.0, 60.0)
    assert s.nodeclass_refresh_seconds == 120.0  # the shorter of the two
    assert (s.kube_client_qps, s.kube_client_burst) == (50.0, 80)
    assert s.log_level == "debug"
    assert s.health_port == 9090


def test_flags_then_joinery_names_then_karpenters(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RESERVED_ENIS", "1")
    monkeypatch.setenv("CLUSTER_NAME", "from-karpenter")
    assert settings().reserved_enis == 1
    monkeypatch.setenv("JOINERY_RESERVED_ENIS", "2")
    monkeypatch.setenv("JOINERY_CLUSTER", "from-joinery")
    s = settings()
    assert (s.reserved_enis, s.cluster) == (2, "from-joinery")
    s = settings("--reserved-enis", "3", "--cluster", "from-flag")
    assert (s.reserved_enis, s.cluster) == (3, "from-flag")


@pytest.mark.parametrize(
    ("env", "value", "says"),
    [
        ("VM_MEMORY_OVERHEAD_PERCENT", "7.5", "--vm-memory-overhead-percent '7.5'"),
        ("RESERVED_ENIS", "-1", "--reserved-enis '-1'"),
        ("RESERVED_ENIS", "two", "--reserved-enis 'two'"),
        ("ISOLATED_VPC", "maybe", "--isolated-vpc 'maybe'"),
        ("BATCH_IDLE_DURATION", "1d", "--batch-idle-duration '1d'"),
        ("BATCH_IDLE_DURATION", "20s", "must not exceed --batch-max-duration"),
        ("BATCH_MAX_DURATION", "0s", "must be more than 0"),
        ("AMI_REFRESH_INTERVAL", "30s", "at least 1m"),
        ("LOG_LEVEL", "verbose", "--log-level 'verbose'"),
        ("KUBE_CLIENT_QPS", "-5", "--kube-client-qps '-5'"),
    ],
)
def test_a_bad_value_is_one_usage_line(
    monkeypatch: pytest.MonkeyPatch, env: str, value: str, says: str
) -> None:
    monkeypatch.setenv(env, value)
    with pytest.raises(UsageError, match=says) as raised:
        settings()
    assert "\n" not in str(raised.value)


# Each refused setting: a value that asks for what Joinery does not do, and one that asks for
# what it does anyway.
REFUSAL_CASES = [
    ("ENABLE_ZONAL_SHIFT", "true", "false"),
    ("DISABLE_DRY_RUN", "false", "true"),
    ("AWS_FEATURE_GATES", "NodeClassCEL=true", "NodeClassCEL=false"),
    ("ASSUME_ROLE_ARN", "arn:aws:iam::111122223333:role/karpenter", ""),
    ("ASSUME_ROLE_DURATION", "1h", "15m"),
    ("METRICS_PORT", "8080", "8081"),  # the health port, which serves /metrics
    ("LOG_OUTPUT_PATHS", "/var/log/karpenter.log", "stderr"),
    ("LOG_ERROR_OUTPUT_PATHS", "/var/log/karpenter-errors.log", "stderr"),
    ("DISABLE_LEADER_ELECTION", "false", "true"),
    ("LEADER_ELECTION_NAME", "karpenter-leader-election", ""),
    ("LEADER_ELECTION_NAMESPACE", "kube-system", ""),
    ("DISABLE_CONTROLLER_WARMUP", "true", "false"),
    ("DISABLE_CLUSTER_STATE_OBSERVABILITY", "true", "false"),
    ("ENABLE_PROFILING", "true", "false"),
    ("MEMORY_LIMIT", "1073741824", "-1"),
    ("CPU_REQUESTS", "1000", ""),
    ("IGNORE_DRA_REQUESTS", "false", "true"),
    ("SCHEDULER_CONFIG", "profiles: []", ""),
    ("KARPENTER_SERVICE", "karpenter", ""),
]


def test_every_refused_setting_has_a_refusal_case() -> None:
    refused = {s.env for s in K.SETTINGS if s.status == K.REFUSED}
    assert {env for env, _, _ in REFUSAL_CASES} == refused


@pytest.mark.parametrize(("env", "refused", "accepted"), REFUSAL_CASES)
def test_a_refused_setting_stops_the_worker_unless_it_asks_for_what_joinery_does(
    monkeypatch: pytest.MonkeyPatch, env: str, refused: str, accepted: str
) -> None:
    monkeypatch.setenv(env, accepted)
    settings()
    monkeypatch.setenv(env, refused)
    with pytest.raises(UsageError, match=rf"setting {env}=.* is not supported by Joinery: "):
        settings()


def test_a_refusal_exits_2_in_one_line_before_connecting() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "worker.cli", "worker"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "ENABLE_ZONAL_SHIFT": "true"},
    )
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert lines == [
        "joinery worker: setting ENABLE_ZONAL_SHIFT='true' is not supported by Joinery: "
        "ARC zonal shift is not implemented: only false is accepted"
    ]
    assert main(["worker", "--batch-idle-duration", "soon"]) == 2


def test_the_token_bucket_spends_the_burst_then_paces_at_the_rate() -> None:
    now = [100.0]
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        now[0] += seconds

    bucket = TokenBucket(10.0, 3, clock=lambda: now[0], sleep=sleep)
    for _ in range(3):
        bucket.take()
    assert slept == []  # the burst
    bucket.take()
    bucket.take()
    assert slept == pytest.approx([0.1, 0.1])  # then one every 1/10 s
    now[0] += 10.0  # idle: the bucket refills, never above its burst
    for _ in range(3):
        bucket.take()
    assert len(slept) == 2
    bucket.take()
    assert slept[-1] == pytest.approx(0.1)


def test_kube_client_qps_and_burst_throttle_every_api_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The worker's settings wrap its ApiClient (worker/running/app.py): n requests take at
    least (n - burst) / qps seconds, as a token bucket allows; QPS 0 leaves it unwrapped."""
    calls: list[tuple[Any, ...]] = []

    def api_client() -> client.ApiClient:
        api = client.ApiClient()
        api.request = lambda *args, **kwargs: calls.append(args)
        return api

    plain = api_client()
    unlimited = settings()
    assert rate_limit.limit(plain, unlimited.kube_client_qps, unlimited.kube_client_burst) is None
    monkeypatch.setenv("KUBE_CLIENT_QPS", "20")
    monkeypatch.setenv("KUBE_CLIENT_BURST", "2")
    s = settings()
    api = api_client()
    started = time.monotonic()
    bucket = rate_limit.limit(api, s.kube_client_qps, s.kube_client_burst)
    assert bucket is not None and (bucket.rate, bucket.burst) == (20.0, 2)
    for n in range(4):
        api.request("GET", f"/api/v1/nodes/{n}")
    assert time.monotonic() - started >= (4 - 2) / 20 - 0.005
    assert calls == [("GET", f"/api/v1/nodes/{n}") for n in range(4)]
    monkeypatch.delenv("KUBE_CLIENT_BURST")
    s = settings()  # no burst given: the QPS
    bucket = rate_limit.limit(api_client(), s.kube_client_qps, s.kube_client_burst)
    assert bucket is not None and bucket.burst == 20


@pytest.mark.parametrize(
    ("value", "level"),
    [("debug", logging.DEBUG), ("info", logging.INFO), ("error", logging.WARNING)],
)
def test_log_level_sets_the_workers_logging_level(
    monkeypatch: pytest.MonkeyPatch, value: str, level: int
) -> None:
    """``joinery worker`` configures logging at LOG_LEVEL (error keeps warnings) before it
    starts; the run itself is replaced, so nothing connects."""
    configured: list[int] = []
    monkeypatch.setattr(
        worker_command.logging, "basicConfig", lambda **kw: configured.append(kw["level"])
    )
    monkeypatch.setattr(worker_command.asyncio, "run", lambda coro: coro.close())
    monkeypatch.setenv("LOG_LEVEL", value.upper())
    args = build_parser(["worker"]).parse_args(["worker"])
    assert worker_command.run(args) == 0
    assert configured == [level]


def test_the_chart_has_a_value_for_each_setting_with_a_chart_key() -> None:
    values = yaml.safe_load((ROOT / "deploy" / "helm" / "joinery" / "values.yaml").read_text())
    missing = []
    for s in K.SETTINGS:
        if not s.chart:
            continue
        node: Any = values
        for part in s.chart.removesuffix(".*").split("."):
            if not isinstance(node, dict) or part not in node:
                missing.append(f"{s.env}: {s.chart}")
                break
            node = node[part]
    assert not missing, f"values.yaml lacks {missing}"


def test_joinery_catalog_builds_with_the_workers_memory_and_eni_settings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def values(*argv: str) -> tuple[float, int]:
        args = build_parser(["catalog"]).parse_args(["catalog", "--region", "us-east-1", *argv])
        return K.catalog_values(args)

    assert values() == (0.075, 0)
    monkeypatch.setenv("RESERVED_ENIS", "2")
    monkeypatch.setenv("VM_MEMORY_OVERHEAD_PERCENT", "0.05")
    assert values() == (0.05, 2)
    assert values("--reserved-enis", "1") == (0.05, 1)
    with pytest.raises(UsageError, match="--reserved-enis 'x'"):
        values("--reserved-enis", "x")
    # joinery explain has no flags for them: it sizes as the worker's environment says
    assert K.catalog_values() == (0.05, 2)
