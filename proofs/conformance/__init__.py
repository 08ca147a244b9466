"""Conformance: the implementation driven in lockstep with the model."""
