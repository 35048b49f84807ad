"""Activity names: the contract between workflows and whatever implements the activities
(the real ones in ``defs.py``, test doubles in tests). Renaming one breaks replay."""

PREPARE = "nodeclaim.prepare"
LAUNCH = "nodeclaim.launch"
REGISTER = "nodeclaim.register"
INITIALIZE = "nodeclaim.initialize"
BEGIN_TERMINATION = "nodeclaim.begin_termination"
DRAIN = "nodeclaim.drain"
VOLUMES = "nodeclaim.volumes"
TERMINATE_INSTANCE = "nodeclaim.terminate_instance"
FINALIZE = "nodeclaim.finalize"
DISRUPTION_HOLD = "nodeclaim.disruption_hold"
