"""Well-known label keys the tests' manifests and catalogs use, and two custom ones."""

ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"
ARCH = "kubernetes.io/arch"
CAPACITY_TYPE = "karpenter.sh/capacity-type"
INSTANCE_TYPE = "node.kubernetes.io/instance-type"
NODEPOOL = "karpenter.sh/nodepool"
SIZE = "size"  # a custom catalog label: small / medium / large / xlarge
GENERATION = "example.com/generation"  # a custom integer catalog label
FAMILY = "karpenter.k8s.aws/instance-family"
GPU = "nvidia.com/gpu"
