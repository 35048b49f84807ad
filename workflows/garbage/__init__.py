"""The cluster's garbage-collection workflow."""
