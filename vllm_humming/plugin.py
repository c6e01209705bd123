"""vLLM plugin entry point (``vllm.general_plugins``).  Filled in by the vLLM integration."""


def register() -> None:
    """Called by vLLM in every process it starts.  Idempotent."""
    return None
