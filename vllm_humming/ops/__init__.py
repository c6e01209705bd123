"""Torch-facing ops.  ``prepare_linear`` / ``humming_linear`` work on any device (plain-torch fallback off CUDA)."""

from .linear import PreparedLinear, compile_in_background, humming_linear, prepare_linear  # noqa: F401
