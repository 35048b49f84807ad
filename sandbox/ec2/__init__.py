"""Emulated EC2 for tests and ``joinery dev``: moto in-process plus what moto lacks."""
