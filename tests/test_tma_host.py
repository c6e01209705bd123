"""CPU: the host side of the TMA x tiles (KernelChoice.tma_x) -- naming, validation, shared-memory plan, the generated
instantiation, the register cap by shared-memory residency, and the per-plan map slot (with a fake encoder: encoding
itself needs the CUDA driver and runs in the GPU suite, tests/test_gemm_pipelines_gpu.py -k tma_x)."""

import ctypes

import pytest
import torch

from vllm_humming.desc import WeightDesc
from vllm_humming.ops.gemm import _arg_types, _ARG_TYPES, format_params, kernel_source, register_min_blocks
from vllm_humming.tuning.heuristics import KernelChoice, all_choices


def test_short_name_round_trip():
    c = KernelChoice(128, 8, 2, 1, 2, 3, mma="wgmma", stream_k=True, tma_x=True)
    assert c.short() == "bt128_wn8_tm2_wk1_ak2_s3_sk_tma_wgmma"
    assert KernelChoice.parse(c.short()) == c
    plain = KernelChoice.parse("bt64_wn8_tm1_wk1_ak2_s4_wgmma")
    assert not plain.tma_x and KernelChoice.parse("bt64_wn8_tm1_wk1_ak2_s4_tma_wgmma").tma_x


@pytest.mark.parametrize("kw", [dict(mma="sync"), dict(mma="sync", pipeline="bulk", atoms_k=1),
                                dict(mma="wgmma", cluster=2), dict(mma="wgmma", pipeline="direct", bt=8, atoms_k=2)])
def test_tma_x_only_on_the_cp_async_and_bulk_wgmma_kernels_without_clusters(kw):
    args = dict(bt=64, warps_n=8, tiles_m=1, warps_k=1, atoms_k=2, stages=4, tma_x=True)
    args.update(kw)
    with pytest.raises(ValueError, match="tma_x"):
        KernelChoice(**args)


def test_bulk_wgmma_takes_two_atoms_only_with_the_tensor_map():
    c = KernelChoice(128, 8, 2, 1, 2, 4, "bulk", "wgmma", tma_x=True)
    assert c.short() == "bt128_wn8_tm2_wk1_ak2_s4_tma_bulk_wgmma" and KernelChoice.parse(c.short()) == c
    with pytest.raises(ValueError, match="atoms_k"):
        KernelChoice(128, 8, 2, 1, 2, 4, "bulk", "wgmma")
    # whole stages only (the bulk kernel copies no partial stage): K = 17 atoms cannot be cut into two-atom stages
    assert c.runs_shape(1152) and not c.runs_shape(1088) and "bulk pipeline cannot run" in c.unsupported_reason("sm_90a", 1088)
    fp = format_params(WeightDesc.parse("w:uint4b8,s:g128:bfloat16"))
    _, src = kernel_source(fp, c, torch.bfloat16)
    assert "humming::gemm_wna16_sm90<Cfg, true>(" in src and ", &x_map)" in src
    assert "const __grid_constant__ humming::TmaMap x_map" in src and "__launch_bounds__(384)" in src
    _, plain = kernel_source(fp, KernelChoice(128, 8, 2, 1, 1, 4, "bulk", "wgmma"), torch.bfloat16)
    assert "x_map" not in plain and "gemm_wna16_sm90<Cfg>(" in plain


def test_smem_plan_adds_one_barrier_and_one_counter_per_slot():
    """TMA x tiles: one 8-byte mbarrier and one 4-byte release counter (decoupled warpgroups, session 20) per ring
    slot after the ring (gemm_wna16.cuh, CpAsyncSmem::kOffBars / kOffCounters)."""
    a = KernelChoice(128, 8, 1, 1, 2, 4, mma="wgmma")
    b = KernelChoice(128, 8, 1, 1, 2, 4, mma="wgmma", tma_x=True)
    assert b.smem_bytes(4, 1, False, 128) == a.smem_bytes(4, 1, False, 128) + (8 + 4) * 4


def test_generated_instantiation_takes_the_map_by_value():
    fp = format_params(WeightDesc.parse("w:uint4b8,s:g128:bfloat16"))
    for sk in (False, True):
        c = KernelChoice(128, 8, 2, 1, 2, 3, mma="wgmma", stream_k=sk, tma_x=True)
        name, src = kernel_source(fp, c, torch.bfloat16)
        assert "const __grid_constant__ humming::TmaMap x_map" in src
        assert f"<Cfg, {'true' if sk else 'false'}, 0, true>" in src and ", &x_map)" in src
        plain_name, plain_src = kernel_source(fp, KernelChoice(128, 8, 2, 1, 2, 3, mma="wgmma", stream_k=sk),
                                              torch.bfloat16)
        assert "x_map" not in plain_src and plain_name != name
    assert _arg_types(c)[:len(_ARG_TYPES)] == _ARG_TYPES
    assert ctypes.sizeof(_arg_types(c)[-1]) == 128 and len(_arg_types(c)) == len(_ARG_TYPES) + 1


def test_register_cap_never_exceeds_what_shared_memory_lets_reside():
    fp = format_params(WeightDesc.parse("w:uint4b8,s:g128:bfloat16"))
    big = KernelChoice(128, 8, 1, 1, 2, 3, mma="wgmma")        # ~124 KB: one block per SM
    assert big.min_blocks == 2 and register_min_blocks(fp, big) == 1
    small = KernelChoice(64, 8, 1, 1, 2, 4, mma="wgmma")       # ~101 KB: two fit
    assert register_min_blocks(fp, small) == small.min_blocks == 2
    _, src = kernel_source(fp, big, torch.bfloat16)
    assert "__launch_bounds__(256, 2)" not in src


def test_heuristics_pick_tma_choices_that_all_choices_lists():
    from vllm_humming.tuning.heuristics import choose_kernel

    for bits, group, flt in ((4, 128, False), (3, 128, False), (4, 32, True), (8, 0, False)):
        allc = all_choices("sm_90a", bits, group, False, flt)
        for m, n, k in ((64, 6144, 4096), (64, 28672, 4096), (256, 4096, 14336), (512, 6144, 4096)):
            c = choose_kernel("sm_90a", m, bits, group, k=k, n=n, float_family=flt)
            assert c in allc
            if m == 64:
                assert c.tma_x
        # never off sm_90a
        assert not choose_kernel("sm_90", 64, bits, group, k=4096, n=6144, float_family=flt).tma_x


class _FakeEncoder:
    def __init__(self):
        self.calls = []

    def encode(self, ptr, rows, cols):
        self.calls.append((ptr, rows, cols))
        return ptr.to_bytes(8, "little") * 16


def test_map_slot_encodes_only_when_x_moves():
    from vllm_humming.jit.tma import MAP_BYTES, XMapSlot, map_arg_type

    cell = map_arg_type()()
    enc = _FakeEncoder()
    slot = XMapSlot(cell, enc, rows=100, cols=4096)
    slot.update(0x1000)
    slot.update(0x1000)
    assert enc.calls == [(0x1000, 100, 4096)] and bytes(cell)[:8] == (0x1000).to_bytes(8, "little")
    slot.update(0x2000)
    slot.update(0x1000)                      # from the slot's cache
    assert [c[0] for c in enc.calls] == [0x1000, 0x2000] and bytes(cell)[:8] == (0x1000).to_bytes(8, "little")
    assert len(bytes(cell)) == MAP_BYTES
    with pytest.raises(ValueError):
        XMapSlot((ctypes.c_ubyte * 64)(), enc, 1, 8)


def test_encoder_input_checks_and_missing_driver():
    from vllm_humming.jit import tma
    from vllm_humming.jit.errors import JitSetupError

    with pytest.raises(ValueError):
        tma.TileMapEncoder(torch.float32, 64)
    try:
        enc = tma.TileMapEncoder(torch.bfloat16, 64)
    except JitSetupError as e:               # no CUDA driver on this machine: a clear setup error
        assert "cuTensorMapEncodeTiled" in str(e)
        return
    with pytest.raises(ValueError, match="16-byte aligned"):
        enc.encode(0x1008 + 2, 4, 64)
