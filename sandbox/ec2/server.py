"""moto's ThreadedMotoServer on a free loopback port, with a reset that keeps our emulation."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import boto3
from moto.moto_api._internal.models import moto_api_backend
from moto.server import ThreadedMotoServer

from sandbox.processes import free_ports

# moto accepts any credentials; boto3 only needs some to sign requests.
FAKE_CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}


@dataclass
class MotoServer:
    """A running server; ``endpoint_url`` is what boto3 clients point at."""

    server: ThreadedMotoServer
    port: int

    @property
    def endpoint_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def session(self) -> boto3.session.Session:
        return boto3.session.Session(**FAKE_CREDENTIALS)

    def client(self, service: str, region: str) -> Any:
        return self.session().client(service, region_name=region, endpoint_url=self.endpoint_url)

    def reset(self) -> None:
        """Drop every resource in every backend (in-process, same as POST /moto-api/reset)."""
        moto_api_backend.reset()

    def stop(self) -> None:
        self.server.stop()


def start_server(port: int | None = None) -> MotoServer:
    # werkzeug logs every request and prints a traceback for services moto lacks (Pricing).
    logging.getLogger("werkzeug").setLevel(logging.CRITICAL)
    chosen = port or free_ports(1)[0]
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=chosen, verbose=False)
    server.start()
    return MotoServer(server, chosen)
