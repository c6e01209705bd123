"""Checkpoint formats: tensor-level converters (:mod:`.formats`), the checkpoint reader (:mod:`.reader`) and the
vLLM ``--quantization humming`` config (:mod:`.vllm_config`, imports vLLM lazily)."""

from .formats import FormatError, concat_shards  # noqa: F401
from .reader import CheckpointError, Checkpoint, LayerRecord, read_checkpoint, write_native_checkpoint  # noqa: F401
