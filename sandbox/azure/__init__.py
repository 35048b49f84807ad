"""An Azure emulator for tests and the sandbox: ARM and the Retail Prices API on a loopback
HTTPS port, driven by the real Azure SDK (docs/azure.md says what it emulates)."""
