"""One NodeClaim's life as a workflow: launch → register → initialize → run → drain → end.

One module per phase, like Karpenter's lifecycle and termination controllers; ``workflow.py``
holds the workflow class, its signals, updates and queries, and the loop between phases.
"""
