"""AWS errors, classified once: retryable or not, and which offerings they rule out.

Workflows decide retries from the exception type alone (``retryable``), so every boto3 call in
the provider goes through :func:`aws_errors`, which turns botocore's stringly-typed codes into
the small hierarchy below.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from botocore.exceptions import (
    BotoCoreError,
    ClientError,
)
from botocore.exceptions import (
    ConnectionError as BotoConnectionError,
)

# An account that never used Spot, whose launcher may not create the Spot service-linked
# role: every spot CreateFleet is refused with this code, whatever the pool.
SPOT_SERVICE_LINKED_ROLE_CODE = "AuthFailure.ServiceLinkedRoleCreationNotPermitted"
# Codes that mean "this pool (capacity type, instance type, zone) cannot be had right now".
UNFULFILLABLE_CAPACITY_CODES = frozenset(
    {
        SPOT_SERVICE_LINKED_ROLE_CODE,
        "MaxFleetCountExceeded",
        "InsufficientInstanceCapacity",
        "MaxSpotInstanceCountExceeded",
        "VcpuLimitExceeded",
        "UnfulfillableCapacity",
        "Unsupported",
        "InsufficientFreeAddressesInSubnet",
        "ReservationCapacityExceeded",
        "InsufficientCapacityOnHost",
    }
)
# Codes whose scope is the whole capacity type rather than one pool.
CAPACITY_TYPE_WIDE_CODES = frozenset(
    {"MaxSpotInstanceCountExceeded", SPOT_SERVICE_LINKED_ROLE_CODE}
)
THROTTLING_CODES = frozenset(
    {
        "RequestLimitExceeded",
        "Throttling",
        "ThrottlingException",
        "TooManyRequestsException",
        "RequestThrottled",
        "SlowDown",
        "EC2ThrottledException",
    }
)
TRANSIENT_CODES = frozenset(
    {"InternalError", "InternalFailure", "ServiceUnavailable", "Unavailable", "RequestTimeout"}
)
NOT_FOUND_CODES = frozenset(
    {"InvalidInstanceID.NotFound", "InvalidInstanceID.Malformed", "InvalidInstanceId.NotFound"}
)
# A client token used again with other parameters: EC2 refuses the request and names no
# resource, so the caller must find what the earlier request made (by its tags).
TOKEN_REUSED_CODES = frozenset({"IdempotentParameterMismatch"})
LAUNCH_TEMPLATE_NOT_FOUND_CODES = frozenset(
    {
        "InvalidLaunchTemplateName.NotFoundException",
        "InvalidLaunchTemplateId.NotFound",
        "InvalidLaunchTemplateId.VersionNotFound",
    }
)


@dataclass(frozen=True, slots=True)
class Pool:
    """One offering as EC2 sells it; the unit the insufficient-capacity cache works in."""

    capacity_type: str
    instance_type: str
    zone: str


class EC2Error(Exception):
    """Base of every provider error; ``retryable`` tells the caller whether to try again."""

    retryable = False

    def __init__(self, message: str, code: str = "") -> None:
        super().__init__(message)
        self.code = code


class Throttled(EC2Error):
    """The API asked us to slow down; the same call will succeed later."""

    retryable = True


class TransientError(EC2Error):
    """Server-side or network failure; retrying the same call is safe."""

    retryable = True


class InsufficientCapacity(EC2Error):
    """No capacity in any pool tried; those pools are now in the unavailable-offerings cache.

    Not retryable as the same call: the caller must re-plan with the remaining offerings.
    """

    def __init__(self, message: str, pools: tuple[Pool, ...] = (), code: str = "") -> None:
        super().__init__(message, code)
        self.pools = pools


class NodeClassNotReady(EC2Error):
    """The EC2NodeClass resolves to nothing launchable (no subnet, security group or AMI)."""

    def __init__(self, message: str, reason: str = "NodeClassNotReady") -> None:
        super().__init__(message, reason)
        self.reason = reason


class InstanceNotFound(EC2Error):
    """The instance does not exist (or is terminated): for delete, that means done."""


class LaunchTemplateNotFound(EC2Error):
    """A cached launch template vanished; retryable once the cache entry is dropped."""

    retryable = True


class TokenReused(EC2Error):
    """An earlier request with the same client token but other parameters took effect (an
    earlier release's launch of the claim, or an earlier attempt's with other overrides).
    Retryable: its instance is found by tag, now or once EC2's reads list it."""

    retryable = True


class LaunchFailed(EC2Error):
    """A launch error that another attempt with the same input will not fix."""


def error_code(exc: BaseException) -> str:
    if isinstance(exc, ClientError):
        return str(exc.response.get("Error", {}).get("Code", ""))
    return ""


def classify(exc: BaseException, operation: str = "") -> EC2Error:
    """Map a botocore exception to the provider's hierarchy (unknown codes: not retryable)."""
    if isinstance(exc, EC2Error):
        return exc
    prefix = f"{operation}: " if operation else ""
    code = error_code(exc)
    if isinstance(exc, ClientError):
        message = str(exc.response.get("Error", {}).get("Message", "")) or str(exc)
        text = f"{prefix}{code}: {message}"
        status = int(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) or 0)
        if code in THROTTLING_CODES or status == 429:
            return Throttled(text, code)
        if code in TRANSIENT_CODES or status >= 500:
            return TransientError(text, code)
        if code in NOT_FOUND_CODES:
            return InstanceNotFound(text, code)
        if code in LAUNCH_TEMPLATE_NOT_FOUND_CODES:
            return LaunchTemplateNotFound(text, code)
        if code in TOKEN_REUSED_CODES:
            return TokenReused(text, code)
        if code in UNFULFILLABLE_CAPACITY_CODES:
            return InsufficientCapacity(text, code=code)
        return LaunchFailed(text, code)
    if isinstance(exc, BotoConnectionError | BotoCoreError):
        return TransientError(f"{prefix}{exc}", type(exc).__name__)
    return EC2Error(f"{prefix}{exc}")


@contextmanager
def aws_errors(operation: str) -> Iterator[None]:
    """Run a boto3 call and re-raise any botocore failure as a classified EC2Error."""
    try:
        yield
    except (ClientError, BotoCoreError) as exc:
        raise classify(exc, operation) from exc
