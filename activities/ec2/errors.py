"""AWS errors, classified once: retryable or not, and which offerings they rule out.

Workflows decide retries from the exception type alone (``retryable``), so every boto3 call in
the provider goes through :func:`aws_errors`, which turns botocore's stringly-typed codes into
the small hierarchy below: each class is also the neutral one of ``activities.cloud.errors``
(an EC2 ``Throttled`` is a cloud ``Throttled``), so callers catch those and the names the
activities report (the class names) stay EC2's.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from botocore.exceptions import (
    BotoCoreError,
    ClientError,
)
from botocore.exceptions import (
    ConnectionError as BotoConnectionError,
)

from activities.cloud import errors
from activities.cloud.errors import Pool as Pool  # the unit of the capacity cache

# An account that never used Spot, whose launcher may not create the Spot service-linked
# role: every spot CreateFleet is refused with this code, whatever the pool.
SPOT_SERVICE_LINKED_ROLE_CODE = "AuthFailure.ServiceLinkedRoleCreationNotPermitted"
# Karpenter's Launched reason when spot is refused for want of that role, and what the
# NodePool's Warning event tells its operator.
SPOT_SLR_CREATION_FAILED = "SpotSLRCreationFailed"
SPOT_SLR_MESSAGE = (
    "spot launches are refused: the account has no Spot service-linked role and may "
    "not create one; spot offerings are unavailable, on-demand is used. Create it "
    "once: aws iam create-service-linked-role --aws-service-name spot.amazonaws.com"
)
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


class EC2Error(errors.CloudError):
    """Base of every EC2 provider error; ``retryable`` tells the caller whether to try again."""


class Throttled(EC2Error, errors.Throttled):
    """The API asked us to slow down; the same call will succeed later."""


class TransientError(EC2Error, errors.TransientError):
    """Server-side or network failure; retrying the same call is safe."""


class InsufficientCapacity(EC2Error, errors.InsufficientCapacity):
    """No capacity in any pool tried; those pools are now in the unavailable-offerings cache.

    Not retryable as the same call: the caller must re-plan with the remaining offerings.
    """

    @property
    def warning(self) -> errors.PoolWarning | None:
        """An account that never used Spot, whose launcher may not create the Spot
        service-linked role: the pool's operator must create it once (docs/deploy.md)."""
        if self.code != SPOT_SERVICE_LINKED_ROLE_CODE:
            return None
        return errors.PoolWarning(SPOT_SLR_CREATION_FAILED, SPOT_SLR_MESSAGE)


class NodeClassNotReady(EC2Error, errors.NodeClassNotReady):
    """The EC2NodeClass resolves to nothing launchable (no subnet, security group or AMI)."""


class InstanceNotFound(EC2Error, errors.InstanceNotFound):
    """The instance does not exist (or is terminated): for delete, that means done."""


class LaunchTemplateNotFound(EC2Error):
    """A cached launch template vanished; retryable once the cache entry is dropped."""

    retryable = True


class TokenReused(EC2Error):
    """An earlier request with the same client token but other parameters took effect (an
    earlier release's launch of the claim, or an earlier attempt's with other overrides).
    Retryable: its instance is found by tag, now or once EC2's reads list it."""

    retryable = True


class LaunchFailed(EC2Error, errors.LaunchFailed):
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
