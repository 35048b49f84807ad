"""The sandbox's listening ports: distinct, bindable, and never from the kernel's ephemeral
range, where any outgoing connection may take a port before the component binds it."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from sandbox import processes
from sandbox.processes import EPHEMERAL_RANGE, free_ports


def test_ports_are_distinct_bindable_and_outside_the_ephemeral_range() -> None:
    low, high = map(int, Path(EPHEMERAL_RANGE).read_text().split())
    ports = free_ports(40)
    assert len(set(ports)) == 40
    assert not any(low <= p <= high for p in ports)
    for port in ports:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(("127.0.0.1", port))


def test_a_taken_port_is_never_returned(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", free_ports(1)[0]))
        taken.listen()
        mine = int(taken.getsockname()[1])
        # only two candidates: the taken port and the one after it (free, or the test fails)
        monkeypatch.setattr(processes, "_listen_range", lambda: (mine, mine + 1))
        assert {p for _ in range(20) for p in free_ports(1)} == {mine + 1}
