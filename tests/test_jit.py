"""JIT engine, CPU side: NVRTC compiles for every target without a GPU, cache keys, hits/misses, corruption
recovery, strict mode, multi-process compile-once, compile error reports, launcher argument packing."""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import struct
import textwrap
from pathlib import Path

import pytest

import vllm_humming.jit as jit
from vllm_humming.jit import paths
from vllm_humming.jit.cache import DiskCache, scan_headers
from vllm_humming.jit.compiler import build_options
from vllm_humming.jit.launch import (KernelFunction, Launcher, _cell_for_value, arch_for_capability, binary_runs_on)
from vllm_humming.jit.selftest import SelftestConfig, selftest_spec

TARGET_ARCHS = ("sm_75", "sm_80", "sm_86", "sm_89", "sm_90a", "sm_100a", "sm_120a")


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path, monkeypatch):
    """Every test gets its own cache root (never ~/.cache) and neutral JIT env."""
    monkeypatch.setenv("HUMMING_CACHE_DIR", str(tmp_path / "jitcache"))
    for v in ("HUMMING_JIT_STRICT", "HUMMING_JIT_VERBOSE", "HUMMING_JIT_LINEINFO", "HUMMING_KERNELS_DIR",
              "HUMMING_JIT_FAST_COMPILE"):
        monkeypatch.delenv(v, raising=False)
    yield tmp_path / "jitcache"


def tiny_spec(name="humming_test_tiny", arch="sm_80", body="x[threadIdx.x] *= 2.f;", **kw):
    src = f'extern "C" __global__ void {name}(float* x) {{ {body} }}\n'
    return jit.KernelSpec(name=name, source=src, arch=arch, **kw)


# ---------------------------------------------------------------------------------------------------- compile

@pytest.mark.parametrize("arch", TARGET_ARCHS)
def test_selftest_compiles_for_every_target_without_gpu(arch, _isolated_cache):
    art = jit.compile_kernel(selftest_spec(arch))
    assert art.cubin[:4] == b"\x7fELF" and len(art.cubin) > 1000
    assert not art.cached and art.source == "nvrtc" and art.nvrtc_s > 0
    assert art.spec.arch == arch and len(art.key) == 64
    assert (_isolated_cache / art.key[:2] / f"{art.key}.cubin").read_bytes() == art.cubin


def test_sm90a_feature_path_only_on_arch_specific_target():
    """The wgmma snippet is compiled for sm_90a (compute_90a PTX has it) and absent from plain sm_90 and sm_80."""
    ptx_90a = jit.compile_kernel(selftest_spec("sm_90a", output="ptx")).cubin.decode()
    ptx_90 = jit.compile_kernel(selftest_spec("sm_90", output="ptx")).cubin.decode()
    assert ".target sm_90a" in ptx_90a and "wgmma.fence.sync.aligned" in ptx_90a
    assert "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32" in ptx_90a
    assert ".target sm_90" in ptx_90 and "wgmma" not in ptx_90
    ptx_75 = jit.compile_kernel(selftest_spec("sm_75", output="ptx")).cubin.decode()
    assert "mma.sync" not in ptx_75 and "fma.rn.f32" in ptx_75  # sm_75: scalar fallback (no bf16 MMA)


def test_arch_spellings_and_errors():
    assert jit.normalize_arch("sm90a") == "sm_90a"
    assert jit.normalize_arch("90a") == "sm_90a"
    assert jit.normalize_arch("compute_80") == "sm_80"
    assert jit.normalize_arch("SM_120A") == "sm_120a"
    for bad in ("sm_8", "ampere", "sm_80a", "sm_90f", "", "sm_90b"):
        with pytest.raises(jit.ArchError):
            jit.normalize_arch(bad)
    with pytest.raises(jit.ArchError, match="supports"):  # well-formed but not a target of this NVRTC
        jit.compile_kernel(tiny_spec(arch="sm_70"))


def test_kernel_spec_validation():
    with pytest.raises(ValueError, match="C identifier"):
        jit.KernelSpec(name="bad name", source="x", arch="sm_80")
    with pytest.raises(TypeError, match="tuple of strings"):
        jit.KernelSpec(name="k", source="x", arch="sm_80", options="-DA=1")
    with pytest.raises(ValueError, match="cubin"):
        jit.KernelSpec(name="k", source="x", arch="sm_80", output="fatbin")
    s = jit.KernelSpec(name="k", source="x", arch="sm80", options=["-DA=1"])
    assert s.arch == "sm_80" and s.options == ("-DA=1",) and hash(s) == hash(
        jit.KernelSpec(name="k", source="x", arch="sm_80", options=("-DA=1",), config={"ignored": 1}))


def test_options_and_include_paths():
    key_opts, full = build_options(selftest_spec("sm_90a", options=("--use_fast_math",)))
    assert "-std=c++17" in full and "-default-device" in full and "-DNDEBUG" in full
    assert "--gpu-architecture=sm_90a" in full and full[-1] == "--use_fast_math"
    assert f"--include-path={paths.include_dir()}" in full
    assert any(o.startswith("--include-path=") and o.endswith("include") and "nvidia" in o for o in full)
    assert not any(o.startswith("--include-path") for o in key_opts)  # machine paths stay out of the key
    _, full_ptx = build_options(selftest_spec("sm_90a", output="ptx"))
    assert "--gpu-architecture=compute_90a" in full_ptx


@pytest.mark.parametrize("arch", TARGET_ARCHS)
def test_fast_compile_level_enters_the_key_and_compiles(arch, monkeypatch):
    """HUMMING_JIT_FAST_COMPILE (experiment): NVRTC's --Ofast-compile level is an option of the key -- another binary,
    never a cache hit on the default one -- compiles for every target, and a bad value is refused by name."""
    spec = selftest_spec(arch)
    plain = jit.kernel_key(spec)
    monkeypatch.setenv("HUMMING_JIT_FAST_COMPILE", "min")
    key_opts, _ = build_options(spec)
    assert "--Ofast-compile=min" in key_opts and jit.kernel_key(spec) != plain
    assert jit.compile_kernel(spec).cubin
    monkeypatch.setenv("HUMMING_JIT_FAST_COMPILE", "0")
    assert jit.kernel_key(spec) == plain
    monkeypatch.setenv("HUMMING_JIT_FAST_COMPILE", "fast")
    with pytest.raises(ValueError, match="HUMMING_JIT_FAST_COMPILE"):
        build_options(spec)


def test_cuda_and_cccl_headers_resolve():
    src = textwrap.dedent("""
        #include <cuda_bf16.h>
        #include <cuda/std/cstdint>
        extern "C" __global__ void humming_test_hdrs(__nv_bfloat16* x, cuda::std::int32_t n) {
          if (threadIdx.x < n) x[threadIdx.x] = __float2bfloat16(2.f * __bfloat162float(x[threadIdx.x]));
        }
    """)
    art = jit.compile_kernel(jit.KernelSpec(name="humming_test_hdrs", source=src, arch="sm_90a"))
    assert art.cubin[:4] == b"\x7fELF"


def test_kernels_dir_is_the_checkout_tree(monkeypatch, tmp_path):
    kd = paths.kernels_dir()
    assert (kd / "include" / "humming" / "jit_selftest.cuh").is_file()
    assert paths.include_dir() == kd / "include"
    alt = tmp_path / "k"
    (alt / "include" / "humming").mkdir(parents=True)
    monkeypatch.setenv("HUMMING_KERNELS_DIR", str(alt))
    assert paths.kernels_dir() == alt.resolve()
    monkeypatch.setenv("HUMMING_KERNELS_DIR", str(tmp_path / "nope"))
    with pytest.raises(jit.JitSetupError, match="HUMMING_KERNELS_DIR"):
        paths.kernels_dir()


def test_cache_dir_resolution(monkeypatch, tmp_path):
    monkeypatch.setenv("HUMMING_CACHE_DIR", str(tmp_path / "a"))
    assert paths.cache_dir() == tmp_path / "a"
    monkeypatch.delenv("HUMMING_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert paths.cache_dir() == tmp_path / "xdg" / "vllm-humming" / "jit"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert paths.cache_dir() == Path.home() / ".cache" / "vllm-humming" / "jit"


# ---------------------------------------------------------------------------------------------------- cache

def test_cache_miss_then_memory_then_disk_hit(_isolated_cache):
    jit.reset_stats()
    spec = tiny_spec()
    a1 = jit.compile_kernel(spec)
    a2 = jit.compile_kernel(spec)
    jit.clear_memory_cache()
    a3 = jit.compile_kernel(spec)
    assert (a1.cached, a1.source) == (False, "nvrtc")
    assert (a2.cached, a2.source) == (True, "memory")
    assert (a3.cached, a3.source) == (True, "disk")
    assert a1.cubin == a2.cubin == a3.cubin and a1.key == a2.key == a3.key
    assert a3.nvrtc_s == pytest.approx(a1.nvrtc_s, abs=1e-3)  # recorded at build time
    st = jit.stats()
    assert st["nvrtc_compiles"] == 1 and st["memory_hits"] == 1 and st["disk_hits"] == 1
    meta = json.loads((_isolated_cache / a1.key[:2] / f"{a1.key}.json").read_text())
    assert meta["sha256"] == hashlib.sha256(a1.cubin).hexdigest() and meta["name"] == spec.name
    assert (_isolated_cache / a1.key[:2] / f"{a1.key}.cu").read_text() == spec.source


def test_key_covers_source_options_arch_name_output():
    base = tiny_spec()
    keys = {
        jit.kernel_key(base),
        jit.kernel_key(tiny_spec(body="x[threadIdx.x] *= 3.f;")),
        jit.kernel_key(tiny_spec(options=("-DFOO=1",))),
        jit.kernel_key(tiny_spec(arch="sm_86")),
        jit.kernel_key(tiny_spec(arch="sm_90a")),
        jit.kernel_key(tiny_spec(output="ptx")),
        jit.kernel_key(tiny_spec(name="humming_test_tiny2")),
    }
    assert len(keys) == 7
    assert jit.kernel_key(base) == jit.kernel_key(tiny_spec())  # deterministic
    # config is metadata, not part of the key
    assert jit.kernel_key(tiny_spec(config={"bm": 64})) == jit.kernel_key(base)


def _write_tree(root: Path, files: dict):
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


def test_transitive_header_change_gives_new_key_and_rebuild(tmp_path):
    inc = tmp_path / "inc"
    _write_tree(inc, {
        "hx/top.cuh": '#pragma once\n#include "detail/mid.cuh"\n#include <cuda_fp16.h>\n',
        "hx/detail/mid.cuh": '#pragma once\n#include "leaf.cuh"\n',     # relative to the including file
        "hx/detail/leaf.cuh": "#pragma once\n#define HX_SCALE 2.f\n",
        "hx/unused.cuh": "#pragma once\n",
    })
    src = ('#include "hx/top.cuh"\nextern "C" __global__ void humming_test_hdr(float* x) '
           '{ x[threadIdx.x] *= HX_SCALE; }\n')
    spec = jit.KernelSpec(name="humming_test_hdr", source=src, arch="sm_80", include_dirs=(str(inc),))
    heads = dict(scan_headers(src, [inc]))
    assert set(heads) == {"hx/top.cuh", "hx/detail/mid.cuh", "hx/detail/leaf.cuh"}  # not unused.cuh, not cuda_fp16
    a1 = jit.compile_kernel(spec)
    assert jit.compile_kernel(spec).key == a1.key
    (inc / "hx/unused.cuh").write_text("#pragma once\n// edited\n")
    assert jit.kernel_key(spec) == a1.key  # headers not included do not matter
    (inc / "hx/detail/leaf.cuh").write_text("#pragma once\n#define HX_SCALE 4.f\n")  # same size, new content
    a2 = jit.compile_kernel(spec)
    assert a2.key != a1.key and not a2.cached and a2.cubin != a1.cubin
    (inc / "hx/detail/leaf.cuh").write_text("#pragma once\n#define HX_SCALE 2.f\n")
    a3 = jit.compile_kernel(spec)
    assert a3.key == a1.key and a3.cached


def test_our_header_tree_enters_the_key():
    src = selftest_spec("sm_80").source
    heads = dict(scan_headers(src, [paths.include_dir()]))
    data = (paths.include_dir() / "humming" / "jit_selftest.cuh").read_bytes()
    assert heads["humming/jit_selftest.cuh"] == hashlib.sha256(data).hexdigest()


@pytest.mark.parametrize("damage", ["truncate", "flip", "delete_bin", "bad_json", "delete_meta"])
def test_corrupt_entry_is_detected_and_rebuilt(damage, _isolated_cache):
    spec = tiny_spec()
    a1 = jit.compile_kernel(spec)
    d = _isolated_cache / a1.key[:2]
    binp, metap = d / f"{a1.key}.cubin", d / f"{a1.key}.json"
    if damage == "truncate":
        binp.write_bytes(a1.cubin[: len(a1.cubin) // 2])
    elif damage == "flip":
        b = bytearray(a1.cubin)
        b[len(b) // 2] ^= 0xFF
        binp.write_bytes(bytes(b))
    elif damage == "delete_bin":
        binp.unlink()
    elif damage == "bad_json":
        metap.write_text("{not json")
    else:
        metap.unlink()
    assert DiskCache(_isolated_cache).get(a1.key)[2].startswith("corrupt")
    jit.clear_memory_cache()
    jit.reset_stats()
    a2 = jit.compile_kernel(spec)
    assert not a2.cached and a2.cubin == a1.cubin
    assert jit.stats()["corrupt_rebuilt"] == 1
    assert DiskCache(_isolated_cache).get(a1.key)[2] == "hit"
    assert binp.read_bytes() == a1.cubin


def test_strict_mode_raises_on_miss_naming_the_kernel(monkeypatch):
    built = tiny_spec()
    jit.compile_kernel(built)
    monkeypatch.setenv("HUMMING_JIT_STRICT", "1")
    assert jit.strict_mode()
    jit.clear_memory_cache()
    assert jit.compile_kernel(built).cached  # hits are fine in strict mode
    missing = tiny_spec(name="humming_test_never_built", arch="sm_90a")
    with pytest.raises(jit.CacheMissError) as ei:
        jit.compile_kernel(missing)
    msg = str(ei.value)
    assert "humming_test_never_built" in msg and "sm_90a" in msg and jit.kernel_key(missing) in msg
    with pytest.raises(jit.CacheMissError):
        jit.compile_many([built, missing])
    assert jit.compile_kernel(missing, strict=False).source == "nvrtc"  # explicit override


def test_verbose_mode_reports_events(monkeypatch, capfd):
    monkeypatch.setenv("HUMMING_JIT_VERBOSE", "1")
    spec = tiny_spec()
    jit.compile_kernel(spec)
    jit.clear_memory_cache()
    jit.compile_kernel(spec)
    err = capfd.readouterr().err
    assert "compiled" in err and "disk hit" in err and spec.name in err


# ---------------------------------------------------------------------------------------------------- errors

def test_compile_error_shows_log_source_line_and_spec():
    bad = selftest_spec("sm_80", SelftestConfig(bm=32, bn=32, bk=16, warps_m=2, warps_n=2),
                        extra_source="__device__ int humming_broken() { return undefined_thing + 1; }")
    with pytest.raises(jit.CompileError) as ei:
        jit.compile_kernel(bad)
    e = ei.value
    msg = str(e)
    assert bad.name in msg and "sm_80" in msg
    assert "'bm': 32" in msg and "jit_selftest" in msg            # the config that produced it
    assert 'identifier "undefined_thing" is undefined' in msg    # NVRTC log
    assert "> 3 | __device__ int humming_broken() { return undefined_thing + 1; }" in msg  # failing line, marked
    assert '#include "humming/jit_selftest.cuh"' in msg          # with context
    assert e.spec is bad and e.locations and e.locations[0][1] == 3
    assert not DiskCache(paths.cache_dir()).get(e.key)[0]        # nothing cached


def test_compile_error_inside_a_header_shows_header_lines(tmp_path):
    inc = tmp_path / "inc"
    _write_tree(inc, {"hy/bad.cuh": "#pragma once\n// line 2\n__device__ float hy_f() { return nope_symbol; }\n"})
    spec = jit.KernelSpec(name="humming_test_badhdr", arch="sm_80", include_dirs=(str(inc),),
                          source='#include "hy/bad.cuh"\nextern "C" __global__ void humming_test_badhdr() {}\n')
    with pytest.raises(jit.CompileError) as ei:
        jit.compile_kernel(spec)
    msg = str(ei.value)
    assert "bad.cuh:3" in msg and "> 3 | __device__ float hy_f() { return nope_symbol; }" in msg


def test_compile_many_order_dedup_and_errors(_isolated_cache):
    specs = [tiny_spec(name=f"humming_test_many{i}", body=f"x[threadIdx.x] += {i}.f;") for i in range(4)]
    jit.reset_stats()
    arts = jit.compile_many(specs + [specs[1]], jobs=2)
    assert [a.spec.name for a in arts] == [s.name for s in specs] + [specs[1].name]
    assert jit.stats()["nvrtc_compiles"] == 4
    assert arts[1].key == arts[4].key
    # threads compile the same bytes as a sequential compile (NVRTC is thread-safe and deterministic)
    seq = jit.compile_many(specs, jobs=1, cache_dir=_isolated_cache.parent / "seq")
    assert [a.cubin for a in seq] == [a.cubin for a in arts[:4]] and all(a.source == "nvrtc" for a in seq)
    assert jit.compile_many([]) == []
    bad = tiny_spec(name="humming_test_many_bad", body="this is not C++;")
    good = tiny_spec(name="humming_test_many_good")
    with pytest.raises(jit.CompileError, match="humming_test_many_bad"):
        jit.compile_many([good, bad], jobs=2)
    jit.clear_memory_cache()
    assert jit.compile_kernel(good).source == "disk"  # the good one still finished and was cached


# ---------------------------------------------------------------------------------------------------- processes

# Worker: a separate interpreter that imports only vllm_humming.jit (the package __init__ is bypassed so the worker
# does not pay for importing torch -- several of them on 2 CPUs would take ~30 s), waits at a file barrier until all
# workers are ready, then asks for the same kernel.
_WORKER = textwrap.dedent("""
    import hashlib, json, os, sys, time, types
    pkgdir, cache, ready, n, idx, spec_json = sys.argv[1:7]
    pkg = types.ModuleType("vllm_humming")
    pkg.__path__ = [pkgdir]
    pkg.__file__ = os.path.join(pkgdir, "__init__.py")
    sys.modules["vllm_humming"] = pkg
    os.environ["HUMMING_CACHE_DIR"] = cache
    import vllm_humming.jit as j
    spec = j.KernelSpec(**json.loads(spec_json))
    open(os.path.join(ready, idx), "w").close()
    t0 = time.time()
    while len(os.listdir(ready)) < int(n):
        if time.time() - t0 > 120:
            sys.exit("barrier timeout")
        time.sleep(0.002)
    art = j.compile_kernel(spec)
    print(json.dumps([art.cached, art.source, art.key, hashlib.sha256(art.cubin).hexdigest()]))
""")


def test_concurrent_processes_compile_once(tmp_path):
    import subprocess
    import sys

    cache, ready = tmp_path / "shared", tmp_path / "ready"
    ready.mkdir()
    n = 4
    # a spec nobody has compiled before (unique per run), slow enough (~0.3 s) for the processes to collide
    spec = selftest_spec("sm_80", name="humming_test_race", options=(f"-DRACE_TAG={os.getpid()}",))
    spec_json = json.dumps({"name": spec.name, "source": spec.source, "arch": spec.arch, "options": spec.options})
    pkgdir = str(Path(jit.__file__).resolve().parent.parent)
    procs = [subprocess.Popen([sys.executable, "-c", _WORKER, pkgdir, str(cache), str(ready), str(n), str(i),
                               spec_json], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i in range(n)]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        results.append(json.loads(out.strip().splitlines()[-1]))
    assert sorted(r[0] for r in results) == [False] + [True] * (n - 1)  # exactly one NVRTC compile
    assert sorted(r[1] for r in results) == ["disk"] * (n - 1) + ["nvrtc"]
    assert len({r[2] for r in results}) == 1 and len({r[3] for r in results}) == 1  # same key, same bytes
    assert results[0][2] == jit.kernel_key(spec)
    data, meta, status = DiskCache(cache).get(results[0][2])
    assert status == "hit" and hashlib.sha256(data).hexdigest() == results[0][3]
    assert not list(cache.rglob("*.tmp"))  # no torn / leftover temp files


# ---------------------------------------------------------------------------------------------------- loading (CPU)

def test_arch_helpers():
    assert arch_for_capability(9, 0) == "sm_90a"
    assert arch_for_capability(8, 0) == "sm_80" and arch_for_capability(8, 9) == "sm_89"
    assert arch_for_capability(10, 0) == "sm_100a" and arch_for_capability(12, 0) == "sm_120a"
    assert binary_runs_on("sm_80", "cubin", 8, 6) and binary_runs_on("sm_80", "cubin", 8, 0)
    assert not binary_runs_on("sm_86", "cubin", 8, 0) and not binary_runs_on("sm_80", "cubin", 9, 0)
    assert binary_runs_on("sm_90a", "cubin", 9, 0) and not binary_runs_on("sm_90a", "cubin", 10, 0)
    assert binary_runs_on("sm_80", "ptx", 9, 0) and not binary_runs_on("sm_90a", "ptx", 10, 0)


def test_no_gpu_here_is_reported_cleanly():
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    assert jit.current_arch() is None
    with pytest.raises(jit.JitError, match="no CUDA GPU"):
        jit.load_kernel(jit.compile_kernel(tiny_spec()))


def test_generic_argument_conversion():
    import torch

    t = torch.zeros(4)
    assert _cell_for_value(t, 0, "k").value == t.data_ptr()
    assert isinstance(_cell_for_value(7, 0, "k"), ctypes.c_int32)
    assert isinstance(_cell_for_value(1.5, 0, "k"), ctypes.c_float)
    c64 = ctypes.c_int64(2**40)
    assert _cell_for_value(c64, 0, "k") is c64
    assert _cell_for_value(None, 0, "k").value is None
    with pytest.raises(OverflowError, match="c_int64"):
        _cell_for_value(2**31, 3, "k")
    with pytest.raises(TypeError, match="unsupported"):
        _cell_for_value("x", 0, "k")


class _RecordingFunction(KernelFunction):
    """A KernelFunction whose launch records the packed argument bytes instead of calling the driver."""

    def __init__(self):  # noqa: D401 - no driver here
        self.name, self.device, self.calls = "humming_test_fake", 0, []

    def _launch_raw(self, gx, gy, gz, bx, by, bz, smem, stream_h, params_addr):
        self.calls.append(((gx, gy, gz), (bx, by, bz), smem, stream_h, params_addr))


def _read_arg(params_addr, i, ctype):
    ptr = ctypes.c_void_p.from_address(params_addr + i * ctypes.sizeof(ctypes.c_void_p)).value
    return ctype.from_address(ptr)


def test_launcher_packs_arguments_in_place():
    import torch

    class TMap(ctypes.Structure):
        _fields_ = [("w", ctypes.c_uint64 * 16)]

    fn = _RecordingFunction()
    l = Launcher(fn, ("ptr", "ptr", "i32", "u32", "i64", "f32", "f64", "bool", TMap))
    a, b = torch.zeros(3), torch.ones(5)
    blob = struct.pack("<16Q", *range(16))
    l.launch((4, 2, 1), 128, 1024, 0x1234, a, b.data_ptr(), -5, 2**32 - 1, 2**40, 0.5, 0.25, True, blob)
    (grid, block, smem, stream, params), = fn.calls
    assert grid == (4, 2, 1) and block == (128, 1, 1) and smem == 1024 and stream == 0x1234
    assert _read_arg(params, 0, ctypes.c_void_p).value == a.data_ptr()
    assert _read_arg(params, 1, ctypes.c_void_p).value == b.data_ptr()
    assert _read_arg(params, 2, ctypes.c_int32).value == -5
    assert _read_arg(params, 3, ctypes.c_uint32).value == 2**32 - 1
    assert _read_arg(params, 4, ctypes.c_int64).value == 2**40
    assert _read_arg(params, 5, ctypes.c_float).value == 0.5
    assert _read_arg(params, 6, ctypes.c_double).value == 0.25
    assert _read_arg(params, 7, ctypes.c_bool).value is True
    assert list(_read_arg(params, 8, TMap).w) == list(range(16))
    # in-place update of one value, then launch with the stored values; same argument array
    l[2] = 99
    l[0] = None
    l.launch_prepared(7, (32, 4), 0, 5)
    (grid, block, _, stream, params2) = fn.calls[1]
    assert params2 == params and grid == (7, 1, 1) and block == (32, 4, 1) and stream == 5
    assert _read_arg(params, 2, ctypes.c_int32).value == 99 and _read_arg(params, 0, ctypes.c_void_p).value is None
    with pytest.raises(TypeError, match="expected 9"):
        l.launch(1, 1, 0, 0, a)
    with pytest.raises(ValueError, match="needs 128 bytes"):
        l[8] = b"short"
    with pytest.raises(ValueError, match="unknown arg type"):
        Launcher(fn, ("ptr", "int"))
    checked = Launcher(fn, ("i32",), check_ranges=True)
    with pytest.raises(OverflowError):
        checked.launch(1, 1, 0, 0, 2**31)
