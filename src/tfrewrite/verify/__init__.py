"""Verification: prove a rewrite by running the original eagerly against the
rewrite traced, in worker processes that import TensorFlow (the command line
itself never does)."""
