"""An independent feasibility oracle: the kube-scheduler's filter semantics in plain code.

Nothing here imports the product (``scheduling``, ``models``, ``activities``, ``workflows``,
``worker``) except ``joinery_bridge``, the one module that runs Joinery for the property
tests; ``test_isolation`` enforces it. Shared code would let a shared misunderstanding pass.
"""
