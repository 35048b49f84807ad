"""The running worker: the Temporal worker and the Kubernetes watchers that feed its workflows,
with its health endpoint, metrics, telemetry and settings (``joinery worker`` starts it)."""
