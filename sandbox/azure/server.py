"""The Azure emulator's HTTPS server: the ARM and Retail Prices calls Joinery makes.

The Azure SDK sends bearer tokens only over HTTPS, so the server speaks TLS with a
throwaway CA (``sandbox/tls.py``); clients trust ``ca_file``. Answers are shaped as ARM's:
``{"value": [...], "nextLink": ...}`` pages, ``{"error": {"code", "message"}}`` errors,
429 with ``Retry-After`` when throttled; the Retail Prices API pages with ``NextPageLink``.
VMs, their disks and NICs (``vms``, ``nics``) answer writes too, as long-running operations.
"""

from __future__ import annotations

import json
import re
import ssl
import tempfile
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from sandbox.azure.arm_reads import ArmReads, NotFound
from sandbox.azure.faults import Faults
from sandbox.azure.galleries import Galleries
from sandbox.azure.nics import NetworkInterfaces
from sandbox.azure.operations import Operations
from sandbox.azure.resource_table import Answer, ArmFailure
from sandbox.azure.seed import AzureSeed
from sandbox.azure.vms import VirtualMachines
from sandbox.processes import free_ports
from sandbox.tls import CertFiles, make_certs

_SUB = r"/subscriptions/(?P<sub>[^/]+)"
SKUS = re.compile(_SUB + r"/providers/Microsoft\.Compute/skus$", re.I)
LOCATIONS = re.compile(_SUB + r"/locations$", re.I)
OPERATION = re.compile(
    _SUB + r"/providers/Microsoft\.(Compute|Network)/locations/(?P<loc>[^/]+)/operations/"
    r"(?P<id>[^/]+)$",
    re.I,
)
USAGES = re.compile(_SUB + r"/providers/Microsoft\.Compute/locations/(?P<loc>[^/]+)/usages$", re.I)
PROVIDER = re.compile(_SUB + r"/providers/(?P<ns>[^/]+)$", re.I)
RESOURCE_GROUP = re.compile(_SUB + r"/resourcegroups/(?P<rg>[^/]+)$", re.I)
SUBNET = re.compile(
    _SUB + r"/resourceGroups/[^/]+/providers/Microsoft\.Network/virtualNetworks/[^/]+"
    r"/subnets/[^/]+$",
    re.I,
)
RETAIL = "/api/retail/prices"
_FILTER_LOCATION = re.compile(r"location\s+eq\s+'([^']*)'", re.I)
_FILTER_REGION = re.compile(r"armRegionName\s+eq\s+'([^']*)'", re.I)


class ArmError(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


@dataclass
class AzureEmulator:
    """State and settings shared by the request threads."""

    seed: AzureSeed = field(default_factory=AzureSeed)
    faults: Faults = field(default_factory=Faults)
    operations: Operations = field(default_factory=Operations)
    arm: ArmReads = field(default_factory=ArmReads)
    galleries: Galleries = field(default_factory=Galleries)
    sku_page_size: int = 10
    price_page_size: int = 1000
    requests: list[tuple[str, str]] = field(default_factory=list)  # (method, path?query)
    base_url: str = ""
    nics: NetworkInterfaces = field(init=False)
    vms: VirtualMachines = field(init=False)

    def __post_init__(self) -> None:
        self.nics = NetworkInterfaces(self.arm, self.operations)
        self.vms = VirtualMachines(self.seed.skus_in, self.nics, self.operations)

    def handle(self, method: str, target: str, headers: Any, body: bytes = b"") -> Answer:
        """(status, JSON body, extra headers) for one request; status 0: no answer at all
        (an injected timeout: the connection is dropped)."""
        self.requests.append((method, target))
        url = urllib.parse.urlsplit(target)
        query = {k: v[-1] for k, v in urllib.parse.parse_qs(url.query).items()}
        fault = self.faults.take(url.path, method)
        if fault is not None:
            if fault.hang_seconds:
                time.sleep(fault.hang_seconds)
                return 0, {}, {}
            extra = {"Retry-After": str(fault.retry_after)} if fault.retry_after else {}
            return fault.status, _error(fault.code, fault.message), extra
        try:
            if url.path != RETAIL:
                self._check_arm(headers, query)
            written = self._resources(method, url.path, query, body)
            if written is not None:
                return written
            if method != "GET":
                raise ArmError(405, "MethodNotAllowed", f"{method} is not supported here")
            if url.path == RETAIL:
                return 200, self._retail(query), {}
            if m := SKUS.match(url.path):
                return 200, self._skus(m["sub"], query), {}
            if m := LOCATIONS.match(url.path):
                return 200, {"value": self.seed.locations}, {}
            if m := OPERATION.match(url.path):
                status = self.operations.status(m["id"])
                if status is None:
                    raise ArmError(404, "NotFound", f"operation {m['id']} not found")
                return 200, status, {}
            return 200, self._arm_read(url.path), {}
        except NotFound as exc:
            return 404, _error(exc.code, exc.message), {}
        except (ArmError, ArmFailure) as exc:
            return exc.status, _error(exc.code, exc.message), {}

    def _resources(
        self, method: str, path: str, query: dict[str, str], raw: bytes
    ) -> Answer | None:
        """VMs, disks and NICs (``vms``, ``nics``); None when the path is none of theirs."""
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            raise ArmError(
                400, "InvalidRequestContent", "The request content is not JSON."
            ) from None
        for kind in (self.vms, self.nics):
            answer = kind.handle(method, path, query, body, self.base_url)
            if answer is not None:
                return answer
        return None

    def _arm_read(self, path: str) -> dict[str, Any]:
        """Quota, provider registrations, resource groups and subnets (``arm_reads``), and
        community gallery image versions (``galleries``)."""
        if m := USAGES.match(path):
            skus = self.seed.skus_in(m["loc"])
            families = [str(s["family"]) for s in skus if s.get("family")]
            return {"value": self.arm.usages(m["loc"], families)}
        if m := PROVIDER.match(path):
            return self.arm.provider(m["sub"], m["ns"])
        if m := RESOURCE_GROUP.match(path):
            return self.arm.resource_group(m["sub"], m["rg"])
        if SUBNET.match(path):
            return self.arm.subnet(path)
        gallery = self.galleries.answer(path)
        if gallery is not None:
            return gallery
        raise ArmError(404, "NotFound", f"the emulator does not serve {path}")

    def _check_arm(self, headers: Any, query: dict[str, str]) -> None:
        auth = headers.get("Authorization", "")
        if not auth.startswith("Bearer ") or len(auth) <= len("Bearer "):
            raise ArmError(
                401,
                "AuthenticationFailed",
                "Authentication failed. The 'Authorization' header "
                "is missing or not a bearer token.",
            )
        if "api-version" not in query:
            raise ArmError(
                400,
                "MissingApiVersionParameter",
                "The api-version query parameter (?api-version=) is required for all requests.",
            )

    def _page(
        self, items: list[dict[str, Any]], start: int, size: int
    ) -> tuple[list[dict[str, Any]], int | None]:
        end = start + size
        return items[start:end], (end if end < len(items) else None)

    def _skus(self, sub: str, query: dict[str, str]) -> dict[str, Any]:
        flt = query.get("$filter")
        if flt:
            m = _FILTER_LOCATION.search(flt)
            if m is None:
                raise ArmError(
                    400,
                    "InvalidFilter",
                    "Only the location filter is supported: $filter=location eq '<location>'",
                )
            items = self.seed.skus_in(m.group(1))
        else:
            items = self.seed.skus
        start = _int(query.get("$skipToken", "0"), "$skipToken")
        page, next_start = self._page(items, start, self.sku_page_size)
        body: dict[str, Any] = {"value": page}
        if next_start is not None:
            params = {k: v for k, v in query.items() if k != "$skipToken"}
            params["$skipToken"] = str(next_start)
            body["nextLink"] = (
                f"{self.base_url}/subscriptions/{sub}/providers/Microsoft.Compute/skus?"
                + urllib.parse.urlencode(params, quote_via=urllib.parse.quote)
            )
        return body

    def _retail(self, query: dict[str, str]) -> dict[str, Any]:
        m = _FILTER_REGION.search(query.get("$filter", ""))
        items = self.seed.prices_in(m.group(1)) if m else []
        start = _int(query.get("$skip", "0"), "$skip")
        page, next_start = self._page(items, start, self.price_page_size)
        next_link = None
        if next_start is not None:
            params = {k: v for k, v in query.items() if k != "$skip"}
            params["$skip"] = str(next_start)
            next_link = f"{self.base_url}{RETAIL}?" + urllib.parse.urlencode(
                params, quote_via=urllib.parse.quote
            )
        return {
            "BillingCurrency": "USD",
            "CustomerEntityId": "Default",
            "CustomerEntityType": "Retail",
            "Items": page,
            "NextPageLink": next_link,
            "Count": len(page),
        }


def _int(value: str, name: str) -> int:
    try:
        return max(0, int(value))
    except ValueError:
        raise ArmError(400, "InvalidParameter", f"{name} must be an integer") from None


def _error(code: str, message: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message}}


class _Handler(BaseHTTPRequestHandler):
    emulator: AzureEmulator
    protocol_version = "HTTP/1.1"

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        status, body, extra = self.emulator.handle(self.command, self.path, self.headers, raw)
        if status == 0:  # an injected timeout: no answer
            self.close_connection = True
            return
        data = json.dumps(body).encode() if status != 204 else b""
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("x-ms-request-id", "00000000-0000-0000-0000-000000000000")
        for k, v in extra.items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_PUT = do_POST = do_DELETE = do_PATCH = _answer

    def log_message(self, format: str, *args: Any) -> None:
        return


@dataclass
class AzureServer:
    """A running emulator; point SDK clients at ``endpoint`` and trust ``ca_file``."""

    emulator: AzureEmulator
    httpd: ThreadingHTTPServer
    thread: threading.Thread
    certs: CertFiles
    port: int

    @property
    def endpoint(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    @property
    def retail_prices_url(self) -> str:
        return f"{self.endpoint}{RETAIL}"

    @property
    def ca_file(self) -> str:
        return str(self.certs.ca)

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


def start_server(
    emulator: AzureEmulator | None = None, *, certs_dir: Path | None = None
) -> AzureServer:
    """Serve ``emulator`` (a freshly seeded one by default) on a free loopback port."""
    emu = emulator or AzureEmulator()
    folder = certs_dir or Path(tempfile.mkdtemp(prefix="joinery-azure-"))
    certs = make_certs(folder)
    port = free_ports(1)[0]
    handler = type("Handler", (_Handler,), {"emulator": emu})
    httpd = ThreadingHTTPServer(("127.0.0.1", port), handler)
    httpd.daemon_threads = True
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(certs.server_cert, certs.server_key)
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    emu.base_url = f"https://127.0.0.1:{port}"
    thread = threading.Thread(target=httpd.serve_forever, name="azure-emulator", daemon=True)
    thread.start()
    return AzureServer(emu, httpd, thread, certs, port)
