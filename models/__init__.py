"""Joinery package."""
