"""An ARN of another partition refused, as AWS refuses it: what moto accepts silently.

Each AWS partition (``aws``, ``aws-cn``, ``aws-us-gov``) is a world of its own: an EC2 call in
``cn-north-1`` naming a commercial instance profile ARN (partition field ``aws``), an IAM call
there naming a commercial managed policy, an EKS cluster given a commercial role ARN, are all
refused (the ARN is invalid there, or names nothing). moto takes any ARN in any region, so code
that writes the commercial partition into an ARN by hand passes every test and fails on the
first call in China or GovCloud.

Emulated here, explicitly: a request whose parameters or body hold an ARN of a partition other
than its region's is answered with an error before moto sees it (EC2 and SQS
``InvalidParameterValue``, IAM ``InvalidInput``, JSON services ``ValidationException``), as
AWS answers it. :data:`refused` records each refusal (service, action, the foreign ARN) so a
test can say which call carried it.
"""

from __future__ import annotations

import re
from typing import Any

from moto.core.exceptions import ServiceException
from moto.core.responses import ActionResult, BaseResponse

_ARN = re.compile(r"arn:(aws[a-z-]*):[a-z0-9-]*:[a-z0-9-]*:[a-z0-9]*:[^\s\"'\\&,\]}]+")
# the error code each service answers an invalid parameter with
_CODES = {"ec2": "InvalidParameterValue", "sqs": "InvalidParameterValue", "iam": "InvalidInput"}
_DEFAULT_CODE = "ValidationException"

refused: list[tuple[str, str, str]] = []
_original: dict[str, Any] = {}


class ForeignPartitionArn(ServiceException):
    """The one error this emulation answers; its code is the service's own."""


def foreign_arn(partition: str, texts: list[str]) -> str | None:
    """The first ARN in ``texts`` whose partition is not ``partition``."""
    for text in texts:
        for match in _ARN.finditer(text):
            if match.group(1) != partition:
                return match.group(0)
    return None


def _texts(response: BaseResponse) -> list[str]:
    out = [str(v) for values in (response.querystring or {}).values() for v in values]
    body = response.body
    if isinstance(body, bytes):
        body = body.decode(errors="replace")
    if body:
        out.append(str(body))
    return out


def _call_action(self: BaseResponse) -> Any:
    found = foreign_arn(self.partition, _texts(self))
    if found is None:
        return _original["call_action"](self)
    service = str(getattr(self, "service_name", "") or "")
    action = str(self._get_action() or "")
    refused.append((service, action, found))
    error = ForeignPartitionArn(
        _CODES.get(service, _DEFAULT_CODE),
        f"{found} is not a valid ARN in {self.region} (partition {self.partition})",
    )
    status, headers, body = self.serialized(ActionResult(error))
    headers = {**self.response_headers, **headers}
    return status, headers, body


def install() -> None:
    """Refuse foreign-partition ARNs in every service moto serves (idempotent)."""
    if _original:
        return
    _original["call_action"] = BaseResponse.call_action
    BaseResponse.call_action = _call_action  # type: ignore[method-assign]


def uninstall() -> None:
    if _original:
        BaseResponse.call_action = _original.pop("call_action")  # type: ignore[method-assign]
    refused.clear()
