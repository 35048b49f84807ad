"""Planning activities: read the cluster, run the solver, create NodeClaims, start their
workflows. The provisioning workflow only ever sees names and small specs."""
