"""The provisioning solver as collaborating parts, each owning its state: ``view`` (the
problem as a solve reads it), ``domains`` (topology groups, counts and domains), ``classes``
(pod classes and relaxation), ``existing`` (existing nodes as targets), ``limits`` and
``claims`` (NodeClaims opened in the run), ``pricing``, ``slack`` (slack filling), and
``scheduler``, the placement loop that drives them. ``scheduling.solver`` is the entry
point."""
