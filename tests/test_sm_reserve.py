"""tuning.sm_reserve (hold SMs idle while timing) and HUMMING_DEBUG_SMS (the SM count layers plan for)."""

import types

import pytest
import torch

from vllm_humming.desc import DescError
from vllm_humming.jit import KernelSpec, compile_kernel
from vllm_humming.ops import gemm
from vllm_humming.tuning.sm_reserve import RESERVE_KERNEL_SOURCE, reserve_sms


@pytest.mark.parametrize("arch", ["sm_75", "sm_80", "sm_90a", "sm_120a"])
def test_reserve_kernel_compiles(arch, tmp_path):
    art = compile_kernel(KernelSpec(name="humming_sm_reserve", source=RESERVE_KERNEL_SOURCE, arch=arch),
                         cache_dir=str(tmp_path))
    assert art.cubin[:4] == b"\x7fELF"


def test_reserving_no_sms_needs_no_gpu():
    with reserve_sms(0) as n:
        assert n == 0


@pytest.mark.parametrize("kw", [dict(n=-1), dict(n=2.5), dict(n="40"), dict(n=True), dict(n=0, sleep_ns=-1),
                                dict(n=0, timeout_s=0)])
def test_reserve_refuses_bad_arguments(kw):
    with pytest.raises(ValueError, match="reserve_sms"):
        with reserve_sms(**kw):
            pass


def test_reserve_refuses_a_cpu_device():
    with pytest.raises(DescError, match="reserve_sms"):
        with reserve_sms(4, device="cpu"):
            pass


def test_debug_sms_override(monkeypatch):
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda dev: types.SimpleNamespace(multi_processor_count=132))
    monkeypatch.delenv("HUMMING_DEBUG_SMS", raising=False)
    assert gemm._device_sms(0) == 132
    monkeypatch.setenv("HUMMING_DEBUG_SMS", "92")
    assert gemm._device_sms(0) == 92
    for bad in ("0", "133", "x"):
        monkeypatch.setenv("HUMMING_DEBUG_SMS", bad)
        with pytest.raises(DescError, match="HUMMING_DEBUG_SMS"):
            gemm._device_sms(0)


@pytest.mark.gpu
def test_reserved_sms_slow_a_compute_bound_kernel():
    """With 40 SMs held, a large matmul (compute-bound) runs on the rest: clearly slower than with none held, and the
    reservation ends (the device synchronises afterwards)."""
    from vllm_humming.tuning import sweep

    total = torch.cuda.get_device_properties(0).multi_processor_count
    held = total // 3
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    times = {}
    try:
        for n in (0, held):
            sweep.RESERVED_SMS = n
            times[n] = sweep.time_graph([lambda: torch.mm(a, a)], replays=5)
    finally:
        sweep.RESERVED_SMS = 0
    torch.cuda.synchronize()
    assert times[held] > 1.2 * times[0], times
