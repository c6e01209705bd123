"""Quantization descriptions: what the stored numbers mean.  They never mention tiles, warps or instructions.

``WeightDesc``  element dtype + first-level scale (granularity, dtype) + optional second-level scale + optional zero
                point.  Dequantization of element (n, k) of an [N, K] weight is::

                    w[n, k] = (decode(q[n, k]) - z[n, g]) * s[n, g] * s2[n]        (z, s2 optional)

                where g is the scale group of k (group along K, 2-D block, channel or tensor).
``ActDesc``     activations left in bf16/fp16, or quantized to a small dtype with static or dynamic scales per tensor,
                per token (row) or per group along K.

Each description has one canonical string (``str(desc)``) that :meth:`WeightDesc.parse` / :meth:`ActDesc.parse`
read back; they are frozen and hashable so they key caches.  Invalid combinations raise :class:`DescError` naming
the field and what is allowed.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Optional, Tuple

from .dtypes import (BF16, E2M1, E4M3, E8M0, FP16, FP32, INT4, INT8, UE4M3, DType, DTypeError, FloatType, IntType,
                     parse_dtype, E5M2)

__all__ = ["DescError", "ScaleSpec", "WeightDesc", "ActDesc", "MXFP4", "MXINT4", "NVFP4", "FP8_BLOCK",
           "FP8_CHANNEL", "named_format", "NAMED_FORMATS", "GROUP_SIZES", "SCALE_DTYPES"]


class DescError(ValueError):
    """A description that vllm-humming does not support, with the field at fault and what is allowed."""


def _dtype_field(value, field: str) -> DType:
    """parse_dtype for a description field: a bad spelling becomes a DescError that names the field."""
    try:
        return parse_dtype(value)
    except DTypeError as e:
        raise DescError(f"{field}: {e}") from None


def _split_fields(s: str, what: str):
    """'k:v,k:v' -> [(key, value)], rejecting a field given twice."""
    seen = set()
    out = []
    for part in s.split(","):
        key, _, val = part.partition(":")
        key = key.strip()
        if key in seen:
            raise DescError(f"{what} {s!r}: field {key!r} is given twice")
        seen.add(key)
        out.append((key, val.strip()))
    return out


GROUP_SIZES = (16, 32, 64, 128, 256)
SCALE_DTYPES = ("bfloat16", "float16", "float32", "float8_e8m0fnu", "float8_e4m3fn", "ue4m3")
_WEIGHT_GRANULARITIES = ("tensor", "channel", "group", "block")
_ACT_GRANULARITIES = ("tensor", "token", "group")


@dataclass(frozen=True)
class ScaleSpec:
    """Where one scale applies and how it is stored.

    granularity: "tensor" | "channel" (one per output row n) | "group" (``group_size`` consecutive K elements of one
    row) | "block" (a ``block`` = (rows, cols) tile of the [N, K] matrix).  For activations "token" (one per row m)
    replaces "channel".
    """

    granularity: str
    dtype: DType = FP32
    group_size: Optional[int] = None
    block: Optional[Tuple[int, int]] = None

    def __post_init__(self):
        object.__setattr__(self, "dtype", _dtype_field(self.dtype, f"scale dtype of {self.granularity!r} scale"))
        if self.block is not None:
            try:
                object.__setattr__(self, "block", tuple(int(b) for b in self.block))
            except (TypeError, ValueError):
                raise DescError(f"scale block {self.block!r}: block=(rows, cols) of integers") from None
        if self.group_size is not None and not isinstance(self.group_size, int):
            raise DescError(f"scale group_size {self.group_size!r}: must be an integer")

    def __str__(self) -> str:
        g = self.granularity
        if g == "group":
            g = f"g{self.group_size}"
        elif g == "block":
            g = "b" + "x".join(str(b) for b in (self.block or ()))
        return f"{g}:{self.dtype}"

    _FORMS = "'g128:bfloat16', 'channel:float32', 'tensor:float32', 'token:float32' or 'b128x128:float32'"

    @classmethod
    def parse(cls, s: str) -> "ScaleSpec":
        try:
            gran, dt = s.split(":")
        except ValueError:
            raise DescError(f"scale spec {s!r} must look like {cls._FORMS}") from None
        gran = gran.strip()
        if gran.startswith("g") and gran[1:].isdigit():
            return cls("group", dt, group_size=int(gran[1:]))
        if gran.startswith("b") and gran != "block":
            parts = gran[1:].split("x")
            if len(parts) != 2 or not all(p.isdigit() for p in parts):
                raise DescError(f"scale spec {s!r}: block granularity is written b<rows>x<cols>, e.g. {cls._FORMS}")
            return cls("block", dt, block=(int(parts[0]), int(parts[1])))
        if gran in ("group", "block"):
            raise DescError(f"scale spec {s!r}: write group scales as g<size> and block scales as b<rows>x<cols>")
        return cls(gran, dt)

    def _check_scale_dtype(self, what: str):
        if self.dtype.name not in SCALE_DTYPES:
            raise DescError(f"{what}: scale dtype {self.dtype} is not supported; use one of {', '.join(SCALE_DTYPES)}")


@dataclass(frozen=True)
class WeightDesc:
    dtype: DType
    scale: Optional[ScaleSpec] = None
    scale2: Optional[ScaleSpec] = None       # second-level scale: "tensor" or "channel", float32 (NVFP4's global)
    zero_point: Optional[str] = None         # None | "int" (codes of the weight's dtype) | "float" (scale dtype)

    def __post_init__(self):
        object.__setattr__(self, "dtype", _dtype_field(self.dtype, "weight dtype (w)"))
        if isinstance(self.scale, str):
            object.__setattr__(self, "scale", ScaleSpec.parse(self.scale))
        if isinstance(self.scale2, str):
            object.__setattr__(self, "scale2", ScaleSpec.parse(self.scale2))
        self.validate()

    # ------------------------------------------------------------------ validation
    def validate(self):
        d = self.dtype
        where = f"weight description {self}"
        if self.zero_point not in (None, "int", "float"):
            raise DescError(f"{where}: zero_point (zp) must be None, 'int' or 'float', got {self.zero_point!r}")
        for fld, spec in (("scale (s)", self.scale), ("second-level scale (s2)", self.scale2)):
            if spec is not None and not isinstance(spec, ScaleSpec):
                raise DescError(f"{where}: {fld} must be a ScaleSpec or its string, got {type(spec).__name__}")
        if d.scale_only:
            raise DescError(f"{where}: dtype {d} is a scale-only type and cannot be a weight element type")
        if d.is_int and not (1 <= d.bits <= 8):
            raise DescError(f"{where}: integer weights have 1..8 bits")
        if d.is_float and not (4 <= d.bits <= 8):
            raise DescError(f"{where}: float weights have 4..8 bits (e.g. float4_e2m1, float8_e4m3fn), got {d}")
        s = self.scale
        if s is None:
            if self.zero_point or self.scale2:
                raise DescError(f"{where}: a zero point or second-level scale needs a first-level scale")
            return
        s._check_scale_dtype(where)
        if s.granularity not in _WEIGHT_GRANULARITIES:
            raise DescError(f"{where}: scale granularity {s.granularity!r}; weights allow {_WEIGHT_GRANULARITIES}")
        if s.granularity == "group":
            if s.group_size not in GROUP_SIZES:
                raise DescError(f"{where}: group size {s.group_size}; supported group sizes are {GROUP_SIZES}")
        elif s.group_size is not None:
            raise DescError(f"{where}: group_size is only meaningful for group scales")
        if s.granularity != "block" and s.block is not None:
            raise DescError(f"{where}: scale block shape is only meaningful for block scales")
        if s.granularity == "block":
            if s.block is None or len(s.block) != 2 or any(b % 16 or b <= 0 for b in s.block):
                raise DescError(f"{where}: block scales need block=(rows, cols), both positive multiples of 16")
        if self.zero_point is not None:
            if not d.is_int:
                raise DescError(f"{where}: zero points are defined for integer weights only, not {d}")
            if d.signed or d.bias:
                raise DescError(f"{where}: with a zero point the codes must be plain unsigned (uint{d.bits}), got {d}")
            if s.granularity not in ("channel", "group"):
                raise DescError(f"{where}: zero points go with channel or group scales")
            if s.dtype.bits <= 8:
                raise DescError(f"{where}: zero points need a bf16/fp16/fp32 scale, not {s.dtype}")
        if s.dtype == E8M0 and s.granularity != "group":
            raise DescError(f"{where}: e8m0 (MX) scales are per group along K")
        if self.scale2 is not None:
            if self.scale2.granularity not in ("tensor", "channel") or self.scale2.dtype != FP32:
                raise DescError(f"{where}: the second-level scale is float32 per tensor or per channel")
            if self.scale2.granularity == "channel" and s.granularity not in ("group", "channel"):
                raise DescError(f"{where}: a per-channel second-level scale needs channel or group first-level scales")

    # ------------------------------------------------------------------ helpers
    @property
    def bits(self) -> int:
        return self.dtype.bits

    @property
    def group_size(self) -> Optional[int]:
        return self.scale.group_size if self.scale is not None and self.scale.granularity == "group" else None

    def num_scale_groups(self, n: int, k: int) -> Tuple[int, int]:
        """Shape of the first-level scale tensor for an [n, k] weight."""
        s = self.scale
        if s is None:
            return (0, 0)
        if s.granularity == "tensor":
            return (1, 1)
        if s.granularity == "channel":
            return (n, 1)
        if s.granularity == "group":
            return (n, -(-k // s.group_size))
        return (-(-n // s.block[0]), -(-k // s.block[1]))

    def __str__(self) -> str:
        parts = [f"w:{self.dtype}"]
        if self.scale is not None:
            parts.append(f"s:{self.scale}")
        if self.scale2 is not None:
            parts.append(f"s2:{self.scale2}")
        if self.zero_point is not None:
            parts.append(f"zp:{self.zero_point}")
        return ",".join(parts)

    @classmethod
    def parse(cls, s: str) -> "WeightDesc":
        """Parse the canonical string, or a named format (``mxfp4``, ``nvfp4`` ...)."""
        if s.strip().lower() in NAMED_FORMATS:
            return NAMED_FORMATS[s.strip().lower()][0]
        kw = {}
        for key, val in _split_fields(s, "weight description"):
            if key == "w":
                kw["dtype"] = val
            elif key == "s":
                kw["scale"] = ScaleSpec.parse(val)
            elif key == "s2":
                kw["scale2"] = ScaleSpec.parse(val)
            elif key == "zp":
                kw["zero_point"] = val
            else:
                raise DescError(f"weight description {s!r}: unknown field {key!r}; fields are w, s, s2, zp")
        if "dtype" not in kw:
            raise DescError(f"weight description {s!r} has no 'w:<dtype>' field")
        return cls(**kw)


@dataclass(frozen=True)
class ActDesc:
    """Activations: ``dtype`` bf16/fp16 means not quantized (no scale).  Otherwise a quantized dtype with a scale."""

    dtype: DType = BF16
    scale: Optional[ScaleSpec] = None
    dynamic: bool = True
    scale2: Optional[ScaleSpec] = None   # NVFP4 activations: static float32 per-tensor global scale

    def __post_init__(self):
        object.__setattr__(self, "dtype", _dtype_field(self.dtype, "activation dtype (a)"))
        if isinstance(self.scale, str):
            object.__setattr__(self, "scale", ScaleSpec.parse(self.scale))
        if isinstance(self.scale2, str):
            object.__setattr__(self, "scale2", ScaleSpec.parse(self.scale2))
        self.validate()

    @property
    def quantized(self) -> bool:
        return self.dtype not in (BF16, FP16)

    _QUANT_DTYPES = ("float8_e4m3fn", "float8_e5m2", "int8", "int4", "float4_e2m1")

    def validate(self):
        where = f"activation description {self}"
        if not self.quantized:
            if self.scale is not None or self.scale2 is not None:
                raise DescError(f"{where}: bf16/fp16 activations take no scale")
            return
        if self.dtype.name not in self._QUANT_DTYPES:
            raise DescError(f"{where}: activations quantize to one of {self._QUANT_DTYPES}, not {self.dtype}")
        s = self.scale
        if s is None:
            raise DescError(f"{where}: quantized activations need a scale (tensor, token or group)")
        s._check_scale_dtype(where)
        if s.granularity not in _ACT_GRANULARITIES:
            raise DescError(f"{where}: activation scale granularity {s.granularity!r}; allowed {_ACT_GRANULARITIES}")
        if s.granularity == "group" and s.group_size not in GROUP_SIZES:
            raise DescError(f"{where}: group size {s.group_size}; supported {GROUP_SIZES}")
        if not self.dynamic and s.granularity != "tensor":
            raise DescError(f"{where}: static activation scales are per tensor; per-token/group scales are dynamic")
        if s.dtype == E8M0 and s.granularity != "group":
            raise DescError(f"{where}: e8m0 scales are per group (MX)")
        if s.granularity == "block" or s.block is not None:
            raise DescError(f"{where}: activation scales have no block shape")
        if self.scale2 is not None:
            if self.scale2.granularity != "tensor" or self.scale2.dtype != FP32:
                raise DescError(f"{where}: the second-level activation scale (s2) is a float32 per-tensor value")
            if s.granularity != "group" or not self.dynamic:
                raise DescError(f"{where}: a second-level activation scale (s2) goes with dynamic group scales "
                                f"(NVFP4: s:g16:float8_e4m3fn,dynamic,s2:tensor:float32)")

    def __str__(self) -> str:
        if not self.quantized:
            return f"a:{self.dtype}"
        parts = [f"a:{self.dtype}", f"s:{self.scale}", "dynamic" if self.dynamic else "static"]
        if self.scale2 is not None:
            parts.append(f"s2:{self.scale2}")
        return ",".join(parts)

    @classmethod
    def parse(cls, s: str) -> "ActDesc":
        kw = {}
        fields = _split_fields(s, "activation description")
        if sum(key in ("dynamic", "static") for key, _ in fields) > 1:
            raise DescError(f"activation description {s!r}: give one of 'dynamic' or 'static'")
        for key, val in fields:
            if key == "a":
                kw["dtype"] = val
            elif key == "s":
                kw["scale"] = ScaleSpec.parse(val)
            elif key == "s2":
                kw["scale2"] = ScaleSpec.parse(val)
            elif key in ("dynamic", "static"):
                if val:
                    raise DescError(f"activation description {s!r}: '{key}' takes no value, got {key}:{val}")
                kw["dynamic"] = key == "dynamic"
            else:
                raise DescError(f"activation description {s!r}: unknown field {key!r}; fields are a, s, s2, dynamic|static")
        return cls(**kw)


# ------------------------------------------------------------------------------------------------------ named formats
MXFP4 = WeightDesc(E2M1, ScaleSpec("group", E8M0, group_size=32))
MXINT4 = WeightDesc(INT4, ScaleSpec("group", E8M0, group_size=32))
NVFP4 = WeightDesc(E2M1, ScaleSpec("group", E4M3, group_size=16), scale2=ScaleSpec("tensor", FP32))
FP8_BLOCK = WeightDesc(E4M3, ScaleSpec("block", FP32, block=(128, 128)))
FP8_CHANNEL = WeightDesc(E4M3, ScaleSpec("channel", FP32))

ACT_BF16 = ActDesc(BF16)
ACT_FP8_TOKEN = ActDesc(E4M3, ScaleSpec("token", FP32))
ACT_INT8_TOKEN = ActDesc(INT8, ScaleSpec("token", FP32))
ACT_MXFP4 = ActDesc(E2M1, ScaleSpec("group", E8M0, group_size=32))
ACT_NVFP4 = ActDesc(E2M1, ScaleSpec("group", E4M3, group_size=16), scale2=ScaleSpec("tensor", FP32))

# name -> (weight description, activation description)
NAMED_FORMATS = {
    "mxfp4": (MXFP4, ACT_BF16),
    "mxint4": (MXINT4, ACT_BF16),
    "nvfp4": (NVFP4, ACT_NVFP4),
    "nvfp4-w4a16": (NVFP4, ACT_BF16),
    "fp8-block": (FP8_BLOCK, ACT_BF16),
    "fp8-channel": (FP8_CHANNEL, ACT_BF16),
    "w4a16-int4-g128": (WeightDesc("uint4b8", ScaleSpec("group", BF16, group_size=128)), ACT_BF16),
    "w8a8-fp8": (FP8_CHANNEL, ACT_FP8_TOKEN),
    "w8a8-int8": (WeightDesc(INT8, ScaleSpec("channel", FP32)), ACT_INT8_TOKEN),
}


def named_format(name: str):
    try:
        return NAMED_FORMATS[name.lower()]
    except KeyError:
        raise DescError(f"unknown format name {name!r}; known: {', '.join(sorted(NAMED_FORMATS))}") from None
