"""``joinery plan --kubeconfig``: the same inputs as the manifest files, read from a live
cluster, read-only (list calls only), so an operator can ask it of production."""

from __future__ import annotations

from activities.kubernetes.client import from_kubeconfig
from activities.kubernetes.errors import KubernetesError
from scheduling.inputs import Document
from worker.usage import UsageError


def read_live(kubeconfig: str, *, disruption: bool) -> list[Document]:
    try:
        kube = from_kubeconfig(kubeconfig)
    except Exception as exc:  # the client raises many kinds for a bad file
        raise UsageError(f"--kubeconfig {kubeconfig}: {exc}") from None
    try:
        if disruption:
            from activities.disruption.cluster_state import read_state

            state = read_state(kube)
        else:
            from activities.planning.cluster_state import read

            state = read(kube)
        # The EC2NodeClasses too, so each pool plans on its own catalog as the worker's do
        # (``worker.plan_inputs.plan_catalogs``) and the round checks its nodes for drift from them.
        from activities.disruption.cluster_state import nodeclass_documents

        return [*state.documents, *nodeclass_documents(state.nodeclasses)]
    except KubernetesError as exc:
        raise UsageError(f"--kubeconfig {kubeconfig}: {exc}") from None
    finally:
        kube.close()
