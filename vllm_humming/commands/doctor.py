"""``vllm-humming doctor``: what the JIT engine will use on this machine -- NVRTC, cuda-bindings, torch, the CUDA and
humming header trees, the GPU and its arch, the JIT cache, strict/verbose modes, and vLLM if installed.

``--compile`` also compiles the self-test GEMM kernel for this GPU's arch (or ``--arch``) in a temporary cache, and on
a GPU launches it and checks the result against torch.  Exit status: 0 when the toolchain is usable, 1 otherwise.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import sys
import tempfile
import time


def add_arguments(p) -> None:
    p.description = __doc__.split("\n\n")[0].strip()
    p.add_argument("--compile", action="store_true",
                   help="also compile the self-test kernel (and run it when a GPU is present)")
    p.add_argument("--arch", default=None, help="arch for --compile (default: this GPU's, or sm_90a without one)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--clear-cache", action="store_true",
                   help="delete every entry of the JIT cache directory first (kernels rebuild on next use)")


def _dist_version(name: str) -> str:
    try:
        from importlib.metadata import version

        return version(name)
    except Exception:  # noqa: BLE001
        return ""


def _section_toolchain(rep: dict, problems: list) -> None:
    from ..jit import nvrtc, paths

    rep["cuda_bindings"] = nvrtc.cuda_bindings_version()
    rep["cuda_pathfinder"] = _dist_version("cuda-pathfinder") or "not installed"
    try:
        rep["nvrtc"] = nvrtc.nvrtc_version_string()
        rep["nvrtc_library"] = paths.nvrtc_library_path()
        rep["nvrtc_archs"] = [f"sm_{a}" for a in nvrtc.supported_archs()]
    except Exception as e:  # noqa: BLE001
        rep["nvrtc"] = f"UNAVAILABLE: {e}"
        problems.append(f"NVRTC: {e}")
    try:
        rep["cuda_include_dirs"] = [str(p) for p in paths.cuda_include_dirs()]
        if len(rep["cuda_include_dirs"]) < 2:
            rep["cccl_headers"] = "not found (install nvidia-cuda-cccl for <cuda/std/...>, <cuda/barrier>, CUB)"
    except Exception as e:  # noqa: BLE001
        rep["cuda_include_dirs"] = f"UNAVAILABLE: {e}"
        problems.append(f"CUDA headers: {e}")
    try:
        kd = paths.kernels_dir()
        rep["kernels_dir"] = str(kd)
        rep["humming_headers"] = len(list((kd / "include" / "humming").rglob("*.cuh")))
    except Exception as e:  # noqa: BLE001
        rep["kernels_dir"] = f"UNAVAILABLE: {e}"
        problems.append(f"humming headers: {e}")


def _section_gpu(rep: dict) -> None:
    import torch

    from ..jit import current_arch

    rep["torch"] = torch.__version__
    rep["torch_cuda"] = torch.version.cuda
    gpus = []
    try:
        n = torch.cuda.device_count() if torch.cuda.is_available() else 0
    except Exception:  # noqa: BLE001
        n = 0
    for i in range(n):
        major, minor = torch.cuda.get_device_capability(i)
        props = torch.cuda.get_device_properties(i)
        gpus.append({"index": i, "name": torch.cuda.get_device_name(i), "capability": f"{major}.{minor}",
                     "arch": current_arch(i), "memory_gib": round(props.total_memory / 2**30, 1),
                     "sms": props.multi_processor_count})
    rep["gpus"] = gpus
    if gpus:
        try:
            from cuda.bindings import driver

            err, v = driver.cuDriverGetVersion()
            if err == driver.CUresult.CUDA_SUCCESS:
                rep["cuda_driver"] = f"{v // 1000}.{(v % 1000) // 10}"
        except Exception:  # noqa: BLE001
            pass


def _section_cache(rep: dict) -> None:
    from ..jit import paths
    from ..jit.cache import DiskCache
    from ..jit.compiler import strict_mode, verbose_mode

    root = paths.cache_dir()
    dc = DiskCache(root)
    rep["cache_dir"] = str(root)
    rep["cache_dir_source"] = ("HUMMING_CACHE_DIR" if os.environ.get("HUMMING_CACHE_DIR") else
                               "XDG_CACHE_HOME" if os.environ.get("XDG_CACHE_HOME") else "default")
    rep["cache_entries"] = len(dc.entries())
    rep["cache_bytes"] = dc.size_bytes()
    probe = root if root.exists() else next((p for p in root.parents if p.exists()), root)
    rep["cache_writable"] = os.access(probe, os.W_OK)
    rep["strict_mode"] = strict_mode()
    rep["verbose_mode"] = verbose_mode()
    rep["humming_env"] = {k: v for k, v in sorted(os.environ.items()) if k.startswith("HUMMING_")}


def _section_vllm(rep: dict) -> None:
    import importlib.util

    if importlib.util.find_spec("vllm") is None:
        rep["vllm"] = "not installed"
    else:
        rep["vllm"] = _dist_version("vllm") or "installed (version unknown)"


def _compile_check(rep: dict, problems: list, arch_arg) -> None:
    from ..jit import compile_kernel, current_arch, normalize_arch
    from ..jit.selftest import SELFTEST_ARG_TYPES, SelftestConfig, selftest_reference, selftest_spec

    arch = normalize_arch(arch_arg) if arch_arg else (current_arch() or "sm_90a")
    tmp = tempfile.mkdtemp(prefix="humming-doctor-")
    chk = {"arch": arch}
    rep["compile_check"] = chk
    try:
        cfg = SelftestConfig()
        t0 = time.perf_counter()
        art = compile_kernel(selftest_spec(arch, cfg), cache_dir=tmp, strict=False)
        chk["compile_s"] = round(time.perf_counter() - t0, 3)
        chk["cubin_bytes"] = len(art.cubin)
        if current_arch() is not None and current_arch() == arch:
            import torch

            from ..jit import Launcher, load_kernel

            fn = load_kernel(art)
            m, n, k = 77, 130, 96
            a = torch.randn(m, k, device="cuda").to(torch.bfloat16)
            b = torch.randn(n, k, device="cuda").to(torch.bfloat16)
            c = torch.empty(m, n, device="cuda")
            Launcher(fn, SELFTEST_ARG_TYPES).launch(cfg.grid(m, n), cfg.threads, cfg.launch_smem, None,
                                                    a, b, c, m, n, k, 1.0)
            torch.cuda.synchronize()
            err = (c - selftest_reference(a, b)).abs().max().item()
            chk["run_max_abs_err"] = err
            if not err < 1e-2:
                problems.append(f"self-test kernel result differs from torch by {err}")
    except Exception as e:  # noqa: BLE001
        chk["error"] = f"{type(e).__name__}: {e}"
        problems.append(f"self-test compile/run failed: {str(e).splitlines()[0]}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def run(args) -> int:
    import vllm_humming

    rep = {"vllm_humming": vllm_humming.__version__, "python": platform.python_version(),
           "platform": f"{platform.system()} {platform.machine()}"}
    problems: list = []
    if getattr(args, "clear_cache", False):
        from ..jit import paths
        from ..jit.cache import DiskCache

        rep["cache_files_removed"] = DiskCache(paths.cache_dir()).clear()
    _section_toolchain(rep, problems)
    _section_gpu(rep)
    _section_cache(rep)
    _section_vllm(rep)
    if args.compile:
        _compile_check(rep, problems, args.arch)
    rep["problems"] = problems
    if args.json:
        print(json.dumps(rep, indent=1, default=str))
        return 1 if problems else 0

    def line(k, v):
        print(f"  {k:<22} {v}")

    print("vllm-humming doctor")
    for k in ("vllm_humming", "python", "platform", "torch", "torch_cuda", "cuda_bindings", "cuda_pathfinder",
              "nvrtc", "nvrtc_library"):
        if k in rep:
            line(k, rep[k])
    if "nvrtc_archs" in rep:
        line("nvrtc targets", ", ".join(rep["nvrtc_archs"]))
    cid = rep.get("cuda_include_dirs")
    line("cuda headers", ", ".join(cid) if isinstance(cid, list) else cid)
    if "cccl_headers" in rep:
        line("cccl headers", rep["cccl_headers"])
    line("kernels dir", f"{rep['kernels_dir']}" + (f" ({rep['humming_headers']} humming headers)"
                                                   if "humming_headers" in rep else ""))
    if rep["gpus"]:
        for g in rep["gpus"]:
            line(f"gpu {g['index']}", f"{g['name']} (cc {g['capability']}, arch {g['arch']}, {g['memory_gib']} GiB, "
                                      f"{g['sms']} SMs)")
        if "cuda_driver" in rep:
            line("cuda driver", rep["cuda_driver"])
    else:
        line("gpu", "none visible to torch (compiling works; loading/launching needs a GPU)")
    line("cache dir", f"{rep['cache_dir']} (from {rep['cache_dir_source']}; {rep['cache_entries']} kernels, "
                      f"{rep['cache_bytes'] / 2**20:.1f} MiB{'' if rep['cache_writable'] else ', NOT WRITABLE'})")
    if "cache_files_removed" in rep:
        line("cache cleared", f"{rep['cache_files_removed']} files removed")
    line("strict mode", "ON (HUMMING_JIT_STRICT: cache misses raise)" if rep["strict_mode"] else "off")
    line("verbose mode", "on" if rep["verbose_mode"] else "off")
    if rep["humming_env"]:
        line("HUMMING_* env", ", ".join(f"{k}={v}" for k, v in rep["humming_env"].items()))
    line("vllm", rep["vllm"])
    if "compile_check" in rep:
        chk = rep["compile_check"]
        if "error" in chk:
            line("self-test", f"FAILED for {chk['arch']}: {chk['error'].splitlines()[0]}")
        else:
            msg = f"compiled for {chk['arch']} in {chk['compile_s']} s ({chk['cubin_bytes']} bytes)"
            if "run_max_abs_err" in chk:
                msg += f"; ran on GPU, max |err| vs torch = {chk['run_max_abs_err']:.2e}"
            line("self-test", msg)
    if problems:
        print("problems:")
        for p in problems:
            print(f"  - {p}")
        return 1
    print("ok")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(run(__import__("argparse").Namespace(compile=True, arch=None, json=False)))
