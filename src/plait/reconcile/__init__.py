"""Reconciliation: merging the branches of a run into one verified result."""
