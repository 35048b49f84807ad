"""Garbage collection: the leftovers a crash, an operator or EC2 itself leave behind, removed
one kind per module (orphan instances, claims without an instance, claims without a NodePool,
unused launch templates). The cluster's ``GarbageCollectionWorkflow`` calls them each round."""
