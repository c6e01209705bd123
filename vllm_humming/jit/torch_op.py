"""Register our kernels as torch custom ops (namespace ``humming``) so they trace under
``torch.compile(fullgraph=True)`` and replay inside CUDA graphs.

    from vllm_humming.jit.torch_op import define_op

    def _gemm_cuda(a, qweight, scale, n: int):          # launches our JIT kernel on the current stream
        out = torch.empty(a.shape[0], n, dtype=a.dtype, device=a.device)
        launcher.launch(grid, block, smem, torch.cuda.current_stream().cuda_stream, a, qweight, scale, out, ...)
        return out

    def _gemm_fake(a, qweight, scale, n: int):          # shapes / dtypes / devices only, no data access
        return a.new_empty(a.shape[0], n)

    gemm = define_op("gemm_w4a16", "(Tensor a, Tensor qweight, Tensor scale, int n) -> Tensor",
                     impl=_gemm_cuda, fake=_gemm_fake, cpu_impl=_gemm_reference)
    y = gemm(a, qw, s, 4096)                           # == torch.ops.humming.gemm_w4a16(...)

Rules for the implementation (what makes an op compile- and graph-safe):
* ``schema`` is a PyTorch operator schema; inputs written by the op must be annotated ``Tensor(a!) out`` and the op
  then returns ``()`` (or the aliased tensor) -- never mutate an input that is not annotated.  Tensors an op returns
  must be fresh (not views of inputs) unless annotated.
* The fake must reproduce output shapes/dtypes/devices (and strides where they are not contiguous) from the inputs'
  metadata only; it runs on FakeTensors.  Ops that return nothing get an automatic no-op fake.
* The CUDA impl must launch on ``torch.cuda.current_stream()`` (the JIT launchers do by default), allocate with
  torch (the caching allocator is graph-aware), and never synchronize, read device values on the host, or depend on
  Python state that changes between graph replays (pointers are baked into a captured graph).
* Integer arguments that select kernels (M buckets ...) are fine: under torch.compile they may become SymInts; call
  ``int(x)`` inside the impl (it runs eagerly, outside tracing).
"""

from __future__ import annotations

import re
import threading
import warnings
from typing import Any, Callable, Dict, Mapping, Optional, Sequence

__all__ = ["define_op", "NAMESPACE", "get_op", "defined_ops"]

NAMESPACE = "humming"

_lock = threading.Lock()
_lib = None
_defined: Dict[str, Dict[str, Any]] = {}
_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _library():
    global _lib
    if _lib is None:
        import torch

        _lib = torch.library.Library(NAMESPACE, "FRAGMENT")
    return _lib


def _split_schema(name: str, schema: str) -> str:
    s = schema.strip()
    if s.startswith("("):
        return f"{name}{s}"
    head = s.split("(", 1)[0].strip()
    if head != name:
        raise ValueError(f"define_op({name!r}): schema {schema!r} names another operator ({head!r})")
    return s


def _returns_nothing(full_schema: str) -> bool:
    return full_schema.rsplit("->", 1)[-1].strip() == "()"


def define_op(name: str, schema: str, impl: Optional[Callable] = None, fake: Optional[Callable] = None, *,
              cpu_impl: Optional[Callable] = None, impls: Optional[Mapping[str, Callable]] = None,
              tags: Sequence[Any] = ()):
    """Define ``torch.ops.humming.<name>`` and register its implementations; returns the op (an
    ``OpOverloadPacket``).

    name:      operator name (C identifier, unique in the ``humming`` namespace)
    schema:    ``"(Tensor a, Tensor b, int n) -> Tensor"`` (or with the name in front, ``"name(...) -> ..."``)
    impl:      the CUDA implementation (dispatch key ``CUDA``)
    fake:      the fake/meta implementation used by torch.compile / FakeTensor tracing; required unless the op
               returns ``()``
    cpu_impl:  optional CPU implementation (e.g. the reference path)
    impls:     further ``{dispatch_key: fn}`` registrations (``"Meta"``, ``"CompositeExplicitAutograd"`` ...)
    tags:      ``torch.Tag`` values for the definition (e.g. ``torch.Tag.needs_fixed_stride_order``)

    Calling it again with the same name and schema re-registers (overrides) the implementations -- useful when a
    module is reloaded; a different schema for an existing name raises ``ValueError``.
    """
    import torch

    if not isinstance(name, str) or not _NAME_RE.match(name):
        raise ValueError(f"define_op: op name must be a C identifier, got {name!r}")
    full = _split_schema(name, schema)
    registrations: Dict[str, Callable] = {}
    if impl is not None:
        registrations["CUDA"] = impl
    if cpu_impl is not None:
        registrations["CPU"] = cpu_impl
    for k, fn in (impls or {}).items():
        if k in registrations:
            raise ValueError(f"define_op({name!r}): dispatch key {k!r} given twice")
        registrations[k] = fn
    for k, fn in registrations.items():
        if not callable(fn):
            raise TypeError(f"define_op({name!r}): implementation for {k} is not callable: {fn!r}")
    if not registrations:
        raise ValueError(f"define_op({name!r}): give at least one implementation (impl= for CUDA, cpu_impl=, impls=)")
    if fake is None:
        if not _returns_nothing(full):
            raise ValueError(f"define_op({name!r}): a fake (meta) implementation is required for ops that return "
                             f"values (schema {full!r}); it lets torch.compile trace the op")

        def fake(*args, **kwargs):  # noqa: ARG001 - an op returning nothing has nothing to fake
            return None
    elif not callable(fake):
        raise TypeError(f"define_op({name!r}): fake must be callable, got {fake!r}")

    qualname = f"{NAMESPACE}::{name}"
    with _lock:
        lib = _library()
        prev = _defined.get(name)
        if prev is None:
            if hasattr(torch.ops, NAMESPACE) and hasattr(getattr(torch.ops, NAMESPACE), name):
                raise ValueError(f"define_op: {qualname} is already defined by other code")
            lib.define(full, tags=tuple(tags))
        elif prev["schema"] != full:
            raise ValueError(f"define_op: {qualname} is already defined with schema {prev['schema']!r}; "
                             f"cannot redefine it as {full!r}")
        with warnings.catch_warnings():
            if prev is not None:  # re-registration is deliberate here: silence torch's "overriding a kernel" warning
                warnings.filterwarnings("ignore", message=".*[Oo]verrid.*")
            for key, fn in registrations.items():
                lib.impl(name, fn, key, allow_override=True)
            torch.library.register_fake(qualname, fake, lib=lib, allow_override=True)
        _defined[name] = {"schema": full, "keys": tuple(registrations), "fake": fake}
    return getattr(getattr(torch.ops, NAMESPACE), name)


def get_op(name: str):
    """``torch.ops.humming.<name>`` if defined through :func:`define_op`, else KeyError."""
    import torch

    if name not in _defined:
        raise KeyError(f"humming op {name!r} is not defined; defined: {', '.join(sorted(_defined)) or '(none)'}")
    return getattr(torch.ops.humming, name)


def defined_ops() -> Dict[str, str]:
    """name -> schema of every op defined through :func:`define_op` in this process."""
    return {k: v["schema"] for k, v in _defined.items()}
