"""The direct ctypes launch path and programmatic dependent launch (vllm_humming.jit.launch), on the CPU.

The driver entry points are replaced by ctypes callbacks (real C function pointers into Python), so the generated
Launcher code, the argument conversion, the CUlaunchConfig/CUlaunchAttribute bytes the driver would read, the
error/retry handling, the env switch and the fallback without libcuda are all exercised without a GPU.  The GPU side
is in tests/test_jit_gpu.py (ctypes vs bindings, PDL results, host time per launch)."""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import subprocess
import warnings

import pytest

cuda_driver = pytest.importorskip("cuda.bindings.driver")

import vllm_humming.jit.launch as L  # noqa: E402
from vllm_humming.jit import CudaError  # noqa: E402
from vllm_humming.jit.spec import CompiledKernel, KernelSpec  # noqa: E402

U, P = ctypes.c_uint, ctypes.c_void_p
_LAUNCH_CB = ctypes.CFUNCTYPE(ctypes.c_int, P, U, U, U, U, U, U, U, P, P, P)
_LAUNCH_EX_CB = ctypes.CFUNCTYPE(ctypes.c_int, P, P, P, P)
HANDLE = 0x7F00_DEAD_BEE0


def _cuda_h():
    try:
        import nvidia.cu13 as cu13
    except ImportError:
        return None
    for root in cu13.__path__:
        p = os.path.join(root, "include", "cuda.h")
        if os.path.isfile(p):
            return p
    return None


class FakeDriver:
    """cuLaunchKernel / cuLaunchKernelEx stand-ins: record what the driver would see, return ``results`` in turn."""

    def __init__(self):
        self.calls, self.results = [], []
        self.peek = None  # optional: read the argument array during the call (generic launches free it afterwards)

    def _result(self):
        return self.results.pop(0) if self.results else 0

    def _launch(self, f, gx, gy, gz, bx, by, bz, smem, stream, params, extra):
        self.calls.append(dict(kind="launch", f=f, grid=(gx, gy, gz), block=(bx, by, bz), smem=smem,
                               stream=stream or 0, params=params, extra=extra,
                               peek=self.peek(params) if self.peek else None))
        return self._result()

    def _launch_ex(self, config, f, params, extra):
        c = L.CUlaunchConfig.from_address(config)
        attrs = [(c.attrs[i].id, c.attrs[i].value.programmaticStreamSerializationAllowed) for i in range(c.numAttrs)]
        self.calls.append(dict(kind="ex", f=f, grid=(c.gridDimX, c.gridDimY, c.gridDimZ),
                               block=(c.blockDimX, c.blockDimY, c.blockDimZ), smem=c.sharedMemBytes,
                               stream=c.hStream or 0, attrs=attrs, params=params, extra=extra))
        return self._result()

    def api(self):
        self._cbs = (_LAUNCH_CB(self._launch), _LAUNCH_EX_CB(self._launch_ex))  # keep the closures alive
        addr = [ctypes.cast(cb, P).value for cb in self._cbs]
        return L._DirectAPI(addr[0], addr[1], "test")


@pytest.fixture
def fake(monkeypatch):
    drv = FakeDriver()
    monkeypatch.setattr(L, "_direct", drv.api())
    monkeypatch.delenv(L.LAUNCH_PATH_ENV, raising=False)
    return drv


def _function(arch="sm_90a", path=None, name="humming_test_fast"):
    spec = KernelSpec(name=name, source='extern "C" __global__ void k() {}', arch=arch)
    art = CompiledKernel(cubin=b"", key="0" * 64, compile_s=0.0, cached=True, log="", spec=spec)
    return L.KernelFunction(art, 0, None, cuda_driver.CUfunction(HANDLE), launch_path=path)


def _arg(params, i, ctype):
    return ctype.from_address(P.from_address(params + i * ctypes.sizeof(P)).value).value


# ---------------------------------------------------------------------------------------------------------------
# struct layouts (cuda.h, CUDA 13.0: checked with offsetof/sizeof on x86-64 and hard-coded here)

def test_launch_struct_layout_matches_cuda_h():
    assert ctypes.sizeof(L.CUlaunchAttributeValue) == 64 and ctypes.alignment(L.CUlaunchAttributeValue) == 8
    assert ctypes.sizeof(L.CUlaunchAttribute) == 72
    assert L.CUlaunchAttribute.id.offset == 0 and L.CUlaunchAttribute.value.offset == 8
    assert L.CUlaunchAttributeValue.programmaticStreamSerializationAllowed.offset == 0
    assert ctypes.sizeof(L.CUlaunchConfig) == 56
    offsets = {name: getattr(L.CUlaunchConfig, name).offset for name, _ in L.CUlaunchConfig._fields_}
    assert offsets == {"gridDimX": 0, "gridDimY": 4, "gridDimZ": 8, "blockDimX": 12, "blockDimY": 16,
                       "blockDimZ": 20, "sharedMemBytes": 24, "hStream": 32, "attrs": 40, "numAttrs": 48}
    assert L.CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION == 6
    assert L._CUDA_ERROR_INVALID_CONTEXT == int(cuda_driver.CUresult.CUDA_ERROR_INVALID_CONTEXT)
    assert L.CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION == int(
        cuda_driver.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION)
    # the per-launch patch covers exactly grid, block, smem and the stream
    assert L._CONFIG_HEAD.size == L.CUlaunchConfig.attrs.offset


def test_launch_struct_fields_follow_the_header_text():
    path = _cuda_h()
    if path is None:
        pytest.skip("nvidia-cuda-runtime (cu13) headers not installed")
    text = open(path, encoding="utf-8", errors="replace").read()
    m = re.search(r"typedef struct CUlaunchConfig_st \{(.*?)\} CUlaunchConfig;", text, re.S)
    fields = re.findall(r"\b(\w+);", re.sub(r"/\*.*?\*/", "", m.group(1), flags=re.S))
    assert fields == [name for name, _ in L.CUlaunchConfig._fields_]
    m = re.search(r"typedef struct CUlaunchAttribute_st \{(.*?)\} CUlaunchAttribute;", text, re.S)
    body = re.sub(r"/\*.*?\*/", "", m.group(1), flags=re.S)
    assert re.findall(r"\b(\w+)(?:\[[^\]]*\])?;", body) == ["id", "pad", "value"]
    assert "char pad[64]" in text[text.index("typedef union CUlaunchAttributeValue_union"):][:200]
    v = re.search(r"CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION\s*=\s*(\d+)", text)
    assert int(v.group(1)) == L.CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
    assert re.search(r"CUresult CUDAAPI cuLaunchKernelEx\(const CUlaunchConfig \*config,\s*CUfunction f,\s*"
                     r"void \*\*kernelParams,\s*void \*\*extra\);", text)


def test_launch_struct_layout_compiled_against_cuda_h(tmp_path):
    """offsetof/sizeof from a C compiler reading the real header (skipped without a compiler or the header)."""
    path, cc = _cuda_h(), shutil.which("cc") or shutil.which("gcc")
    if path is None or cc is None:
        pytest.skip("needs cuda.h and a C compiler")
    src = tmp_path / "layout.c"
    src.write_text("#include <stdio.h>\n#include <stddef.h>\n#include \"cuda.h\"\nint main(void){\n"
                   "printf(\"%zu %zu %zu %zu\\n\", sizeof(CUlaunchAttributeValue), sizeof(CUlaunchAttribute),"
                   " offsetof(CUlaunchAttribute, value), sizeof(CUlaunchConfig));\n"
                   "printf(\"%zu %zu %zu %zu\\n\", offsetof(CUlaunchConfig, sharedMemBytes),"
                   " offsetof(CUlaunchConfig, hStream), offsetof(CUlaunchConfig, attrs),"
                   " offsetof(CUlaunchConfig, numAttrs));\n"
                   "printf(\"%d\\n\", (int)CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION);\nreturn 0;}\n")
    exe = tmp_path / "layout"
    r = subprocess.run([cc, "-I", os.path.dirname(path), str(src), "-o", str(exe)], capture_output=True, text=True)
    if r.returncode:
        pytest.skip(f"cannot compile against cuda.h: {r.stderr[:300]}")
    out = [list(map(int, line.split())) for line in subprocess.check_output([str(exe)], text=True).splitlines()]
    C = L.CUlaunchConfig
    assert out[0] == [ctypes.sizeof(L.CUlaunchAttributeValue), ctypes.sizeof(L.CUlaunchAttribute),
                      L.CUlaunchAttribute.value.offset, ctypes.sizeof(C)]
    assert out[1] == [C.sharedMemBytes.offset, C.hStream.offset, C.attrs.offset, C.numAttrs.offset]
    assert out[2] == [L.CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION]


def test_launch_config_patch_keeps_the_attribute_array():
    cfg = L._LaunchConfig(True)
    cfg.set(3, 2, 1, 128, 1, 1, 4096, 2**64 - 2)
    c = L.CUlaunchConfig.from_address(cfg.ptr.value)
    assert (c.gridDimX, c.gridDimY, c.gridDimZ, c.blockDimX, c.blockDimY, c.blockDimZ) == (3, 2, 1, 128, 1, 1)
    assert c.sharedMemBytes == 4096 and c.hStream == 2**64 - 2 and c.numAttrs == 1
    assert ctypes.addressof(c.attrs.contents) == ctypes.addressof(cfg.attr)
    assert c.attrs[0].id == 6 and c.attrs[0].value.programmaticStreamSerializationAllowed == 1
    raw = bytes(cfg.attr)
    assert raw[:4] == (6).to_bytes(4, "little") and raw[8:12] == (1).to_bytes(4, "little")
    assert L._LaunchConfig(False).config.numAttrs == 0


# ---------------------------------------------------------------------------------------------------------------
# path selection, env switch, fallback

def test_env_switch_and_default(fake, monkeypatch):
    assert L.resolve_launch_path() == "ctypes" and L.direct_launch_available()
    assert _function().launch_path == "ctypes"
    monkeypatch.setenv(L.LAUNCH_PATH_ENV, "bindings")
    assert L.resolve_launch_path() == "bindings"
    fn = _function()
    assert fn.launch_path == "bindings" and fn._direct is None
    assert L.Launcher(fn, ("ptr",)).mode == "raw"
    assert L.Launcher(fn, ("ptr",), launch_path="ctypes").mode == "ctypes"  # per-launcher override
    monkeypatch.delenv(L.LAUNCH_PATH_ENV)
    fast = _function()
    seen = []
    fast._launch = lambda *a: seen.append(a) or (cuda_driver.CUresult.CUDA_SUCCESS,)
    slow = L.Launcher(fast, ("ptr",), launch_path="bindings")
    assert fast.launch_path == "ctypes" and slow.launch_path == "bindings" and slow.mode == "raw"
    slow.launch(1, 32, 0, 0x40, None)
    assert len(seen) == 1 and int(seen[0][8]) == 0x40 and not fake.calls  # cuda.bindings, not the direct call
    monkeypatch.setenv(L.LAUNCH_PATH_ENV, " CTypes ")
    assert L.resolve_launch_path() == "ctypes"
    monkeypatch.setenv(L.LAUNCH_PATH_ENV, "cffi")
    with pytest.raises(ValueError, match="HUMMING_LAUNCH_PATH='cffi'.*'ctypes'.*'bindings'"):
        _function()
    with pytest.raises(ValueError, match="launch_path='fast'"):
        L.resolve_launch_path("fast")
    assert fn.set_launch_path("ctypes") == "ctypes" and fn._direct is L._direct


def test_fallback_without_libcuda(monkeypatch):
    monkeypatch.setattr(L, "_direct", None)
    monkeypatch.setattr(L, "_warned_fallback", False)
    monkeypatch.delenv(L.LAUNCH_PATH_ENV, raising=False)

    def no_driver(*a, **k):
        raise RuntimeError("Failed to dlopen libcuda.so.1")

    def no_lib(name, *a, **k):
        raise OSError(f"{name}: cannot open shared object file")

    monkeypatch.setattr(cuda_driver, "cuGetProcAddress", no_driver)
    monkeypatch.setattr(L.ctypes, "CDLL", no_lib)
    assert not L.direct_launch_available()
    assert "libcuda.so.1" in L._direct_why and "cuGetProcAddress" in L._direct_why
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert L.resolve_launch_path() == "bindings"  # the default degrades silently
        fn = _function()
    assert fn.launch_path == "bindings" and L.Launcher(fn, ("ptr", "i32")).mode == "raw"
    monkeypatch.setenv(L.LAUNCH_PATH_ENV, "ctypes")
    with pytest.warns(RuntimeWarning, match="'ctypes' launch path is not available"):
        assert L.resolve_launch_path() == "bindings"
    # the bindings path still launches (its driver call replaced by a recorder here)
    seen = []
    fn._launch = lambda *a: seen.append(a) or (cuda_driver.CUresult.CUDA_SUCCESS,)
    L.Launcher(fn, ("i32",)).launch(2, 64, 0, 0x10, 5)
    (f, *dims, stream, params, extra), = seen
    assert int(f) == HANDLE and dims == [2, 1, 1, 64, 1, 1, 0] and int(stream) == 0x10 and extra == 0


@pytest.mark.parametrize("ptds", [False, True])
def test_resolution_through_cuGetProcAddress_and_libcuda(monkeypatch, ptds):
    drv = FakeDriver()
    api = drv.api()
    monkeypatch.setattr(L, "_direct", None)
    if ptds:
        monkeypatch.setenv("CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM", "1")
    else:
        monkeypatch.delenv("CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM", raising=False)
    asked = []

    def gpa(sym, ver, flags):
        asked.append((sym, ver, flags))
        return cuda_driver.CUresult.CUDA_SUCCESS, api.addresses[sym == b"cuLaunchKernelEx"], 0

    monkeypatch.setattr(cuda_driver, "cuGetProcAddress", gpa)
    got = L._direct_api()
    F = cuda_driver.CUdriverProcAddress_flags
    flag = F.CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM if ptds else F.CU_GET_PROC_ADDRESS_DEFAULT
    assert got.source == "cuGetProcAddress" and got.addresses == api.addresses
    assert asked == [(b"cuLaunchKernel", 4000, flag), (b"cuLaunchKernelEx", 11060, flag)]

    # cuGetProcAddress unusable -> the exported symbols of libcuda.so.1 (the _ptsz ones with per-thread streams)
    monkeypatch.setattr(L, "_direct", None)
    monkeypatch.setattr(cuda_driver, "cuGetProcAddress",
                        lambda *a: (cuda_driver.CUresult.CUDA_ERROR_NOT_SUPPORTED, 0, 0))
    opened = []

    class FakeLib:
        def __init__(self, name):
            opened.append(name)

        def __getattr__(self, sym):
            opened.append(sym)
            return drv._cbs[sym.startswith("cuLaunchKernelEx")]

    monkeypatch.setattr(L.ctypes, "CDLL", FakeLib)
    got = L._direct_api()
    sfx = "_ptsz" if ptds else ""
    assert got.source == "libcuda.so.1" and got.addresses == api.addresses
    assert opened == ["libcuda.so.1", "cuLaunchKernel" + sfx, "cuLaunchKernelEx" + sfx]


# ---------------------------------------------------------------------------------------------------------------
# the generated launch on the ctypes path

def test_ctypes_launcher_passes_plain_values(fake):
    import torch

    fn = _function()
    launcher = L.Launcher(fn, ("ptr", "i32", "f32", "u64"))
    assert launcher.mode == "ctypes" and launcher.launch_path == "ctypes"
    assert "_cu(_h, gx, gy, gz, bx, by, bz, smem, _P(stream), _pp, None)" in launcher._source
    assert "_raw(" not in launcher._source and "_cuex" not in launcher._source
    t = torch.arange(4.0)
    launcher.launch((4, 3, 2), (128, 2, 1), 1024, 0x7F12_3456_7890, t, -7, 0.5, 2**63 + 5)
    c, = fake.calls
    assert c["kind"] == "launch" and c["f"] == HANDLE and c["grid"] == (4, 3, 2) and c["block"] == (128, 2, 1)
    assert c["smem"] == 1024 and c["stream"] == 0x7F12_3456_7890 and c["extra"] is None
    assert c["params"] == launcher._params
    assert _arg(c["params"], 0, P) == t.data_ptr() and _arg(c["params"], 1, ctypes.c_int32) == -7
    assert _arg(c["params"], 2, ctypes.c_float) == 0.5 and _arg(c["params"], 3, ctypes.c_uint64) == 2**63 + 5
    # launch_prepared, int grid / block, stream 0 (NULL), in-place argument update
    launcher[1] = 11
    launcher.launch_prepared(9, 32, 0, 0)
    c = fake.calls[1]
    assert c["grid"] == (9, 1, 1) and c["block"] == (32, 1, 1) and c["stream"] == 0
    assert _arg(c["params"], 1, ctypes.c_int32) == 11
    # a 2-tuple grid and non-int values (numpy ints) take the converting slow path, same result
    np = pytest.importorskip("numpy")
    launcher.launch((np.int64(5), 2), np.int32(64), np.int64(0), np.uint64(3), None, 1, 1.0, 1)
    c = fake.calls[2]
    assert c["grid"] == (5, 2, 1) and c["block"] == (64, 1, 1) and c["stream"] == 3 and _arg(c["params"], 0, P) is None
    assert len(fake.calls) == 3
    # values ctypes would truncate never reach the driver
    for grid, block in (((2**32 + 1, 1, 1), 32), (1, -1), (1, (32, 2**40, 1))):
        with pytest.raises(OverflowError, match="does not fit an unsigned 32-bit int"):
            launcher.launch(grid, block, 0, 0, None, 1, 1.0, 1)
    with pytest.raises(TypeError, match="float"):
        launcher.launch(1.5, 32, 0, 0, None, 1, 1.0, 1)
    assert len(fake.calls) == 3
    with pytest.raises(TypeError, match="expected 4"):
        launcher.launch(1, 1, 0, 0, t)


def test_ctypes_generic_launch_and_smem_opt_in(fake, monkeypatch):
    fn = _function()
    opted = []
    monkeypatch.setattr(fn, "set_max_smem", lambda n: opted.append(n) or setattr(fn, "_max_smem", n))
    fake.peek = lambda params: (_arg(params, 0, P), _arg(params, 1, ctypes.c_int32))
    fn.launch((2, 2), 256, 100 * 1024, 0x20, (None, 3))
    c, = fake.calls
    assert c["grid"] == (2, 2, 1) and c["block"] == (256, 1, 1) and c["smem"] == 100 * 1024 and c["stream"] == 0x20
    assert c["peek"] == (None, 3)
    fake.peek = None
    launcher = L.Launcher(fn, ("i32",))
    launcher.launch(1, 32, 120 * 1024, 0, 1)
    launcher.launch(1, 32, 120 * 1024, 0, 1)
    assert opted == [100 * 1024, 120 * 1024]
    with pytest.raises(OverflowError, match="does not fit an unsigned 32-bit int"):
        fn.launch(2**32, 32, 0, 0, ())


def test_ctypes_launch_error_and_invalid_context_retry(fake, monkeypatch):
    fn = _function()
    launcher = L.Launcher(fn, ("i32",))
    inval = int(cuda_driver.CUresult.CUDA_ERROR_INVALID_VALUE)
    monkeypatch.setattr(L, "_error_text", lambda err: (cuda_driver.CUresult(err).name, "invalid argument"))
    fake.results = [inval]
    with pytest.raises(CudaError, match=r"cuLaunchKernel of humming_test_fast \[sm_90a\] failed: "
                                        r"CUDA_ERROR_INVALID_VALUE \(invalid argument\); grid=\(1, 1, 1\) "
                                        r"block=\(2048, 1, 1\) dynamic smem=0 stream=0x5 device=0") as ei:
        launcher.launch(1, 2048, 0, 5, 1)
    assert ei.value.code == inval and ei.value.name == "CUDA_ERROR_INVALID_VALUE"
    # INVALID_CONTEXT: make the primary context current and retry once through the same entry point
    made_current = []
    monkeypatch.setattr(L, "_ctx_for", lambda dev: f"ctx{dev}")
    monkeypatch.setattr(cuda_driver, "cuCtxSetCurrent",
                        lambda ctx: made_current.append(ctx) or (cuda_driver.CUresult.CUDA_SUCCESS,))
    fake.calls.clear()
    fake.results = [L._CUDA_ERROR_INVALID_CONTEXT, 0]
    launcher.launch(3, 64, 0, 0, 1)
    assert made_current == ["ctx0"] and [c["grid"] for c in fake.calls] == [(3, 1, 1), (3, 1, 1)]
    fake.results = [L._CUDA_ERROR_INVALID_CONTEXT, L._CUDA_ERROR_INVALID_CONTEXT]
    with pytest.raises(CudaError, match="CUDA_ERROR_INVALID_CONTEXT"):
        launcher.launch(3, 64, 0, 0, 1)


# ---------------------------------------------------------------------------------------------------------------
# programmatic dependent launch

def test_pdl_launcher_builds_the_config_once(fake):
    fn = _function()
    launcher = L.Launcher(fn, ("ptr", "i32"), pdl=True)
    assert launcher.pdl and launcher.mode == "ctypes-pdl"
    assert "_cuex(_cfgp, _h, _pp, None)" in launcher._source and "_cu(" not in launcher._source
    cfg_addr = launcher._config.ptr.value
    launcher.launch((8, 4, 1), 384, 2048, 0xABC0, None, 42)
    launcher.launch(1, (32, 4, 2), 0, 0, 0x1000, 43)
    a, b = fake.calls
    for c in (a, b):
        assert c["kind"] == "ex" and c["f"] == HANDLE and c["params"] == launcher._params and c["extra"] is None
        assert c["attrs"] == [(6, 1)]
    assert a["grid"] == (8, 4, 1) and a["block"] == (384, 1, 1) and a["smem"] == 2048 and a["stream"] == 0xABC0
    assert b["grid"] == (1, 1, 1) and b["block"] == (32, 4, 2) and b["smem"] == 0 and b["stream"] == 0
    assert launcher._config.ptr.value == cfg_addr and _arg(b["params"], 1, ctypes.c_int32) == 43
    # out-of-range values are refused before the driver sees them
    with pytest.raises(OverflowError, match="grid value -1"):
        launcher.launch((-1, 1, 1), 32, 0, 0, None, 1)
    assert len(fake.calls) == 2


def test_pdl_generic_launch_and_arch_gate(fake):
    fn = _function()
    fn.launch(5, 64, 0, 7, (None,), pdl=True)
    fn.launch(5, 64, 0, 7, (None,))
    assert [c["kind"] for c in fake.calls] == ["ex", "launch"] and fake.calls[0]["attrs"] == [(6, 1)]
    old = _function(arch="sm_80", name="humming_test_fast80")
    assert not old.supports_pdl
    launcher = L.Launcher(old, ("ptr",), pdl=True)
    assert not launcher.pdl and launcher.mode == "ctypes"  # no PDL below sm_90: an ordinary launch
    old.launch(1, 32, 0, 0, (None,), pdl=True)
    assert fake.calls[-1]["kind"] == "launch"


def test_pdl_error_names_cuLaunchKernelEx(fake, monkeypatch):
    fn = _function()
    monkeypatch.setattr(L, "_error_text", lambda err: ("CUDA_ERROR_INVALID_VALUE", "invalid argument"))
    fake.results = [1]
    with pytest.raises(CudaError, match=r"cuLaunchKernelEx \(programmatic dependent launch\) of humming_test_fast"):
        L.Launcher(fn, (), pdl=True).launch(1, 32, 0, 0)


def test_pdl_on_the_bindings_path_builds_a_bindings_config(fake, monkeypatch):
    fn = _function(path="bindings")
    seen = []

    def ex(cfg, f, params, extra):
        seen.append((cfg.gridDimX, cfg.blockDimX, cfg.sharedMemBytes, int(cfg.hStream), cfg.numAttrs,
                     int(cfg.attrs[0].id), cfg.attrs[0].value.programmaticStreamSerializationAllowed, int(f),
                     params, extra))
        return (cuda_driver.CUresult.CUDA_SUCCESS,)

    monkeypatch.setattr(cuda_driver, "cuLaunchKernelEx", ex)
    launcher = L.Launcher(fn, ("i32",), pdl=True)
    assert launcher.mode == "raw-pdl"
    launcher.launch(6, 96, 512, 0x30, 1)
    assert seen == [(6, 96, 512, 0x30, 1, 6, 1, HANDLE, launcher._params, 0)] and not fake.calls


def test_subclass_with_its_own_launch_raw_is_called(fake):
    calls = []

    class Recording(L.KernelFunction):
        def _launch_raw(self, *a):
            calls.append(a)

    spec = KernelSpec(name="humming_test_sub", source="x", arch="sm_90a")
    art = CompiledKernel(cubin=b"", key="1" * 64, compile_s=0.0, cached=True, log="", spec=spec)
    fn = Recording(art, 0, None, cuda_driver.CUfunction(HANDLE))
    launcher = L.Launcher(fn, ("i32",))
    assert launcher.mode == "raw" and launcher.launch_path == "custom"
    launcher.launch(2, 32, 0, 9, 1)
    assert calls == [(2, 1, 1, 32, 1, 1, 0, 9, launcher._params)] and not fake.calls


# ---------------------------------------------------------------------------------------------------------------
# bound launches (Launcher.bind): everything fixed but a few pointers -- the GEMM layer's eager hot path

def test_bound_launch_writes_only_the_varying_pointers(fake, monkeypatch):
    monkeypatch.setattr(L, "_current_raw_stream", lambda dev: 0x5150)
    fn = _function()
    base = L.Launcher(fn, ("ptr", "i32", "ptr", "u64"))
    b1 = base.bind((4, 2, 3), 128, 1024, (0, 17, 0, 2**40 + 5), varying=(0, 2))
    b2 = base.bind(7, (64, 2, 1), 0, (0, 99, 0, 1), varying=(2, 0))
    b1(0x1000, 0x2000)
    b2(0x3000, 0x4000)
    b1(0x1100, 0x2200)
    assert [c["kind"] for c in fake.calls] == ["ex", "ex", "ex"]
    c0, c1, c2 = fake.calls
    assert c0["grid"] == (4, 2, 3) and c0["block"] == (128, 1, 1) and c0["smem"] == 1024 and c0["stream"] == 0x5150
    assert c0["attrs"] == [] and c0["f"] == HANDLE and c0["extra"] is None
    assert c1["grid"] == (7, 1, 1) and c1["block"] == (64, 2, 1) and c1["smem"] == 0
    # each bound launch owns its cells: b1's values survive b2's call, and the varying order is respected
    p = c2["params"]
    assert (_arg(p, 0, P), _arg(p, 1, ctypes.c_int32), _arg(p, 2, P), _arg(p, 3, ctypes.c_uint64)) == \
        (0x1100, 17, 0x2200, 2**40 + 5)
    p = c1["params"]
    assert (_arg(p, 0, P), _arg(p, 1, ctypes.c_int32), _arg(p, 2, P)) == (0x4000, 99, 0x3000)
    assert c1["params"] != c2["params"]
    assert base._cells[1].value == 0     # the Launcher it was bound from is untouched


def test_bound_launch_errors(fake, monkeypatch):
    monkeypatch.setattr(L, "_current_raw_stream", lambda dev: 0)
    base = L.Launcher(_function(), ("ptr", "i32"))
    with pytest.raises(ValueError, match="varying position 1 is not a 'ptr'"):
        base.bind(1, 32, 0, (0, 1), varying=(1,))
    with pytest.raises(TypeError, match="expected 2 kernel arguments"):
        base.bind(1, 32, 0, (0,), varying=(0,))
    b = base.bind(1, 32, 0, (0, 3), varying=(0,))
    fake.results = [700]               # CUDA_ERROR_ILLEGAL_ADDRESS
    with pytest.raises(CudaError, match=r"cuLaunchKernel of humming_test_fast \[sm_90a\] failed: 700"):
        b(0x10)
    assert [c["kind"] for c in fake.calls] == ["ex"]


def test_bound_launch_without_the_direct_path(monkeypatch):
    monkeypatch.setattr(L, "_current_raw_stream", lambda dev: 0x77)
    fn = _function(path="bindings")
    seen = []
    fn._launch = lambda *a: seen.append(a) or (cuda_driver.CUresult.CUDA_SUCCESS,)
    b = L.Launcher(fn, ("ptr", "i32")).bind((2, 1, 1), 32, 0, (0, 5), varying=(0,))
    b(0xABC0)
    assert len(seen) == 1
    a = seen[0]
    assert tuple(int(v) for v in a[1:7]) == (2, 1, 1, 32, 1, 1) and int(a[8]) == 0x77
    assert _arg(int(a[9]), 0, P) == 0xABC0 and _arg(int(a[9]), 1, ctypes.c_int32) == 5
