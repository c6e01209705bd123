"""Run the ops' generated kernel entries on the CPU emulation of the CUDA thread model (cuda_emu.h), through the
same ``compile_kernel`` / ``load_kernel`` / ``Launcher(...).launch(...)`` calls the ops make on a GPU -- so a CPU
test checks the Python side too: argument order and types, grids, shared memory, buffers.

    emulate_jit(monkeypatch, tmp_path)      # then prepare_linear / ActQuantizer / MoeRouteKernels run on "cpu"

Each kernel entry is built with g++ into its own shared library (``-DHUMMING_EMULATE``) that exports
``humming_emu_launch(grid, block, smem, void** args)``; ``args`` is a cuLaunchKernel-style array of pointers to the
argument values, built from the Launcher's argument types.  CPU tensors' data_ptr() are host addresses, which the
emulated kernel dereferences directly.  3-D grids, 1-D blocks.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
_CELL = {"i32": ctypes.c_int, "u32": ctypes.c_uint, "i64": ctypes.c_longlong, "u64": ctypes.c_ulonglong,
         "f32": ctypes.c_float, "f64": ctypes.c_double}


def build(source: str, out_path: str, shared: bool = False) -> str:
    """g++ ``source`` (C++ including cuda_emu.h and our headers) into an executable or (``shared``) a shared library
    at ``out_path``; RuntimeError with the compiler's message when it fails."""
    from vllm_humming.jit.paths import cuda_include_dirs, include_dir

    gxx = shutil.which("g++")
    if gxx is None:
        raise RuntimeError("no g++")
    cpp = out_path + ".cpp"
    with open(cpp, "w") as f:
        f.write(source)
    inc = [f"-I{HERE}", f"-I{include_dir()}"] + [f"-I{p}" for p in cuda_include_dirs()]
    kind = ["-shared", "-fPIC"] if shared else []
    r = subprocess.run([gxx, "-std=c++20", "-O1", "-pthread", "-ffp-contract=off", *kind, *inc, cpp, "-o", out_path],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"emulation build of {out_path} failed:\n{r.stderr[-4000:]}")
    return out_path


class EmuKernel:
    """A compiled emulation library of one kernel entry (what load_kernel returns here)."""

    def __init__(self, spec, workdir: str):
        self.name = spec.name
        lib = os.path.join(workdir, f"{spec.name}.so")
        if not os.path.exists(lib):
            build('#define HUMMING_EMULATE 1\n#include "cuda_emu.h"\n' + spec.source +
                  f'\nextern "C" void humming_emu_launch(const unsigned* g, unsigned b, unsigned s, void** a) {{\n'
                  f'  emu::launch_entry(&{spec.name}, g, b, s, a);\n}}\n', lib, shared=True)
        self.lib = ctypes.CDLL(lib)
        self.fn = self.lib.humming_emu_launch
        self.fn.argtypes = [ctypes.POINTER(ctypes.c_uint), ctypes.c_uint, ctypes.c_uint,
                            ctypes.POINTER(ctypes.c_void_p)]
        self.fn.restype = None
        self.launches = 0
        # what load_kernel's KernelFunction tells the planner (kernel_fit): no ptxas here, so a typical register
        # count; the emulation has no shared-memory limit to opt into
        self.num_regs, self.static_smem = 128, 0
        # the GEMM kernels' split-K plans run with one reducer: blocks run in order here, and several reducers would
        # wait on tickets that later blocks bump (flags is argument 16 of every GEMM entry)
        self.one_reducer = spec.name.startswith(("humming_wna16", "humming_moe_wna16"))

    def set_max_smem(self, nbytes: int) -> None:
        pass


class EmuLauncher:
    """Launcher's interface (``launch(grid, block, smem, stream, *values)``) over an EmuKernel."""

    def __init__(self, kernel: EmuKernel, arg_types):
        self.kernel, self.arg_types = kernel, tuple(arg_types)

    def launch(self, grid, block, smem, stream, *values):
        if len(values) != len(self.arg_types):
            raise TypeError(f"{self.kernel.name}: {len(values)} arguments for {len(self.arg_types)} parameters")
        cells = []
        for t, v in zip(self.arg_types, values):
            if t == "ptr":
                if isinstance(v, torch.Tensor):
                    if v.device.type != "cpu":
                        raise TypeError(f"{self.kernel.name}: a {v.device} tensor on the CPU emulation")
                    v = v.data_ptr()
                cells.append(ctypes.c_void_p(0 if v is None else int(v)))
            else:
                cells.append(_CELL[t](v))
        if self.kernel.one_reducer and len(cells) > 16:
            cells[16] = ctypes.c_int((cells[16].value & ~0xF0) | (1 << 4))
        argv = (ctypes.c_void_p * max(1, len(cells)))(*[ctypes.addressof(c) for c in cells])
        g = (grid, 1, 1) if isinstance(grid, int) else tuple(grid) + (1,) * (3 - len(grid))
        b = block if isinstance(block, int) else block[0]
        self.kernel.fn((ctypes.c_uint * 3)(*[int(v) for v in g]), int(b), int(smem), argv)
        self.kernel.launches += 1


    def bind(self, grid, block, smem, values, varying):
        """Launcher.bind: everything fixed but the pointer arguments at positions ``varying``."""
        vals, varying = list(values), tuple(varying)

        def launch(*ptrs):
            for i, p in zip(varying, ptrs):
                vals[i] = p
            self.launch(grid, block, smem, None, *vals)

        launch.arg_cells = ()
        return launch


def emulate_jit(monkeypatch, workdir, sms: int = 1, capability=(8, 0)) -> dict:
    """Route the JIT's compile / load / launch through the emulation and let the kernel path take "cpu" devices.
    Returns the dict of EmuKernels built so far, by kernel name."""
    import vllm_humming.jit as jit
    import vllm_humming.jit.launch as launch

    built = {}
    workdir = str(workdir)

    def load(spec, device=None):
        if spec.name not in built:
            built[spec.name] = EmuKernel(spec, workdir)
        return built[spec.name]

    monkeypatch.setattr(jit, "compile_kernel", lambda spec, **kw: spec)
    monkeypatch.setattr(jit, "load_kernel", load)
    monkeypatch.setattr(jit, "Launcher", lambda fn, arg_types, **kw: EmuLauncher(fn, arg_types))
    from vllm_humming.ops import gemm

    arch = f"sm_{capability[0]}{capability[1]}"
    monkeypatch.setattr(launch, "current_arch", lambda device=None: arch)
    monkeypatch.setattr(jit, "current_arch", lambda device=None: arch)
    # the GEMM layers on "cpu": an sm_80-like device with `sms` SMs (the planner's view); wgmma / TMA choices never
    # come up on sm_80, and the emulation does not model them
    monkeypatch.setattr(gemm, "KERNEL_DEVICE_TYPES", ("cuda", "cpu"))
    monkeypatch.setattr(gemm, "_device_capability", lambda dev: tuple(capability))
    monkeypatch.setattr(gemm, "_device_sms", lambda dev: sms)
    return built
