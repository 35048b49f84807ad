"""What ``joinery plan`` reads: manifest files (fast YAML, each repeated piece parsed once),
catalog files (decoded once and cached), each NodePool's catalog, or a live cluster."""
