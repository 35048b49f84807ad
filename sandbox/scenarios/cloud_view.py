"""What a scenario reads and does of the emulated cloud, whichever it is.

A scenario checks what is really running (and what it costs), interrupts a spot machine,
and at the end counts what is left behind; :class:`CloudView` is those few acts, with one
implementation per emulated cloud (``ec2_view``, ``azure_view``). The scenarios' logic
(workloads, waits, disruption checks) stays the same on both.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from sandbox.dev import DevStack

Obj = dict[str, Any]


class Machine(Protocol):
    """One machine the worker launched, as a scenario reads it."""

    @property
    def id(self) -> str:
        """Its Node's name (the EC2 instance id; the Azure VM's name)."""
        ...

    @property
    def instance_type(self) -> str: ...

    @property
    def zone(self) -> str: ...

    @property
    def capacity_type(self) -> str: ...


class CloudView(Protocol):
    name: str  # aws or azure

    def live(self) -> list[Machine]:
        """Machines the worker launched for this cluster that are not gone."""
        ...

    def price(self, machine: Machine) -> float:
        """Its $/h (inf when the emulator prices it not)."""
        ...

    def interrupt(self, machine: Machine) -> str:
        """Announce a spot interruption of ``machine`` as the cloud would; its event id."""
        ...

    def leftovers(self) -> dict[str, int]:
        """Resources besides machines still there that launches made (Azure: NICs, disks)."""
        ...

    def max_cpu_requirement(self, cpus: int) -> Obj:
        """A NodePool requirement: machines of at most ``cpus`` vCPUs."""
        ...

    def catalog_args(self) -> list[str]:
        """``joinery catalog`` arguments that read this emulator's catalog."""
        ...

    def close(self) -> None:
        """Stop what the view started (Azure: the eviction notices' thread)."""
        ...


def for_stack(stack: DevStack) -> CloudView:
    """The view of the cloud ``stack`` emulates."""
    if stack.azure is not None:
        from sandbox.scenarios.azure_view import AzureView

        return AzureView(stack)
    from sandbox.scenarios.ec2_view import EC2View

    return EC2View(stack)
