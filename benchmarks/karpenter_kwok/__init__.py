"""Real Karpenter (its ``kwok`` cloud provider, built by ``build.sh``) against the sandbox's
control plane, on the catalog Joinery's EC2 emulation serves: the yardstick of
``benchmarks/side_by_side_burst.py``."""
