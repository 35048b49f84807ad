"""The Azure provider's parts that need no VM: the SKU catalog and prices (docs/azure.md)."""
