"""vllm-humming: JIT-compiled quantized GEMM kernels for LLM inference, with a vLLM plugin.

The core (descriptions, reference numerics, JIT, kernels, ops) imports and runs without vLLM.
"""

__version__ = "0.1.0"

from .dtypes import DType, FloatType, IntType, parse_dtype  # noqa: F401
from .desc import ActDesc, DescError, ScaleSpec, WeightDesc, named_format  # noqa: F401
from .qweight import QuantizedWeight  # noqa: F401
