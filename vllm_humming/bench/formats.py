"""What the bench measures: the named formats, the default shapes and batch sizes, and their parsers.

Every format is a (weight description, activation description) pair written as the canonical strings of
:mod:`vllm_humming.desc`, so the table reads the same as ``vllm-humming inspect`` output and the JSON report.
The upstream peer's equivalent layer configuration for each name lives in :mod:`vllm_humming.bench.peers`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Sequence, Tuple

from ..desc import ActDesc, DescError, WeightDesc

__all__ = ["BenchFormat", "FORMATS", "FORMAT_GROUPS", "DEFAULT_SHAPES", "DEFAULT_MS", "QUICK_MS",
           "parse_formats", "parse_shapes", "parse_ms", "shape_str", "BenchArgError"]


class BenchArgError(ValueError):
    """A bench option that cannot be honoured, with what is accepted."""


@dataclass(frozen=True)
class BenchFormat:
    name: str
    weight: str          # canonical WeightDesc string (or a named format WeightDesc.parse accepts)
    act: str             # canonical ActDesc string
    label: str           # short human label for tables

    @property
    def weight_desc(self) -> WeightDesc:
        return WeightDesc.parse(self.weight)

    @property
    def act_desc(self) -> ActDesc:
        return ActDesc.parse(self.act)

    @property
    def act_quantized(self) -> bool:
        return self.act_desc.quantized


_BF16 = "a:bfloat16"
_FP8_TOKEN = "a:float8_e4m3fn,s:token:float32,dynamic"
_INT8_TOKEN = "a:int8,s:token:float32,dynamic"

_TABLE: Sequence[BenchFormat] = (
    # weight-only (activations stay bf16)
    BenchFormat("w4a16-int4-g128", "w:uint4b8,s:g128:bfloat16", _BF16, "W4A16 int4 g128 (GPTQ sym)"),
    BenchFormat("w3a16-int3-g128", "w:uint3b4,s:g128:bfloat16", _BF16, "W3A16 int3 g128"),
    BenchFormat("w2a16-int2-g64", "w:uint2b2,s:g64:bfloat16", _BF16, "W2A16 int2 g64"),
    BenchFormat("w8a16-int8-channel", "w:uint8b128,s:channel:bfloat16", _BF16, "W8A16 int8 channel"),
    BenchFormat("w4a16-mxfp4", "mxfp4", _BF16, "W4A16 MXFP4"),
    BenchFormat("w4a16-nvfp4", "nvfp4", _BF16, "W4A16 NVFP4"),
    BenchFormat("w4a16-int4-g128-zp", "w:uint4,s:g128:bfloat16,zp:int", _BF16, "W4A16 uint4 g128 + int zp (AWQ)"),
    BenchFormat("w8a16-fp8-channel", "fp8-channel", _BF16, "W8A16 fp8 channel"),
    BenchFormat("w8a16-fp8-block", "fp8-block", _BF16, "W8A16 fp8 block 128x128"),
    # activation-quantized
    BenchFormat("w4a8-int4-g128-fp8", "w:uint4b8,s:g128:bfloat16", _FP8_TOKEN, "W4A8 int4 g128 x fp8 per-token"),
    BenchFormat("w4a8-mxfp4-fp8", "mxfp4", _FP8_TOKEN, "W4A8 MXFP4 x fp8 per-token"),
    BenchFormat("w8a8-fp8", "fp8-channel", _FP8_TOKEN, "W8A8 fp8 channel x fp8 per-token"),
    BenchFormat("w8a8-int8", "w:int8,s:channel:float32", _INT8_TOKEN, "W8A8 int8 channel x int8 per-token"),
)

FORMATS: Dict[str, BenchFormat] = {f.name: f for f in _TABLE}

# selection shortcuts accepted by --formats
FORMAT_GROUPS: Dict[str, List[str]] = {
    "all": [f.name for f in _TABLE],
    "wna16": [f.name for f in _TABLE if not f.act_quantized],
    "act": [f.name for f in _TABLE if f.act_quantized],
}

# (N, K): a Llama-3-8B-like qkv projection, a Llama-3-70B-like gate/up (fused N), a down projection
DEFAULT_SHAPES: Tuple[Tuple[int, int], ...] = ((6144, 4096), (28672, 4096), (4096, 14336))
DEFAULT_MS: Tuple[int, ...] = (1, 16, 64, 256, 1024, 4096)
QUICK_MS: Tuple[int, ...] = (1, 64, 1024)


def shape_str(shape: Tuple[int, int]) -> str:
    return f"{shape[0]}x{shape[1]}"


def parse_formats(spec: str) -> List[BenchFormat]:
    """Comma list of format names and/or groups (``all``, ``wna16``, ``act``); order kept, duplicates dropped."""
    names: List[str] = []
    for raw in spec.split(","):
        item = raw.strip().lower()
        if not item:
            continue
        if item in FORMAT_GROUPS:
            names.extend(FORMAT_GROUPS[item])
        elif item in FORMATS:
            names.append(item)
        else:
            raise BenchArgError(f"unknown bench format {raw.strip()!r}; known formats: {', '.join(FORMATS)}; "
                                f"groups: {', '.join(FORMAT_GROUPS)}")
    if not names:
        raise BenchArgError("--formats selected no format")
    seen = set()
    out = []
    for n in names:
        if n not in seen:
            seen.add(n)
            out.append(FORMATS[n])
    return out


def parse_shapes(spec: str) -> List[Tuple[int, int]]:
    """``6144x4096,28672x4096`` -> [(6144, 4096), (28672, 4096)] (N x K: output features x input features)."""
    out: List[Tuple[int, int]] = []
    for raw in spec.split(","):
        item = raw.strip().lower()
        if not item:
            continue
        parts = item.split("x")
        if len(parts) != 2 or not all(p.isdigit() for p in parts):
            raise BenchArgError(f"shape {raw.strip()!r} must look like NxK, e.g. 6144x4096 (N outputs, K inputs)")
        n, k = int(parts[0]), int(parts[1])
        if n <= 0 or k <= 0:
            raise BenchArgError(f"shape {raw.strip()!r}: N and K must be positive")
        if (n, k) not in out:
            out.append((n, k))
    if not out:
        raise BenchArgError("--shapes selected no shape")
    return out


def parse_ms(spec: str) -> List[int]:
    """``1,16,64`` -> [1, 16, 64] (the number of tokens, i.e. rows of x)."""
    out: List[int] = []
    for raw in spec.split(","):
        item = raw.strip()
        if not item:
            continue
        if not item.isdigit() or int(item) <= 0:
            raise BenchArgError(f"M value {item!r} must be a positive integer")
        if int(item) not in out:
            out.append(int(item))
    if not out:
        raise BenchArgError("--ms selected no M")
    return out


def _check_table():
    # every entry must build valid descriptions; fail at import rather than mid-run on the GPU machine
    for f in _TABLE:
        try:
            f.weight_desc, f.act_desc
        except DescError as e:  # pragma: no cover - a broken table is a programming error
            raise DescError(f"bench format {f.name}: {e}") from e


_check_table()
