"""Node repair (Karpenter's NodeRepair feature gate): the pass that replaces unhealthy nodes."""
