"""Number formats as values.

Every element type vllm-humming knows is an instance of one of two frozen dataclasses:

* :class:`IntType` -- integer codes of 1..8 bits, signed (two's complement) or unsigned, with an optional implicit
  bias subtracted from the unsigned code (GPTQ's ``uint4b8``: code 0..15 means value code - 8).
* :class:`FloatType` -- sign/exponent/mantissa codes of any split (``e2m1``, ``e4m3fn``, ``e3m1`` ...), plus the wide
  types used for scales and activations (bf16, fp16, fp32) and the scale-only types ``e8m0`` and ``ue4m3``.

A code is always the raw bit pattern as an unsigned integer of ``bits`` bits (for signed ints: two's complement).
``decode_table()`` maps every code of a <=8-bit type to its float64 value; ``encode()`` rounds real values to codes
(round-to-nearest, ties to even, saturating at the largest finite value).  These two functions are the single Python
source of truth for what a code means; the CUDA side has its own decode per family in ``kernels/include/humming/
dequant.cuh`` and the tests check one against the other.

Canonical spellings (``str(dtype)``) and the accepted aliases live in :func:`parse_dtype`.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Union

import torch

__all__ = [
    "DTypeError", "IntType", "FloatType", "DType", "parse_dtype", "int_type", "uint_type", "float_type",
    "BF16", "FP16", "FP32", "E4M3", "E5M2", "E2M1", "E2M3", "E3M2", "E8M0", "UE4M3",
    "INT4", "INT8", "UINT4", "UINT8", "UINT4B8", "UINT8B128",
]


class DTypeError(ValueError):
    """A data type spelling or parameter that vllm-humming does not support."""


@dataclass(frozen=True)
class IntType:
    bits: int
    signed: bool
    bias: int = 0  # only for unsigned: value = code - bias

    def __post_init__(self):
        if not (1 <= self.bits <= 8):
            raise DTypeError(f"integer types have 1..8 bits, got {self.bits}")
        if self.signed and self.bias:
            raise DTypeError("an implicit bias is only defined for unsigned integer types (e.g. uint4b8)")
        if self.bias < 0 or self.bias >= (1 << self.bits):
            raise DTypeError(f"bias {self.bias} out of range for {self.bits}-bit codes")

    is_float = False
    is_int = True
    scale_only = False

    @property
    def min(self) -> int:
        return -(1 << (self.bits - 1)) if self.signed else -self.bias

    @property
    def max(self) -> int:
        return (1 << (self.bits - 1)) - 1 if self.signed else (1 << self.bits) - 1 - self.bias

    @property
    def name(self) -> str:
        if self.signed:
            return f"int{self.bits}"
        return f"uint{self.bits}" + (f"b{self.bias}" if self.bias else "")

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"DType({self.name})"

    def code_to_int(self, codes: torch.Tensor) -> torch.Tensor:
        """Integer value of each code (int32)."""
        c = codes.to(torch.int32) & ((1 << self.bits) - 1)
        if self.signed:
            return torch.where(c >= (1 << (self.bits - 1)), c - (1 << self.bits), c)
        return c - self.bias

    @functools.lru_cache(maxsize=None)
    def decode_table(self) -> torch.Tensor:
        return self.code_to_int(torch.arange(1 << self.bits)).to(torch.float64)

    def decode(self, codes: torch.Tensor) -> torch.Tensor:
        return self.code_to_int(codes).to(torch.float32)

    def encode(self, x: torch.Tensor) -> torch.Tensor:
        """Round to nearest (ties to even), saturate to [min, max], return codes (uint8)."""
        if torch.isnan(x).any():
            raise DTypeError(f"cannot encode NaN as {self.name}")
        v = torch.round(x.to(torch.float64)).clamp(self.min, self.max).to(torch.int32)
        code = v + self.bias if not self.signed else v & ((1 << self.bits) - 1)
        return code.to(torch.uint8)


# How a float format spends its all-ones exponent:
#   "ieee"   -> exponent all ones is Inf (mantissa 0) or NaN (e5m2, fp16, bf16, fp32)
#   "fn"     -> no Inf; only exponent and mantissa all ones is NaN (OCP e4m3fn)
#   "finite" -> every code is a finite number (OCP MX e2m1/e2m3/e3m2, and generic ExMy)
#   "e8m0"   -> unsigned exponent-only scale: 2**(code-127), code 0xFF is NaN
_NAN_CONVENTIONS = ("ieee", "fn", "finite", "e8m0")


@dataclass(frozen=True)
class FloatType:
    exp_bits: int
    man_bits: int
    signed: bool = True
    nan: str = "finite"
    scale_only: bool = False

    def __post_init__(self):
        if self.nan not in _NAN_CONVENTIONS:
            raise DTypeError(f"unknown NaN convention {self.nan!r}; one of {_NAN_CONVENTIONS}")
        if self.exp_bits < 1 or self.man_bits < 0:
            raise DTypeError(f"float formats need >=1 exponent bit and >=0 mantissa bits, got e{self.exp_bits}m{self.man_bits}")
        if self.nan == "e8m0" and (self.exp_bits, self.man_bits, self.signed) != (8, 0, False):
            raise DTypeError("the e8m0 convention is only for the unsigned 8-bit exponent type")

    is_float = True
    is_int = False

    @property
    def bits(self) -> int:
        return int(self.signed) + self.exp_bits + self.man_bits

    @property
    def exp_bias(self) -> int:
        if self.nan == "e8m0":
            return 127
        return (1 << (self.exp_bits - 1)) - 1

    @property
    def name(self) -> str:
        wide = {(8, 7): "bfloat16", (5, 10): "float16", (8, 23): "float32"}
        if self.signed and self.nan == "ieee" and (self.exp_bits, self.man_bits) in wide:
            return wide[(self.exp_bits, self.man_bits)]
        if self.nan == "e8m0":
            return "float8_e8m0fnu"
        if not self.signed:
            return f"ue{self.exp_bits}m{self.man_bits}"
        # The split's standard convention (see float_type: e4m3 -> fn, e5m2 -> ieee, others finite) needs no
        # suffix except e4m3fn, which keeps its OCP name; any other convention is spelled out so the name
        # round-trips through parse_dtype.
        standard = _standard_nan(self.exp_bits, self.man_bits)
        if self.nan == "fn":
            suffix = "fn"
        elif self.nan == standard:
            suffix = ""
        else:
            suffix = {"ieee": "ieee", "finite": "f"}[self.nan]
        return f"float{self.bits}_e{self.exp_bits}m{self.man_bits}{suffix}"

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"DType({self.name})"

    @property
    def torch_dtype(self):
        """The torch dtype with this exact meaning, or None."""
        return {
            "bfloat16": torch.bfloat16, "float16": torch.float16, "float32": torch.float32,
            "float8_e4m3fn": torch.float8_e4m3fn, "float8_e5m2": torch.float8_e5m2,
            "float8_e8m0fnu": getattr(torch, "float8_e8m0fnu", None),
        }.get(self.name)

    # ------------------------------------------------------------------ numerics (<=8-bit codes)
    @functools.lru_cache(maxsize=None)
    def decode_table(self) -> torch.Tensor:
        """float64 value of every code 0 .. 2**bits-1 (NaN where the format says NaN)."""
        if self.bits > 8:
            raise DTypeError(f"decode_table is for <=8-bit types, not {self.name}")
        codes = torch.arange(1 << self.bits, dtype=torch.int64)
        if self.nan == "e8m0":
            vals = torch.pow(2.0, (codes - 127).to(torch.float64))
            vals[codes == 0xFF] = math.nan
            return vals
        m_mask = (1 << self.man_bits) - 1
        e_mask = (1 << self.exp_bits) - 1
        man = (codes & m_mask).to(torch.float64)
        exp = (codes >> self.man_bits) & e_mask
        sign = ((codes >> (self.exp_bits + self.man_bits)) & 1) if self.signed else torch.zeros_like(codes)
        frac = man / float(1 << self.man_bits)
        normal = torch.pow(2.0, (exp - self.exp_bias).to(torch.float64)) * (1.0 + frac)
        subnormal = math.pow(2.0, 1 - self.exp_bias) * frac
        vals = torch.where(exp == 0, subnormal, normal)
        if self.nan == "ieee":
            top = exp == e_mask
            vals = torch.where(top & (man == 0), math.inf, vals)
            vals = torch.where(top & (man != 0), math.nan, vals)
        elif self.nan == "fn":
            vals = torch.where((exp == e_mask) & ((codes & m_mask) == m_mask), math.nan, vals)
        vals = torch.where(sign == 1, -vals, vals)
        return vals

    @property
    def max(self) -> float:
        t = self.decode_table()
        return float(t[torch.isfinite(t)].max())

    @property
    def min(self) -> float:
        t = self.decode_table()
        return float(t[torch.isfinite(t)].min())

    @property
    def min_exponent(self) -> int:
        """Exponent of the smallest normal number (1 - bias)."""
        return 1 - self.exp_bias

    def decode(self, codes: torch.Tensor) -> torch.Tensor:
        table = self.decode_table().to(device=codes.device, dtype=torch.float32)
        return table[codes.to(torch.int64) & ((1 << self.bits) - 1)]

    @functools.lru_cache(maxsize=None)
    def _positive_grid(self):
        """Sorted finite non-negative values and their codes (the -0 code excluded)."""
        t = self.decode_table()
        sign_bit = (1 << (self.bits - 1)) if self.signed else 0
        codes = torch.arange(1 << self.bits)
        keep = torch.isfinite(t) & (t >= 0) & ((codes & sign_bit) == 0 if sign_bit else torch.ones_like(codes, dtype=torch.bool))
        vals, order = torch.sort(t[keep])
        return vals, codes[keep][order]

    def encode(self, x: torch.Tensor) -> torch.Tensor:
        """Round to the nearest representable value (ties to the even code), saturating at +-max.  Returns uint8 codes."""
        if self.bits > 8:
            raise DTypeError(f"encode is for <=8-bit types, not {self.name}")
        x = x.to(torch.float64)
        if torch.isnan(x).any():
            raise DTypeError(f"cannot encode NaN as {self.name}")
        vals, codes = self._positive_grid()
        vals, codes = vals.to(x.device), codes.to(x.device)
        mag = x.abs().clamp(max=float(vals[-1]))
        if self.nan == "e8m0":
            # exponent-only: round in the log domain is not what MX does; MX e8m0 scales are produced by flooring
            # log2 upstream.  Here: nearest power of two, ties to the larger exponent (even-code rule is meaningless).
            mag = mag.clamp(min=float(vals[0]))
        hi = torch.searchsorted(vals, mag).clamp(max=len(vals) - 1)
        lo = (hi - 1).clamp(min=0)
        d_lo = mag - vals[lo]
        d_hi = vals[hi] - mag
        pick_hi = (d_hi < d_lo) | ((d_hi == d_lo) & (codes[hi] % 2 == 0) & (codes[lo] % 2 == 1))
        if self.nan == "e8m0":
            pick_hi = d_hi <= d_lo
        idx = torch.where(pick_hi, hi, lo)
        out = codes[idx]
        if self.signed:
            # the sign bit follows the input's sign, -0.0 and values that round to zero included (as IEEE does)
            out = torch.where(torch.signbit(x), out | (1 << (self.bits - 1)), out)
        elif (x < 0).any():
            raise DTypeError(f"{self.name} is unsigned; got negative values")
        return out.to(torch.uint8)


DType = Union[IntType, FloatType]

# ---------------------------------------------------------------------------------------------------------- well known
BF16 = FloatType(8, 7, nan="ieee")
FP16 = FloatType(5, 10, nan="ieee")
FP32 = FloatType(8, 23, nan="ieee")
E4M3 = FloatType(4, 3, nan="fn")          # OCP float8_e4m3fn
E5M2 = FloatType(5, 2, nan="ieee")        # OCP float8_e5m2
E2M1 = FloatType(2, 1)                    # OCP MX fp4
E2M3 = FloatType(2, 3)                    # OCP MX fp6
E3M2 = FloatType(3, 2)                    # OCP MX fp6
E8M0 = FloatType(8, 0, signed=False, nan="e8m0", scale_only=True)  # OCP MX scale
UE4M3 = FloatType(4, 3, signed=False, nan="fn", scale_only=True)   # NVFP4 block scale (e4m3 with sign bit 0)

INT4, INT8 = IntType(4, True), IntType(8, True)
UINT4, UINT8 = IntType(4, False), IntType(8, False)
UINT4B8, UINT8B128 = IntType(4, False, 8), IntType(8, False, 128)


def int_type(bits: int, signed: bool = True) -> IntType:
    return IntType(bits, signed)


def uint_type(bits: int, bias: int = 0) -> IntType:
    return IntType(bits, False, bias)


def _standard_nan(exp_bits: int, man_bits: int) -> str:
    if (exp_bits, man_bits) == (4, 3):
        return "fn"
    if (exp_bits, man_bits) in _WIDE_SPLITS:
        return "ieee"
    return "finite"


_WIDE_SPLITS = ((5, 2), (5, 10), (8, 7), (8, 23))


def float_type(exp_bits: int, man_bits: int) -> FloatType:
    """The standard convention for a signed ExMy split: e4m3 -> fn, e5m2 -> ieee, everything else all-finite."""
    if (exp_bits, man_bits) == (4, 3):
        return E4M3
    return FloatType(exp_bits, man_bits, nan=_standard_nan(exp_bits, man_bits))


_ALIASES = {
    # wide floats
    "bf16": BF16, "bfloat16": BF16, "torch.bfloat16": BF16,
    "fp16": FP16, "f16": FP16, "half": FP16, "float16": FP16, "torch.float16": FP16,
    "fp32": FP32, "f32": FP32, "float": FP32, "float32": FP32, "torch.float32": FP32,
    # 8-bit floats
    "fp8": E4M3, "e4m3": E4M3, "e4m3fn": E4M3, "fp8_e4m3": E4M3, "float8_e4m3fn": E4M3, "torch.float8_e4m3fn": E4M3,
    "f8e4m3": E4M3, "float8_e4m3": E4M3,
    "e5m2": E5M2, "fp8_e5m2": E5M2, "float8_e5m2": E5M2, "torch.float8_e5m2": E5M2, "f8e5m2": E5M2,
    # MX / small floats (vLLM scalar_types spell the finite ones with an 'f' suffix)
    "fp4": E2M1, "e2m1": E2M1, "fp4_e2m1": E2M1, "float4_e2m1": E2M1, "float4_e2m1f": E2M1, "float4_e2m1fn": E2M1,
    "float4_e2m1fn_x2": E2M1,
    "e2m3": E2M3, "fp6_e2m3": E2M3, "float6_e2m3": E2M3, "float6_e2m3f": E2M3,
    "e3m2": E3M2, "fp6_e3m2": E3M2, "float6_e3m2": E3M2, "float6_e3m2f": E3M2,
    # scale-only
    "e8m0": E8M0, "ue8m0": E8M0, "e8m0fnu": E8M0, "float8_e8m0fnu": E8M0, "torch.float8_e8m0fnu": E8M0,
    "ue4m3": UE4M3,
    # torch integer dtypes (str(torch.int8) == "torch.int8"; the "torch." prefix is dropped before the lookup)
    "int8": INT8, "uint8": UINT8,
}


def parse_dtype(spec) -> DType:
    """Parse a dtype from a canonical name, a common alias, a torch dtype or an existing DType.

    Accepted integer spellings: ``int{N}``, ``uint{N}``, ``uint{N}b{B}`` (vLLM scalar types), N in 1..8.
    Accepted float spellings: the aliases in ``_ALIASES`` and generic ``float{N}_e{E}m{M}[fn|ieee]``,
    ``fp{N}_e{E}m{M}``, ``e{E}m{M}`` (standard convention for the split, see :func:`float_type`).
    """
    if isinstance(spec, (IntType, FloatType)):
        return spec
    if isinstance(spec, torch.dtype):
        spec = str(spec)
    if not isinstance(spec, str):
        raise DTypeError(f"cannot parse a dtype from {spec!r} ({type(spec).__name__})")
    s = spec.strip().lower()
    if s.startswith("torch."):  # str(torch.int8) == "torch.int8" etc.
        s = s[len("torch."):]
    if s in _ALIASES:
        return _ALIASES[s]
    import re

    m = re.fullmatch(r"(u?)int(\d+)(?:b(\d+))?", s)
    if m:
        unsigned, bits, bias = m.group(1) == "u", int(m.group(2)), int(m.group(3) or 0)
        if not unsigned and bias:
            raise DTypeError(f"{spec!r}: a bias is only allowed on unsigned types (uint{bits}b{bias})")
        try:
            return IntType(bits, not unsigned, bias)
        except DTypeError as e:
            raise DTypeError(f"{spec!r}: {e}") from None
    m = re.fullmatch(r"(?:float(\d+)_|fp(\d+)_)?(u?)e(\d+)m(\d+)(fn|fnu|ieee|f)?", s)
    if m:
        total = m.group(1) or m.group(2)
        unsigned = m.group(3) == "u"
        e, mm = int(m.group(4)), int(m.group(5))
        conv = m.group(6)
        if unsigned:
            if (e, mm) == (8, 0) and conv in (None, "fnu"):
                return E8M0
            if (e, mm) == (4, 3) and conv is None:
                return UE4M3
            raise DTypeError(f"{spec!r}: the unsigned float types are float8_e8m0fnu (ue8m0) and ue4m3")
        if conv == "fnu":
            if (e, mm) == (8, 0):
                return E8M0
            raise DTypeError(f"{spec!r}: the 'fnu' (finite, NaN, unsigned) suffix only exists for float8_e8m0fnu")
        try:
            if conv == "fn":
                t = FloatType(e, mm, nan="fn")
            elif conv == "ieee":
                t = FloatType(e, mm, nan="ieee")
            elif conv == "f":
                t = FloatType(e, mm, nan="finite")
            else:
                t = float_type(e, mm)
        except DTypeError as err:
            raise DTypeError(f"{spec!r}: {err}") from None
        if total is not None and int(total) != t.bits:
            raise DTypeError(f"{spec!r}: 1 sign + {e} exponent + {mm} mantissa bits is {t.bits} bits, not {total}")
        if t.bits > 8 and (e, mm) not in _WIDE_SPLITS:
            raise DTypeError(f"{spec!r}: generic float types have 4..8 bits (1 sign + exponent + mantissa); the wide "
                             f"types are bfloat16, float16 and float32")
        if t.bits < 2:
            raise DTypeError(f"{spec!r}: a float type needs at least a sign and an exponent bit")
        return t
    raise DTypeError(
        f"unknown dtype {spec!r}; use int1..int8, uint1..uint8, uint{{N}}b{{bias}}, float{{N}}_e{{E}}m{{M}} "
        f"(e.g. float4_e2m1, float8_e4m3fn, float8_e5m2), bfloat16, float16, float32, float8_e8m0fnu or ue4m3")
