"""Cloud errors, neutral: each provider classifies its SDK's failures into these once.

Workflows decide retries from an error's type alone (``retryable``), and the launch activity
decides a claim's fate from the three that matter to it: insufficient capacity (plan again
without those offerings), a node class not ready (may become ready: keep trying until the
launch times out), and anything else, retryable or final. A provider may subclass these (EC2
does, keeping its own class names, which the activities report as failure types).
"""

from __future__ import annotations

from dataclasses import dataclass

from models import contract

# An operation the provider does not implement yet names the issue that brings it.
NOT_IMPLEMENTED = "{operation} is not implemented on {provider} yet ({issue})"


@dataclass(frozen=True, slots=True)
class Pool:
    """One offering as a cloud sells it; the unit insufficient capacity is reported in."""

    capacity_type: str
    instance_type: str
    zone: str


@dataclass(frozen=True, slots=True)
class PoolWarning:
    """What an operator must be told about a pool's failed launch (a Warning event on the
    NodePool), and the Launched condition's reason that goes with it."""

    reason: str
    message: str


class CloudError(Exception):
    """Base of every provider error; ``retryable`` tells the caller whether to try again."""

    retryable = False

    def __init__(self, message: str, code: str = "") -> None:
        super().__init__(message)
        self.code = code


class Throttled(CloudError):
    """The API asked us to slow down; the same call will succeed later."""

    retryable = True


class TransientError(CloudError):
    """Server-side or network failure; retrying the same call is safe."""

    retryable = True


class InsufficientCapacity(CloudError):
    """No capacity in any pool tried. Not retryable as the same call: the caller must plan
    again with the remaining offerings."""

    def __init__(self, message: str, pools: tuple[Pool, ...] = (), code: str = "") -> None:
        super().__init__(message, code)
        self.pools = pools

    @property
    def reason(self) -> str:
        """The claim's Launched=False reason (a provider may name a more precise one)."""
        warning = self.warning
        return warning.reason if warning is not None else contract.ERR_INSUFFICIENT_CAPACITY

    @property
    def warning(self) -> PoolWarning | None:
        """What the NodePool's operator must do about it, when it is theirs to fix."""
        return None


class NodeClassNotReady(CloudError):
    """The node class resolves to nothing launchable (no subnet, image, ...)."""

    def __init__(self, message: str, reason: str = "NodeClassNotReady") -> None:
        super().__init__(message, reason)
        self.reason = reason


class InstanceNotFound(CloudError):
    """The instance does not exist (or is terminated): for delete, that means done."""


class LaunchFailed(CloudError):
    """A launch error that another attempt with the same input will not fix."""


class NotImplementedOnProvider(CloudError):
    """The provider cannot do this yet (not retryable: no retry will add the code)."""

    def __init__(self, operation: str, provider: str, issue: str) -> None:
        super().__init__(
            NOT_IMPLEMENTED.format(operation=operation, provider=provider, issue=issue),
            "NotImplemented",
        )
        self.operation = operation
