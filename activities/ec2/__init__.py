"""The EC2 provider: every AWS side effect Joinery needs to turn a NodeClaim into an instance.

Modules hold one concern each (catalog, pricing, selectors, launch templates, fleet launches,
instances, interruption queue); ``provider.EC2Provider`` wires them for callers.
"""
