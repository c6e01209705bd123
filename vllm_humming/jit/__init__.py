"""JIT engine: NVRTC compilation (cuda.bindings, no system CUDA toolkit), a content-addressed multi-process-safe disk
cache, parallel compilation, cubin loading and low-overhead launches (cuda.bindings.driver), and a helper to wrap
launches in torch custom ops.

    from vllm_humming.jit import KernelSpec, compile_kernel, compile_many, load_kernel, Launcher, current_arch
    spec = KernelSpec(name="humming_gemm_xyz", source=src, arch="sm_90a", options=("-DFOO=1",))
    art = compile_kernel(spec)                    # CompiledKernel(cubin, key, compile_s, cached, log, spec)
    arts = compile_many([spec, ...])              # parallel, same order
    fn = load_kernel(art)                         # KernelFunction on the current CUDA device
    fn.launch(grid, block, smem, stream, args)    # tensors -> pointers, ints -> int32, ctypes scalars as given
    launcher = Launcher(fn, ("ptr", "ptr", "i32", "i32", "f32"))
    launcher.launch(grid, block, smem, stream, *values)

Importing this package needs neither a GPU nor cuda-bindings; compiling needs cuda-bindings + the NVRTC wheel,
loading/launching needs a GPU.  Environment: see :mod:`vllm_humming.jit.compiler` and :mod:`vllm_humming.jit.paths`.
"""

from .errors import ArchError, CacheMissError, CompileError, CudaError, JitError, JitSetupError  # noqa: F401
from .spec import KNOWN_ARCHS, CompiledKernel, KernelSpec, normalize_arch, parse_arch  # noqa: F401
from .compiler import (clear_memory_cache, compile_kernel, compile_many, kernel_key, reset_stats,  # noqa: F401
                       stats, strict_mode)
from .launch import KernelFunction, Launcher, current_arch, load_kernel  # noqa: F401
from . import paths  # noqa: F401

__all__ = ["KernelSpec", "CompiledKernel", "compile_kernel", "compile_many", "kernel_key", "load_kernel",
           "KernelFunction", "Launcher", "current_arch", "normalize_arch", "parse_arch", "KNOWN_ARCHS", "JitError",
           "JitSetupError", "ArchError", "CompileError", "CacheMissError", "CudaError", "clear_memory_cache",
           "stats", "reset_stats", "strict_mode", "paths"]
