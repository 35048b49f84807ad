"""The cloud-provider seam: what every cloud (EC2, Azure) offers the activities and the worker.

``provider.CloudProvider`` is the interface; ``errors``, ``launch``, ``instances`` and
``interruption`` its neutral types; ``kinds`` the node-class kinds (EC2NodeClass,
AKSNodeClass) as data; ``registry`` builds the one provider a cluster runs with. Callers hold
a ``CloudProvider`` and never reach into a provider's parts, so a second cloud is a second
implementation, not a second set of callers.
"""
