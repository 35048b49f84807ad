"""The emulator's instance-type answers: the same bytes as moto's, built once and kept."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from moto.ec2.responses import EC2Response

from sandbox.ec2 import static_answers
from sandbox.ec2.emulation import Emulation
from sandbox.ec2.server import MotoServer

REGION = "us-east-1"
TYPES = ["m5.large", "c6g.xlarge", "t3.micro"]


def _ask(moto_server: MotoServer) -> tuple[list[str], list[tuple[str, str]]]:
    ec2 = moto_server.client("ec2", REGION)
    types = ec2.describe_instance_types(InstanceTypes=TYPES)["InstanceTypes"]
    offerings = ec2.describe_instance_type_offerings(
        LocationType="availability-zone",
        Filters=[{"Name": "instance-type", "Values": TYPES}],
    )["InstanceTypeOfferings"]
    return (
        sorted(t["InstanceType"] for t in types),
        sorted((o["InstanceType"], o["Location"]) for o in offerings),
    )


@pytest.fixture
def answers_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("JOINERY_EC2_ANSWERS_CACHE", str(tmp_path))
    monkeypatch.setattr(static_answers, "_memory", {})
    return tmp_path


def _count_moto_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Wrap moto's own handlers behind the kept answers, recording each call that reaches them."""
    calls: list[str] = []
    for action in static_answers.STATIC_ACTIONS:
        original = static_answers._originals[action]

        def counted(self: Any, _action: str = action, _original: Any = original) -> Any:
            calls.append(_action)
            return _original(self)

        monkeypatch.setitem(static_answers._originals, action, counted)
        monkeypatch.setattr(EC2Response, action, static_answers._kept(action))
    return calls


def test_kept_answers_equal_motos_and_are_built_once(
    moto_server: MotoServer,
    emulation: Emulation,
    answers_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = _count_moto_calls(monkeypatch)
    first = _ask(moto_server)
    assert first[0] == sorted(TYPES)
    assert {t for t, _ in first[1]} == set(TYPES)
    assert sorted(calls) == sorted(static_answers.STATIC_ACTIONS)
    assert len(list(answers_dir.glob("*.json"))) == 2

    # From memory, then (a new process's view) from the files: moto is not asked again.
    assert _ask(moto_server) == first
    monkeypatch.setattr(static_answers, "_memory", {})
    assert _ask(moto_server) == first
    assert len(calls) == 2

    # A different request is a different answer.
    ec2 = moto_server.client("ec2", REGION)
    one = ec2.describe_instance_types(InstanceTypes=["m5.large"])["InstanceTypes"]
    assert [t["InstanceType"] for t in one] == ["m5.large"]
    assert len(calls) == 3

    # moto's own handlers, unpatched, give the same answer.
    for action in static_answers.STATIC_ACTIONS:
        monkeypatch.setattr(EC2Response, action, static_answers._originals[action])
    assert _ask(moto_server) == first


def test_a_damaged_entry_is_answered_afresh(
    moto_server: MotoServer,
    emulation: Emulation,
    answers_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = _count_moto_calls(monkeypatch)
    first = _ask(moto_server)
    for entry in answers_dir.glob("*.json"):
        entry.write_text('{"status": 200, "body"')
    monkeypatch.setattr(static_answers, "_memory", {})
    assert _ask(moto_server) == first
    assert len(calls) == 4


def test_an_empty_setting_keeps_answers_in_memory_only(
    moto_server: MotoServer, emulation: Emulation, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JOINERY_EC2_ANSWERS_CACHE", "")
    monkeypatch.setattr(static_answers, "_memory", {})
    monkeypatch.chdir(tmp_path)
    assert static_answers.cache_dir() is None
    _ask(moto_server)
    assert len(static_answers._memory) == 2
    assert not list(tmp_path.iterdir())
