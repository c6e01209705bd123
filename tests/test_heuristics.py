"""Execution-choice heuristics: deterministic, always fit the arch's shared memory, valid split-K plans."""

import os

import pytest

from vllm_humming.tuning.heuristics import (KernelChoice, M_BUCKETS, all_choices, arch_info, choose_direct_splits,
                                            choose_kernel, choose_splits, wave_cliff_twin,
                                            wide_rows_sibling, wgmma_prefetch_serves)

ARCHS = ["sm_75", "sm_80", "sm_86", "sm_89", "sm_90a", "sm_100a", "sm_120a"]


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("bits", range(1, 9))
@pytest.mark.parametrize("group,zero", [(0, False), (16, False), (128, True), (256, False)])
def test_choice_fits_and_is_deterministic(arch, bits, group, zero):
    info = arch_info(arch)
    for b in M_BUCKETS:
        c = choose_kernel(arch, b, bits, group, zero)
        assert c == choose_kernel(arch, b, bits, group, zero)
        gps = 0 if not group else (1 if group >= c.block_k else c.block_k // group)
        assert c.smem_bytes(bits, gps, zero) <= info.smem_per_block
        assert c.bt >= min(b, 8) or c.bt == 64
        assert c in all_choices(arch, bits, group, zero), "CI compiles every choice the heuristics can make"


def test_session6_decode_rules():
    """Measured in session 6: 8-bit codes at M <= 8 use a two-stage ring; M <= 16 uses 256-row blocks of 16 warps
    (two atom rows per warp, a ring of three) for every format where it fits."""
    assert choose_kernel("sm_90a", 1, 8, 0).short() == "bt8_wn4_tm2_wk1_ak1_s2"
    assert choose_kernel("sm_90a", 1, 4, 128, pipeline="cp_async").short() == "bt8_wn4_tm2_wk1_ak1_s4"
    for bits in (3, 4, 8):
        assert choose_kernel("sm_80", 16, bits, 128).short() == "bt16_wn8_tm2_wk2_ak2_s3"
        # (sm_90a: wgmma from 9 tokens up since session 8, test_session8_narrow_decode_rule)


@pytest.mark.parametrize("n,k", [(6144, 4096), (28672, 4096), (4096, 14336), (200, 8200), (16, 64)])
@pytest.mark.parametrize("m", [1, 3, 16, 33, 64, 100, 4096])
def test_split_plan_covers_k(n, k, m):
    info = arch_info("sm_90a", 132)
    c = choose_kernel("sm_90a", 64 if m > 64 else m, 4, 128, pipeline="cp_async")
    splits, per = choose_splits(c, n, k, m, info, 4)
    k_atoms = -(-k // 64)
    assert splits >= 1 and per % c.atoms_k == 0 or splits == 1
    assert splits * per >= k_atoms and (splits - 1) * per < k_atoms   # every split non-empty, K covered
    base = -(-n // c.block_n) * -(-m // c.bt)
    if c.wgmma:
        # wgmma splits at any M, but never past one wave of the resident slots, and keeps >= 4 stages per split
        assert splits == 1 or (base * splits <= 132 * 4 and per >= 4)
    elif m > 64:
        assert splits == 1


def test_wgmma_choices():
    """wgmma kernels: only on sm_90a (the instruction exists nowhere else), from 64 tokens up; the short name round
    trips; invalid combinations are refused; the register budget leaves room for 2+ blocks per SM."""
    for arch in ("sm_80", "sm_89", "sm_90", "sm_100a", "sm_120a"):
        assert not any(c.wgmma for c in all_choices(arch, 4, 128))
    assert choose_kernel("sm_90a", 64, 4, 128).wgmma and choose_kernel("sm_90a", 512, 4, 128).wgmma
    assert not choose_kernel("sm_90a", 1, 4, 128).wgmma and choose_kernel("sm_90a", 16, 4, 128).wgmma
    c = KernelChoice(64, 8, 1, 1, 1, 6, mma="wgmma")
    assert c.short() == "bt64_wn8_tm1_wk1_ak1_s6_wgmma" and KernelChoice.parse(c.short()) == c
    assert c.min_blocks == 2 and KernelChoice(64, 8, 1, 1, 1, 6).min_blocks == 0
    assert KernelChoice(256, 8, 1, 1, 1, 3, mma="wgmma").bt == 256
    for bad in (dict(bt=64, warps_n=8, tiles_m=1, warps_k=1, atoms_k=4, stages=4),     # four atoms per stage
                dict(bt=64, warps_n=6, tiles_m=1, warps_k=1, atoms_k=1, stages=4),     # not whole warpgroups
                dict(bt=64, warps_n=4, tiles_m=1, warps_k=4, atoms_k=2, stages=4),     # more K-warps than atoms
                dict(bt=64, warps_n=4, tiles_m=1, warps_k=2, atoms_k=1, stages=4),
                dict(bt=64, warps_n=4, tiles_m=1, warps_k=2, atoms_k=2, stages=4, stream_k=True),
                dict(bt=64, warps_n=4, tiles_m=1, warps_k=2, atoms_k=2, stages=4, cluster=2),
                dict(bt=64, warps_n=4, tiles_m=1, warps_k=2, atoms_k=2, stages=4, pipeline="bulk")):
        with pytest.raises(ValueError, match="wgmma"):
            KernelChoice(**bad, mma="wgmma")
    # the staged K-warpgroups (session 56): split-K cp.async grids, one atom of each two-atom stage per warpgroup row
    kwg = KernelChoice(64, 4, 1, 2, 2, 4, mma="wgmma", tma_x=True)
    assert kwg.short() == "bt64_wn4_tm1_wk2_ak2_s4_tma_wgmma" and KernelChoice.parse(kwg.short()) == kwg
    assert kwg.threads == 256 and kwg.reduce_scratch_bytes == 4 * 32 * 8 * 16
    for short in ("bt64_wn4_tm1_wk2_ak4_s3_tma_wgmma", "bt64_wn4_tm1_wk4_ak4_s3_wgmma"):   # four-atom stages
        assert KernelChoice.parse(short).short() == short
    with pytest.raises(ValueError, match="bt"):
        KernelChoice(256, 8, 1, 1, 1, 3)            # 256-token tiles are wgmma-only
    with pytest.raises(ValueError, match="mma"):
        KernelChoice(64, 8, 1, 1, 1, 3, mma="hgmma")
    # stages on 1 KB boundaries plus 1 KB of alignment slack: bt64 x tile 8 KB + 128 rows int4 4 KB + 256 B scales
    assert c.smem_bytes(4, 1, False) == 6 * 13 * 1024 + 1024
    # two atoms per stage (cp.async only): two 8 KB x sub-tiles + two 4 KB atom columns + the scales, on 1 KB boundaries
    assert KernelChoice(64, 8, 1, 1, 2, 4, mma="wgmma").smem_bytes(4, 1, False) == 4 * 25 * 1024 + 1024
    with pytest.raises(ValueError, match="atoms_k"):
        KernelChoice(64, 8, 1, 1, 2, 4, "bulk", "wgmma")
    # four atoms per stage: the bulk kernel with the TMA x tile only (session 52's experiment), not 3
    ak4 = KernelChoice(16, 12, 2, 1, 4, 3, "bulk", "wgmma", tma_x=True)
    assert ak4.short() == "bt16_wn12_tm2_wk1_ak4_s3_tma_bulk_wgmma" and KernelChoice.parse(ak4.short()) == ak4
    assert ak4.block_k == 256 and ak4.runs_shape(4096, 128) and not ak4.runs_shape(4160, 128)
    # a stage: four 2 KB x sub-tiles + four 12 KB atom columns + two 768 B scale groups, on 1 KB boundaries, x3,
    # + the mbarriers, the last-arrival flag and 1 KB of alignment slack
    assert ak4.smem_bytes(4, 2, False, 128) == 3 * 58 * 1024 + 48 + 16 + 1024
    for bad in (dict(atoms_k=4, tma_x=False), dict(atoms_k=3, tma_x=True)):
        with pytest.raises(ValueError, match="atoms_k"):
            KernelChoice(16, 12, 2, 1, bad["atoms_k"], 3, "bulk", "wgmma", tma_x=bad["tma_x"])
    # its K splits are whole stages (a split starting at an odd atom would put two 128-column groups into one stage)
    info = arch_info("sm_90a", 132)
    two = KernelChoice(64, 8, 1, 1, 2, 4, mma="wgmma")
    for n, k, m in ((1000, 1088, 1), (6144, 4096, 64), (4096, 14336, 64), (200, 8200, 17), (300, 192, 1)):
        splits, per = choose_splits(two, n, k, m, info, 2)
        assert per % 2 == 0 and splits * per >= -(-k // 64) and (splits - 1) * per < -(-k // 64)


def test_forced_choice_reasons_name_the_problem():
    """A forced choice the device or the layer cannot run is refused before compiling, naming choice and device."""
    wg = KernelChoice(64, 8, 1, 1, 1, 6, mma="wgmma")
    assert wg.unsupported_reason("sm_90a", 4096, 128) == ""
    for arch in ("sm_80", "sm_90", "sm_100a"):
        assert f"sm_90a (H100/H200) only, the device is {arch}" in wg.unsupported_reason(arch, 4096, 128)
    bulk = KernelChoice(8, 4, 2, 1, 2, 8, "bulk")
    assert "needs sm_90+, the device is sm_89" in bulk.unsupported_reason("sm_89", 4096, 128)
    assert "cannot run K=1088" in bulk.unsupported_reason("sm_90a", 1088, 128)
    assert KernelChoice(8, 4, 2, 1, 1, 4).unsupported_reason("sm_75", 1088, 128) == ""


def test_wgmma_splits_fill_one_wave():
    info = arch_info("sm_90a", 132)
    c = KernelChoice(128, 8, 1, 1, 1, 5, mma="wgmma")
    # 6144x4096 at M=256: 48 x 2 tiles, 2 blocks per SM -> 264 slots -> 2 splits (3 would start a second wave)
    assert choose_splits(c, 6144, 4096, 256, info, 2)[0] == 2
    # 28672x4096: 224 x 2 tiles already fill the slots
    assert choose_splits(c, 28672, 4096, 256, info, 2)[0] == 1


def test_default_prefill_m():
    from vllm_humming.tuning.heuristics import default_prefill_m

    assert default_prefill_m("sm_90a") == 513 and default_prefill_m("sm_80") == 128
    # session 18: codes of <= 4 bits run the 256-token tiles up to 2047 tokens on sm_90a
    assert default_prefill_m("sm_90a", 4) == default_prefill_m("sm_90a", 3) == 2048
    # session 26: 8-bit codes take expand + cuBLAS from 513 tokens on sm_90a
    assert default_prefill_m("sm_90a", 8) == 513 and default_prefill_m("sm_89", 4) == 128


def test_eight_bit_large_m_rules():
    """Session 26 (sm_90a): 8-bit codes, integer and float, run the 128-row x 256-token TMA tile at 129-256 tokens on
    wide layers and layers with K > 4096 (narrow K <= 4096 layers keep the bulk kernel), the bulk kernel at 257-384,
    the tile again at 385-512 on every layer, and expand + cuBLAS from 513 (no kernel bucket past 512 by default).
    Other archs and codes of <= 4 bits are untouched."""
    from vllm_humming.tuning.heuristics import choose_kernel

    tile = KernelChoice(256, 8, 1, 1, 1, 4, mma="wgmma", tma_x=True)
    for fam in (False, True):
        def pick(m, n, k):
            return choose_kernel("sm_90a", m, 8, 0, False, 132, k=k, n=n, float_family=fam)
        assert pick(256, 28672, 4096) == tile and pick(200, 4096, 14336) == tile
        assert pick(256, 6144, 4096).bulk                       # narrow, K <= 4096
        assert all(pick(m, n, k).bulk for m in (300, 384) for n, k in ((6144, 4096), (28672, 4096), (4096, 14336)))
        assert all(pick(m, n, k) == tile for m in (400, 512) for n, k in ((6144, 4096), (28672, 4096), (4096, 14336)))
        assert pick(64, 28672, 4096) != tile and pick(128, 28672, 4096) != tile
    assert choose_kernel("sm_90a", 512, 4, 128, False, 132, k=4096, n=6144) != tile
    assert choose_kernel("sm_80", 512, 8, 0, False, 108, k=4096, n=6144) != tile


def test_float_decode_rules():
    """Session 27 (sm_90a): fp8 weight-only (float 8-bit codes) at 1-8 tokens take the direct wgmma blocks on wide or
    K > 4096 layers -- the 224-row mma.sync blocks on wide layers with group / block scales --, NVFP4 (16-column
    groups) the narrow layers' direct wgmma blocks and the 224-row blocks on wide layers; at 9-16 tokens both take the
    cp.async wgmma tile.  MXFP4, integer codes, other archs and pipelines keep their picks, and every new pick is in
    all_choices (CI compiles it)."""
    from vllm_humming.tuning.heuristics import all_choices, choose_kernel

    def pick(m, bits, group, n, k, fam=True, arch="sm_90a", **kw):
        return choose_kernel(arch, m, bits, group, False, 132, k=k, n=n, float_family=fam, **kw).short()

    pair, rows224 = "bt8_wn8_tm1_wk1_ak256_s4_direct_wgmma", "bt8_wn14_tm1_wk2_ak256_s4_direct"
    m16 = "bt16_wn8_tm2_wk1_ak1_s4_wgmma"
    for m in (1, 8):
        assert pick(m, 8, 0, 28672, 4096) == pick(m, 8, 0, 4096, 14336) == pair        # fp8 channel
        assert pick(m, 8, 128, 28672, 4096) == rows224 and pick(m, 8, 128, 4096, 14336) == pair   # fp8 blocks
        assert "direct" not in pick(m, 8, 0, 6144, 4096) and "direct" not in pick(m, 8, 128, 6144, 4096)
        assert pick(m, 4, 16, 6144, 4096) == pair and pick(m, 4, 16, 28672, 4096) == rows224     # NVFP4
        assert "direct" not in pick(m, 4, 16, 4096, 14336)
        assert pick(m, 4, 32, 28672, 4096) == "bt8_wn4_tm2_wk1_ak1_s4"                           # MXFP4: unchanged
        assert pick(m, 8, 128, 18432, 4096) == pair      # 18432 rows in 224-row blocks leave a third of the SMs idle
    for n, k in ((6144, 4096), (28672, 4096), (4096, 14336)):
        assert pick(16, 8, 0, n, k) == pick(16, 8, 128, n, k) == pick(16, 4, 16, n, k) == m16
        assert pick(16, 4, 32, n, k).endswith("direct_wgmma")                                    # MXFP4: unchanged
        assert pick(16, 8, 0, n, k, fam=False) != m16 or n == 28672                              # int8: unchanged
    assert "direct" not in pick(1, 8, 0, 28672, 4096, arch="sm_80")
    assert pick(1, 8, 0, 28672, 4096, pipeline="cp_async") == "bt8_wn4_tm2_wk1_ak1_s2"
    for bits, group in ((8, 0), (8, 128), (4, 16)):
        every = {c.short() for c in all_choices("sm_90a", bits, group, float_family=True)}
        assert {pair, m16} <= every and (rows224 in every) == bool(group)


def test_nvfp4_rules_at_33_to_64_tokens():
    """Session 30 (sm_90a): NVFP4 (4-bit floats with 16-column groups) at 33-64 tokens takes 128-row tiles of two-atom
    stages on wide layers and one-atom stages on narrow K <= 4096 layers; K > 4096 layers, MXFP4 and int4 keep
    their tiles; every new pick is in all_choices (CI compiles it)."""
    from vllm_humming.tuning.heuristics import all_choices, choose_kernel

    def pick(m, bits, group, n, k, fam=True):
        return choose_kernel("sm_90a", m, bits, group, False, 132, k=k, n=n, float_family=fam).short()

    wide, narrow = "bt64_wn8_tm1_wk1_ak2_s4_tma_wgmma", "bt64_wn8_tm1_wk1_ak1_s4_tma_wgmma"
    for m in (33, 48, 64):
        assert pick(m, 4, 16, 28672, 4096) == wide and pick(m, 4, 16, 6144, 4096) == narrow
        assert pick(m, 4, 16, 4096, 14336) == "bt64_wn8_tm1_wk1_ak2_s4_tma_wgmma"
        assert pick(m, 4, 32, 28672, 4096) == "bt64_wn8_tm2_wk1_ak2_s4_tma_wgmma"    # MXFP4: unchanged
        # (int4: the whole-tile bulk tile since session 52, test_plan.test_wide_bulk_64_rule)
        assert pick(m, 4, 128, 28672, 4096, fam=False) == "bt64_wn8_tm2_wk1_ak2_s5_tma_bulk_wgmma"
        assert pick(m, 4, 32, 6144, 4096) == "bt64_wn8_tm1_wk1_ak2_s4_tma_wgmma"
    assert pick(65, 4, 16, 6144, 4096) != narrow and pick(32, 4, 16, 6144, 4096) != narrow
    every = {c.short() for c in all_choices("sm_90a", 4, 16, float_family=True)}
    assert {wide, narrow} <= every


def test_float_zero_points_take_the_tma_two_atom_tile():
    """Codes of <= 4 bits with float zero points and groups of < 128 columns, 257-384 tokens (385-512: the 256-token
    tile, like every code of <= 4 bits).  Session 27
    (FLOAT_ZERO_ONE_ATOM) found that ptxas serializes the wgmmas of the two-atom 256-row stream-K tile for them (an
    out-of-line call; session 28 measured it 50-60x slower on the H200); session 28 (FLOAT_ZERO_TMA): its TMA-x twin
    compiles clean for all of them but uint3 g32 and beats the one-atom tile, so every layer takes it, wide ones too;
    uint3 g32 keeps the one-atom tile.  Integer zero points, 128-column groups and <= 256 tokens keep their picks
    (test_gemm_compile checks every pick for serialization on every arch)."""
    from vllm_humming.tuning.heuristics import choose_kernel

    def pick(m, n, zero, group=32, bits=4):
        return choose_kernel("sm_90a", m, bits, group, zero, 132, k=4096, n=n).short()

    one_atom = "bt128_wn8_tm2_wk1_ak1_s5_sk_wgmma"
    two_atom, two_atom_tma = "bt128_wn8_tm2_wk1_ak2_s3_sk_wgmma", "bt128_wn8_tm2_wk1_ak2_s3_sk_tma_wgmma"
    for m, n in ((300, 28672), (300, 6144), (384, 28672)):   # (every layer takes 256-token tiles at 385-512)
        for group, bits in ((16, 4), (32, 4), (64, 4), (16, 3), (64, 3), (32, 2), (16, 1)):
            assert pick(m, n, 2, group, bits) == two_atom_tma, (m, n, group, bits)
        assert pick(m, n, 2, 32, 3) == one_atom
        for group, bits in ((32, 4), (32, 3)):   # integer / no zero points: the session-16 / 17 picks
            assert pick(m, n, 1, group, bits) == pick(m, n, 0, group, bits) == (two_atom_tma if n < 16384 else two_atom)
        assert pick(m, n, 2, 128) == pick(m, n, 1, 128)
    assert pick(256, 28672, 2) == pick(256, 28672, 1) == "bt256_wn8_tm1_wk1_ak2_s3_tma_wgmma"
    assert pick(128, 28672, 2) == pick(128, 28672, 0)


def test_no_wide_rows_sibling_for_eight_bit_codes():
    """Session 27: the 192-row sibling of the 256-token tile is offered to codes of < 8 bits only (ptxas serializes it
    for 8-bit codes); the stream-K twin stays, and all_choices (CI's compile matrix) follows the same rule."""
    from vllm_humming.tuning.heuristics import all_choices, plan_alternatives

    tile = KernelChoice.parse("bt256_wn8_tm1_wk1_ak1_s4_tma_wgmma")
    assert [t for t, _ in plan_alternatives(tile, 8)] == ["stream_k_twin"]
    assert [t for t, _ in plan_alternatives(tile, 4)] == [t for t, _ in plan_alternatives(tile)] == \
        ["wide_rows", "stream_k_twin"]
    assert not any(c.block_n == 192 and c.bt == 256 for c in all_choices("sm_90a", 8, 0, 0))
    assert any(c.block_n == 192 and c.bt == 256 for c in all_choices("sm_90a", 4, 128, 0))


def test_forced_choice_runs_the_kernel_above_the_prefill_threshold():
    """A layer takes expand + cuBLAS from prefill_m tokens, except in an M bucket whose kernel choice the caller forced
    (tuning sweeps, tests): that bucket runs the forced kernel at any M, and its kernels are among the layer's
    (session 25: the sweep's forced choices at M=1024 on int8 layers had silently timed the prefill path)."""
    from vllm_humming.ops.gemm import GemmLayer
    from vllm_humming.tuning.heuristics import KernelChoice, m_bucket

    layer = GemmLayer.__new__(GemmLayer)      # the bookkeeping only (building a layer needs CUDA)
    layer.prefill_m, layer._forced = 513, {}      # buckets up to 512 tokens run kernels, the last one (513+) does not
    assert not layer.uses_prefill_path(512) and layer.uses_prefill_path(513) and layer.uses_prefill_path(5000)
    assert 1 << 30 not in layer._kernel_buckets() and 512 in layer._kernel_buckets()
    tile = KernelChoice(256, 8, 1, 1, 1, 3, mma="wgmma", tma_x=True)
    layer._forced = {m_bucket(1024): tile}
    assert not layer.uses_prefill_path(1024) and not layer.uses_prefill_path(5000)
    assert 1 << 30 in layer._kernel_buckets()
    layer.prefill_m, layer._forced = 300, {512: tile}   # bucket 385-512 forced: the threshold holds elsewhere
    assert not layer.uses_prefill_path(400) and layer.uses_prefill_path(300) and layer.uses_prefill_path(600)
    assert 512 in layer._kernel_buckets() and 384 in layer._kernel_buckets() and 1 << 30 not in layer._kernel_buckets()


def test_wave_cliff_twin_and_rule():
    from vllm_humming.tuning.heuristics import split_grid_on_wave_cliff

    c = KernelChoice.parse("bt256_wn8_tm1_wk1_ak2_s3_tma_wgmma")
    assert wave_cliff_twin(c) == KernelChoice.parse("bt256_wn8_tm1_wk1_ak2_s3_sk_tma_wgmma")
    for other in ("bt256_wn8_tm1_wk1_ak2_s3_sk_tma_wgmma", "bt128_wn8_tm2_wk1_ak2_s3_tma_wgmma",
                  "bt128_wn8_tm1_wk1_ak1_s4_bulk_wgmma"):
        assert wave_cliff_twin(KernelChoice.parse(other)) is None
    # 6144x4096 at M=1024: 4 x 48 tiles on 132 slots (two waves, the second 45 % full); 28672x4096: 4 x 224
    assert split_grid_on_wave_cliff(192, 132) and not split_grid_on_wave_cliff(896, 132)
    assert not split_grid_on_wave_cliff(128, 132) and split_grid_on_wave_cliff(200, 132)
    # session 19: a one-wave grid is no cliff (6144x4096 at 385-512 tokens: 96 tiles on 132 SMs)
    assert not split_grid_on_wave_cliff(96, 132)


def test_wide_rows_sibling_and_cost_model():
    """Session 19: the 192-row sibling of the 128-row x 256-token split-K tile (three warpgroups, five one-atom
    stages), offered first among a plan's alternatives; the row-wave cost picks it where its grid needs fewer waves of
    work -- 6144x4096 at M=1024 (4 x 32 tiles: one wave, against two waves of 4 x 48) -- and not on 28672x4096 (600
    tiles in 5 waves of 192 rows cost more than 896 in 7 waves of 128) or 4096x14336 (one wave each)."""
    from vllm_humming.tuning.heuristics import plan_alternatives, plan_row_waves, wide_rows_sibling

    c = KernelChoice.parse("bt256_wn8_tm1_wk1_ak2_s3_tma_wgmma")
    sib = wide_rows_sibling(c)
    assert sib.short() == "bt256_wn12_tm1_wk1_ak1_s5_tma_wgmma" and sib.block_n == 192 and sib.threads == 384
    assert [t for t, _ in plan_alternatives(c)] == ["wide_rows", "stream_k_twin"]
    for other in ("bt256_wn8_tm1_wk1_ak2_s3_sk_tma_wgmma", "bt128_wn8_tm2_wk1_ak2_s3_tma_wgmma",
                  "bt256_wn12_tm1_wk1_ak1_s5_tma_wgmma", "bt128_wn8_tm1_wk1_ak1_s4_bulk_wgmma"):
        assert wide_rows_sibling(KernelChoice.parse(other)) is None
    assert plan_alternatives(KernelChoice.parse("bt128_wn8_tm2_wk1_ak2_s3_tma_wgmma")) == []
    assert plan_row_waves(4 * 32, 132, 192, 64) < plan_row_waves(4 * 48, 132, 128, 64)
    assert plan_row_waves(4 * 150, 132, 192, 64) > plan_row_waves(4 * 224, 132, 128, 64)
    assert plan_row_waves(4 * 22, 132, 192, 224) > plan_row_waves(4 * 32, 132, 128, 224)


def test_choice_validation():
    with pytest.raises(ValueError, match="bt"):
        KernelChoice(12, 4, 1, 1, 1, 3)
    with pytest.raises(ValueError, match="atoms_k"):
        KernelChoice(8, 4, 1, 2, 3, 3)
    assert len(all_choices("sm_90a", 4, 128)) >= 3


def test_pipeline_choices_parse_and_fall_back(monkeypatch):
    """Every pipeline's choices round-trip through their short names; an opt-in pipeline that cannot serve a case
    (bulk below sm_90, an M bucket it does not cover, a shared-memory budget it exceeds) falls back to cp.async."""
    from vllm_humming.tuning.heuristics import PIPELINES, KernelChoice, all_choices, choose_kernel

    for arch in ("sm_75", "sm_80", "sm_90a", "sm_120a"):
        for c in all_choices(arch, 4, 128, False):
            assert KernelChoice.parse(c.short()) == c
    assert choose_kernel("sm_80", 8, 4, 128, pipeline="bulk").pipeline == "cp_async"
    assert choose_kernel("sm_90a", 8, 4, 128, pipeline="bulk").pipeline == "bulk"
    assert choose_kernel("sm_90a", 1 << 30, 4, 128, pipeline="direct").pipeline == "cp_async"   # prefill bucket
    assert choose_kernel("sm_90a", 8, 4, 96, k=4096, pipeline="direct").pipeline == "cp_async"  # g96 vs 2^n ranges
    assert choose_kernel("sm_90a", 8, 4, 128, k=1088, pipeline="bulk").pipeline == "cp_async"   # 17 atoms
    monkeypatch.setenv("HUMMING_PIPELINE", "direct")
    assert choose_kernel("sm_90a", 8, 4, 128).pipeline == "direct"
    monkeypatch.setenv("HUMMING_PIPELINE", "nope")
    with pytest.raises(ValueError, match="HUMMING_PIPELINE"):
        choose_kernel("sm_90a", 8, 4, 128)
    assert set(PIPELINES) == {"cp_async", "bulk", "direct"}


def test_debug_defines_are_macro_names(monkeypatch):
    from vllm_humming.desc import DescError, WeightDesc
    from vllm_humming.ops.gemm import format_params, kernel_source

    fp = format_params(WeightDesc.parse("w:uint4b8,s:g128:bfloat16"))
    import torch

    monkeypatch.setenv("HUMMING_DEBUG_DEFINES", "HUMMING_SKIP_MATH, HUMMING_NO_L2_HINT")
    _, src = kernel_source(fp, KernelChoice(8, 4, 2, 1, 1, 3), torch.bfloat16)
    assert "#define HUMMING_SKIP_MATH 1" in src and "#define HUMMING_NO_L2_HINT 1" in src
    monkeypatch.setenv("HUMMING_DEBUG_DEFINES", "X 1\n#include <evil>")
    with pytest.raises(DescError, match="HUMMING_DEBUG_DEFINES"):
        kernel_source(fp, KernelChoice(8, 4, 2, 1, 1, 3), torch.bfloat16)



def test_experiment_knobs_are_validated(monkeypatch):
    """HUMMING_DEBUG_MIN_BLOCKS lands in __launch_bounds__ (hence in the cache key), HUMMING_PDL is 0 or 1, and
    HUMMING_DEBUG_SPLIT_RATIO moves the split-K traffic cap; bad values are clear errors."""
    import torch

    from vllm_humming.desc import DescError, WeightDesc
    from vllm_humming.ops.gemm import format_params, kernel_source, pdl_enabled

    fp = format_params(WeightDesc.parse("w:uint4b8,s:g128:bfloat16"))
    c = KernelChoice(8, 4, 2, 1, 1, 4)
    _, plain = kernel_source(fp, c, torch.bfloat16)
    assert "__launch_bounds__(128)" in plain
    monkeypatch.setenv("HUMMING_DEBUG_MIN_BLOCKS", "6")
    _, src = kernel_source(fp, c, torch.bfloat16)
    assert "__launch_bounds__(128, 6)" in src and src != plain
    for bad in ("0", "x", "33"):
        monkeypatch.setenv("HUMMING_DEBUG_MIN_BLOCKS", bad)
        with pytest.raises(DescError, match="HUMMING_DEBUG_MIN_BLOCKS"):
            kernel_source(fp, c, torch.bfloat16)
    monkeypatch.delenv("HUMMING_DEBUG_MIN_BLOCKS")
    assert pdl_enabled()                       # default on
    monkeypatch.setenv("HUMMING_PDL", "0")
    assert not pdl_enabled()
    monkeypatch.setenv("HUMMING_PDL", "yes")
    with pytest.raises(DescError, match="HUMMING_PDL"):
        pdl_enabled()
    info = arch_info("sm_90a", 132)
    m64 = choose_kernel("sm_80", 64, 4, 128)     # the knob moves the mma.sync kernels' cap (wgmma: WGMMA_PARTIAL_BYTES)
    assert not m64.wgmma
    assert choose_splits(m64, 6144, 4096, 64, info, 1)[0] == 2
    monkeypatch.setenv("HUMMING_DEBUG_SPLIT_RATIO", "1024")    # a stricter cap: no split
    assert choose_splits(m64, 6144, 4096, 64, info, 1)[0] == 1


def test_session7_wide_layers_and_pdl_release(monkeypatch):
    """Large M on wide layers takes 256-row wgmma blocks from 65 tokens (sm_90a only; narrower layers at 65-256 tokens
    keep 128 rows except 129-256 tokens with K <= 4096 and codes of <= 4 bits);
    the early PDL release is asked for only when a cp.async grid fills >= 80 % of the resident slots."""
    import torch

    from vllm_humming.desc import DescError, WeightDesc
    from vllm_humming.ops.gemm import format_params, kernel_source, pdl_early_release
    from vllm_humming.tuning.heuristics import WIDE_N, plan_alternatives

    for bits, group in ((4, 128), (3, 128), (8, 0), (4, 32)):
        for bucket in ((256,) if bits == 8 else (256, 1 << 30)):   # 8-bit codes from 257: bulk (session 12)
            wide = choose_kernel("sm_90a", bucket, bits, group, k=4096, n=28672)
            if bits == 8:   # 8-bit codes at 129-256 on wide layers: three math warpgroups (session 14), the
                # 128-row x 256-token TMA tile since session 26
                assert (wide.wgmma, wide.pipeline, wide.bt, wide.block_n, wide.tma_x) == (True, "cp_async", 256, 128, True)
            else:   # session 18: 128 rows x 256 tokens (m64n256k16); split-K at 129-256 tokens since session 20
                assert (wide.wgmma, wide.bt, wide.tiles_m, wide.block_n, wide.stream_k) == (True, 256, 1, 128, False)
                # ... whose stream-K twin the layer's plan launches on a wave cliff
                assert dict(plan_alternatives(wide))["stream_k_twin"].stream_k
            assert wide in all_choices("sm_90a", bits, group)
        # 129-256 tokens on a narrow layer with K <= 4096: codes of <= 4 bits stream-K over 256-row tiles (session
        # 14), 8-bit codes the bulk kernel's 128-row tiles
        narrow = choose_kernel("sm_90a", 256, bits, group, k=4096, n=6144)
        # (session 16: codes of <= 4 bits take 128-row split-K tiles of two-atom stages there instead)
        assert (narrow.tiles_m, narrow.stream_k, narrow.atoms_k) == ((1, False, 1) if bits == 8 else (1, False, 2))
        assert narrow in all_choices("sm_90a", bits, group)
        for narrow in (choose_kernel("sm_90a", 256, bits, group, k=4096, n=0),
                       choose_kernel("sm_90a", 128, bits, group, k=4096, n=WIDE_N - 16)):
            assert narrow.tiles_m == 1 and narrow.block_n == 128
        # 65-128 tokens on wide layers: the 256-row split-K tiles (session 15), every format
        for m in (65, 100, 128):
            wide = choose_kernel("sm_90a", m, bits, group, k=4096, n=28672)
            assert (wide.wgmma, wide.tiles_m, wide.block_n, wide.stream_k, wide.pipeline) == (True, 2, 256, False,
                                                                                            "cp_async")
            assert wide.atoms_k == (1 if bits == 8 else 2)   # session 16: two-atom stages for <= 4-bit codes
            assert wide in all_choices("sm_90a", bits, group)
        assert choose_kernel("sm_90a", 256, bits, group, n=WIDE_N - 16).tiles_m == 1
        assert not choose_kernel("sm_89", 1 << 30, bits, group, k=4096, n=28672).wgmma
    assert pdl_early_release(896, 924) and pdl_early_release(768, 924) and pdl_early_release(740, 924)
    assert not pdl_early_release(512, 924) and not pdl_early_release(738, 924)
    monkeypatch.setenv("HUMMING_PDL_EARLY_RELEASE", "1")
    assert pdl_early_release(1, 924)
    monkeypatch.setenv("HUMMING_PDL_EARLY_RELEASE", "0")
    assert not pdl_early_release(924, 924)
    monkeypatch.setenv("HUMMING_PDL_EARLY_RELEASE", "early")
    with pytest.raises(DescError, match="HUMMING_PDL_EARLY_RELEASE"):
        pdl_early_release(1, 1)
    fp = format_params(WeightDesc.parse("w:uint4b8,s:g128:bfloat16"))
    _, src = kernel_source(fp, KernelChoice(8, 4, 2, 1, 1, 4), torch.bfloat16)
    assert "int atoms_per_split, int flags)" in src and "K64, atoms_per_split, flags);" in src


def test_split_knobs_reject_bad_values(monkeypatch):
    """HUMMING_DEBUG_SPLIT_RATIO / HUMMING_DEBUG_MAX_SPLITS: a bad value is an error naming the variable and the range;
    MAX_SPLITS caps the mma.sync split count (default 32)."""
    info = arch_info("sm_90a", 132)
    m1 = choose_kernel("sm_90a", 1, 4, 128, pipeline="cp_async")
    assert choose_splits(m1, 4096, 14336, 1, info, 7)[0] == 28
    monkeypatch.setenv("HUMMING_DEBUG_MAX_SPLITS", "16")
    assert choose_splits(m1, 4096, 14336, 1, info, 7)[0] == 16
    for name in ("HUMMING_DEBUG_MAX_SPLITS", "HUMMING_DEBUG_SPLIT_RATIO"):
        for bad in ("0", "-3", "x", "1e3"):
            monkeypatch.setenv(name, bad)
            with pytest.raises(ValueError, match=name):
                choose_splits(m1, 4096, 14336, 1, info, 7)
        monkeypatch.delenv(name)
    assert KernelChoice(128, 8, 2, 1, 1, 4, mma="wgmma").wgmma_step_groups
    assert not KernelChoice(128, 8, 1, 1, 1, 5, mma="wgmma").wgmma_step_groups
    assert not KernelChoice(128, 4, 2, 1, 1, 3).wgmma_step_groups


def test_stream_k_choice_names_and_source():
    """The stream-K schedule is part of the choice's name ("_sk" after the stages), of the generated entry and of the
    kernel name (it is a different kernel); other pipelines refuse it."""
    import torch
    from vllm_humming.desc import WeightDesc
    from vllm_humming.ops.gemm import format_params, kernel_source

    c = KernelChoice(128, 8, 2, 1, 1, 4, mma="wgmma", stream_k=True)
    assert c.short() == "bt128_wn8_tm2_wk1_ak1_s4_sk_wgmma" and KernelChoice.parse(c.short()) == c
    d = KernelChoice(8, 4, 2, 1, 1, 4, stream_k=True)
    assert d.short() == "bt8_wn4_tm2_wk1_ak1_s4_sk" and KernelChoice.parse(d.short()) == d
    assert KernelChoice.parse("bt8_wn4_tm2_wk1_ak1_s4") == KernelChoice(8, 4, 2, 1, 1, 4)
    with pytest.raises(ValueError, match="stream_k"):
        KernelChoice(8, 4, 2, 1, 2, 8, "bulk", stream_k=True)
    fp = format_params(WeightDesc.parse("w:uint4b8,s:g128:bfloat16"))
    name_sk, src_sk = kernel_source(fp, d, torch.bfloat16)
    name, src = kernel_source(fp, KernelChoice(8, 4, 2, 1, 1, 4), torch.bfloat16)
    assert "humming::gemm_wna16<Cfg, true>(x, w," in src_sk and "humming::gemm_wna16<Cfg>(x, w," in src
    assert name_sk != name


def test_session8_narrow_decode_rule():
    """Measured in session 8: at M <= 8 narrow layers (N < WIDE_N) with channel scales or >= 128-column groups take
    two K-warps over two-atom stages (a ring of three for 8-bit codes); wide layers, N unknown (0) and 32-column groups
    (MXFP4) keep one-warp stages.  (sm_90a's cp.async kernels; session 9 moved some of these cases to the direct
    kernel: test_session9_direct_rules.)"""
    from vllm_humming.tuning.heuristics import WIDE_N

    def cp(bucket, bits, group, n=0):
        return choose_kernel("sm_90a", bucket, bits, group, n=n, pipeline="cp_async").short()

    assert cp(1, 4, 128, 6144) == "bt8_wn4_tm2_wk2_ak2_s4"
    assert cp(8, 3, 128, 4096) == "bt8_wn4_tm2_wk2_ak2_s4"
    assert cp(1, 8, 0, 4096) == "bt8_wn4_tm2_wk2_ak2_s3"
    assert cp(1, 4, 128, WIDE_N) == "bt8_wn4_tm2_wk1_ak1_s4"
    assert cp(1, 4, 128, 0) == "bt8_wn4_tm2_wk1_ak1_s4"
    assert cp(1, 4, 32, 6144) == "bt8_wn4_tm2_wk1_ak1_s4"
    for bits in (3, 4, 8):
        assert cp(16, bits, 128, 6144) == "bt16_wn8_tm2_wk1_ak1_s4_wgmma"
        assert cp(9, bits, 128) == "bt16_wn8_tm2_wk1_ak1_s4_wgmma"
    for bits, group in ((4, 128), (8, 0)):
        assert choose_kernel("sm_90a", 1, bits, group, n=6144) in all_choices("sm_90a", bits, group)


def test_session9_direct_rules(monkeypatch):
    """sm_90a takes the direct kernel where session 9 measured it faster; other archs and HUMMING_PIPELINE=cp_async
    keep the cp.async kernels; every default is in all_choices (CI compiles it).  (The wide int4 layers' 9-16-token
    bulk rule of session 47 is off here: test_plan.py::test_wide_decode_bulk_switch covers it.)"""
    from vllm_humming.tuning.heuristics import WIDE_N
    monkeypatch.setenv("HUMMING_WIDE_DECODE_BULK", "0")

    def pick(bucket, bits, n, k, flt=False, arch="sm_90a", group=128):
        return choose_kernel(arch, bucket, bits, group, k=k, n=n, float_family=flt).short()

    assert pick(1, 4, 6144, 4096) == "bt8_wn8_tm1_wk1_ak256_s4_direct_wgmma"
    assert pick(1, 4, 16384, 4096) == pick(1, 4, 4096, 14336) == "bt8_wn4_tm2_wk2_ak256_s4_direct"
    assert pick(1, 4, 28672, 4096) == "bt8_wn14_tm1_wk2_ak256_s4_direct"   # session 20: 224-row blocks balance the SMs
    assert pick(1, 8, 28672, 4096, group=0) == "bt8_wn4_tm2_wk1_ak256_s4_direct_wgmma"
    assert not pick(1, 8, 6144, 4096, group=0).endswith("direct_wgmma")
    assert pick(16, 4, 4096, 14336) == "bt16_wn8_tm2_wk1_ak256_s2_direct_wgmma"  # s13
    assert pick(16, 4, 6144, 4096) == "bt16_wn8_tm1_wk1_ak256_s4_direct_wgmma"   # s54: polled (test_narrow16_polled_rule)
    assert pick(16, 3, 6144, 4096) == "bt16_wn8_tm2_wk1_ak256_s2_direct_wgmma"
    assert pick(16, 8, 6144, 4096, group=0) == "bt16_wn8_tm1_wk1_ak256_s4_direct_wgmma"   # int8 keeps 128 rows
    assert pick(16, 4, 28672, 4096) == "bt16_wn8_tm2_wk1_ak256_s2_c2_direct_wgmma"   # session 12 (test_cluster_rules)
    assert pick(16, 8, 28672, 4096, group=0) == "bt16_wn8_tm2_wk1_ak1_s4_wgmma"
    assert pick(16, 4, WIDE_N, 4096, flt=True, group=32) == "bt16_wn8_tm2_wk1_ak256_s2_direct_wgmma"
    assert pick(16, 3, 28672, 4096) == "bt16_wn8_tm2_wk1_ak256_s2_c2_direct_wgmma"
    assert pick(32, 4, 6144, 4096) == "bt32_wn8_tm1_wk1_ak256_s4_direct_wgmma"
    assert pick(32, 4, 28672, 4096) == "bt32_wn8_tm2_wk1_ak2_s4_tma_bulk_wgmma"   # session 46 (decode_bulk_32_choice)
    assert pick(32, 3, 28672, 4096) == "bt32_wn8_tm2_wk1_ak2_s4_tma_bulk_wgmma"
    assert pick(8, 4, 6144, 4096, group=96) == choose_kernel("sm_90a", 8, 4, 96, k=4096, n=6144,
                                                             pipeline="cp_async").short()   # g96: no direct kernel
    for arch in ("sm_80", "sm_89", "sm_120a"):
        assert not any(c.direct for c in [choose_kernel(arch, b, 4, 128, k=4096, n=6144) for b in M_BUCKETS])
    for bits, group, flt in ((4, 128, False), (8, 0, False), (4, 32, True), (3, 128, False)):
        for b in (1, 16, 32):
            for n, k in ((6144, 4096), (28672, 4096), (4096, 14336)):
                c = choose_kernel("sm_90a", b, bits, group, k=k, n=n, float_family=flt)
                assert c in all_choices("sm_90a", bits, group, False, flt)
    # the prefetching wgmma decode choices of small int4 layers (session 42), whichever a layer takes
    for n, k, b in ((512, 2048, 8), (1024, 4096, 8), (1024, 4096, 16), (4096, 4096, 8), (4096, 4096, 16),
                    (8192, 2048, 8), (8192, 2048, 16)):
        c = choose_kernel("sm_90a", b, 4, 128, k=k, n=n)
        assert c.pf and c.wgmma and c in all_choices("sm_90a", 4, 128, False, False), (n, k, b, c.short())
    # ... and of the other codes it serves since session 43 (int3, MXFP4, NVFP4, channel-scaled int8 / fp8), at 1-16
    # tokens; unmeasured codes (int2, 8-bit codes with group scales) never take it
    for bits, group, flt in ((3, 128, False), (4, 32, True), (4, 16, True), (8, 0, False), (8, 0, True)):
        assert wgmma_prefetch_serves(bits, group, flt)
        for n, k, b in ((1024, 4096, 1), (2048, 4096, 8), (4096, 2048, 16), (2048, 4096, 16)):
            c = choose_kernel("sm_90a", b, bits, group, k=k, n=n, float_family=flt)
            assert c.pf == 64 and c.wgmma and c in all_choices("sm_90a", bits, group, False, flt), (bits, n, b, c)
    for bits, group, flt in ((2, 64, False), (8, 64, False), (8, 128, True), (5, 128, False), (6, 32, True)):
        assert not wgmma_prefetch_serves(bits, group, flt)
        assert not any(choose_kernel("sm_90a", b, bits, group, k=4096, n=2048, float_family=flt).pf for b in (8, 16))


def test_session10_rules():
    """Session 10: the narrow-layer direct wgmma decode choices extended to int3 / MXFP4 (M <= 8) and int3 / int8
    (M = 9-16); the bulk wgmma kernel from 65 tokens on narrow layers with K <= 4096 -- on sm_90a only, never under
    HUMMING_PIPELINE=cp_async, and every pick is in all_choices (CI compiles it)."""
    def pick(bucket, bits, n, k, flt=False, arch="sm_90a", group=128, pipeline=""):
        return choose_kernel(arch, bucket, bits, group, k=k, n=n, float_family=flt, pipeline=pipeline).short()

    m1 = "bt8_wn8_tm1_wk1_ak256_s4_direct_wgmma"
    assert pick(1, 3, 6144, 4096) == pick(1, 4, 32, 4096, flt=True, group=32) == m1
    assert pick(8, 4, 6144, 4096, flt=True, group=32) == m1
    assert pick(1, 4, 6144, 4096, flt=True, group=16) == m1               # NVFP4 (g16): session 27
    assert pick(1, 3, 28672, 4096) == pick(1, 4, 28672, 4096, flt=True, group=32) == "bt8_wn4_tm2_wk1_ak1_s4"
    assert not pick(1, 3, 4096, 14336).endswith("direct_wgmma")
    m16 = "bt16_wn8_tm1_wk1_ak256_s4_direct_wgmma"
    assert pick(16, 8, 6144, 4096, group=0) == pick(16, 8, 4096, 14336, group=0) == m16   # int8 (int3 / int4: s13)
    assert pick(16, 8, 28672, 4096, group=0) == "bt16_wn8_tm2_wk1_ak1_s4_wgmma"
    bulk = "bt128_wn8_tm1_wk1_ak1_s6_bulk_wgmma"
    for bucket in (65, 128):   # session 13: the cp.async wgmma kernel with shared split-K sums again
        for bits, group, flt in ((4, 128, False), (3, 128, False), (8, 0, False), (4, 32, True)):
            # two atoms: s16; the x tile through TMA in four stages: s17
            assert pick(bucket, bits, 6144, 4096, flt=flt, group=group) == \
                ("bt128_wn8_tm1_wk1_ak1_s5_wgmma" if bits == 8 else "bt128_wn8_tm1_wk1_ak2_s4_tma_wgmma")
    for bucket in (129, 256):
        for bits, group, flt in ((4, 128, False), (3, 128, False), (8, 0, False), (4, 32, True)):
            # session 14: codes of <= 4 bits take 256-row stream-K tiles here instead (test_session12_large_m_rules)
            assert (pick(bucket, bits, 6144, 4096, flt=flt, group=group) == bulk) == (bits == 8)
            assert pick(bucket, bits, 6144, 4096, flt=flt, group=group, pipeline="cp_async") != bulk
            c = choose_kernel("sm_90a", bucket, bits, group, k=4096, n=6144, float_family=flt)
            assert c in all_choices("sm_90a", bits, group, False, flt)
        assert pick(bucket, 4, 4096, 14336) != bulk and pick(bucket, 4, 28672, 4096) != bulk
        assert pick(bucket, 4, 6144, 4160) != bulk           # K > 4096
        assert not choose_kernel("sm_90", bucket, 4, 128, k=4096, n=6144).wgmma
    assert pick(257, 4, 6144, 4096) == pick(384, 4, 6144, 4096) != bulk       # 257+ tokens: 256-row cp.async tiles
    assert pick(513, 4, 6144, 4096) == pick(2047, 4, 6144, 4096) == "bt256_wn8_tm1_wk1_ak2_s3_tma_wgmma"   # s18
    assert pick(385, 4, 6144, 4096) == pick(512, 4, 6144, 4096) == pick(513, 4, 6144, 4096)   # narrow: s19
    assert pick(385, 4, 28672, 4096) == pick(512, 4, 28672, 4096) == pick(513, 4, 28672, 4096)   # wide: s28
    assert pick(384, 4, 28672, 4096) != pick(385, 4, 28672, 4096)
    assert pick(64, 4, 6144, 4096) == "bt64_wn8_tm1_wk1_ak2_s4_tma_wgmma"  # 64 tokens keep the cp.async kernel
    assert pick(64, 3, 6144, 4096) == "bt64_wn8_tm1_wk1_ak2_s4_tma_wgmma"  # two atoms: int3 since s16 (TMA x: s17)
    assert pick(64, 8, 6144, 4096, group=0) == "bt64_wn8_tm1_wk1_ak1_s6_tma_wgmma"   # int8 keeps one


@pytest.mark.parametrize("choice", ["bt8_wn4_tm2_wk2_ak256_s4_direct", "bt8_wn8_tm1_wk1_ak256_s4_direct_wgmma",
                                    "bt16_wn8_tm1_wk1_ak256_s4_direct_wgmma", "bt8_wn1_tm2_wk8_ak64_s4_direct",
                                    "bt16_wn4_tm1_wk4_ak256_s4_direct_wgmma"])
@pytest.mark.parametrize("n,k", [(6144, 4096), (28672, 4096), (4096, 14336), (200, 8200), (16, 64)])
@pytest.mark.parametrize("m", [1, 5, 16])
@pytest.mark.parametrize("group", [0, 32, 128, 256])
def test_direct_split_plan(choice, n, k, m, group):
    """The direct kernel's ranges: whole units per K-warp (groups start on range boundaries), at most atoms_k atoms,
    every split non-empty, K covered, shared memory within the block limit."""
    from vllm_humming.tuning.heuristics import choose_direct_splits, direct_unit_atoms

    c = KernelChoice.parse(choice)
    if m > c.bt:
        m = c.bt
    info = arch_info("sm_90a", 132)
    splits, per = choose_direct_splits(c, n, k, m, info, 4, group, False)
    k_atoms = -(-k // 64)
    unit = direct_unit_atoms(group)
    assert per % (unit * c.warps_k) == 0 and per <= max(unit * c.warps_k, c.atoms_k)
    assert splits * per >= k_atoms and (splits - 1) * per < k_atoms
    assert c.direct_smem_bytes(per, min(m, c.bt), group, False) <= info.smem_per_block - 1024


def test_direct_wgmma_k_warpgroups_choice():
    """The direct wgmma kernel's K-warpgroups (session 55): warps_k 2 or 4 (the config carries it as atoms per stage,
    which wgmma holds to 1 / 2 / 4), no prefetch, no cluster, no other wgmma pipeline; the shared memory holds the
    reduction scratch after the fp32 tile (DirectWgmmaSmem::kOffRed / kRedBytes), and a 64-row tile's whole K of a
    4096-deep layer is planned as one split (96 blocks on 6144 rows: no cross-block sum)."""
    from vllm_humming.tuning.heuristics import choose_direct_splits

    c = KernelChoice.parse("bt16_wn4_tm1_wk4_ak256_s4_direct_wgmma")
    assert c.threads == 512 and c.short() == "bt16_wn4_tm1_wk4_ak256_s4_direct_wgmma"
    tile = 16 * (64 + 4) * 4
    red = 3 * 4 * 32 * 1 * 2 * 16
    assert c.direct_smem_bytes(64, 16, 128, False) == max(64 * 64 * 16 * 2 + 32 * 64 * 2, tile + red) + 1024
    assert c.direct_smem_bytes(1, 16, 0, False) == tile + red + 1024   # the scratch outgrows one atom of x
    assert choose_direct_splits(c, 6144, 4096, 16, arch_info("sm_90a", 132), 1, 128, False) == (1, 64)
    for bad in ("bt16_wn4_tm1_wk3_ak255_s4_direct_wgmma", "bt16_wn4_tm1_wk8_ak256_s4_direct_wgmma",
                "bt16_wn4_tm1_wk2_ak256_s4_pf64_direct_wgmma", "bt16_wn4_tm1_wk2_ak256_s4_c2_direct_wgmma",
                "bt64_wn4_tm1_wk2_ak2_s4_sk_tma_wgmma", "bt16_wn4_tm2_wk2_ak2_s4_tma_bulk_wgmma"):
        with pytest.raises(ValueError, match="warps_k|K-warp"):
            KernelChoice.parse(bad)


def test_direct_choice_too_big_for_shared_memory_is_refused():
    """A (forced) direct choice whose smallest launch cannot fit a block's shared memory is an error naming the
    choice, the bytes and the limit -- not a failed launch (256 tokens x 256 rows: a 266 KB fp32 epilogue tile)."""
    from vllm_humming.tuning.heuristics import choose_direct_splits

    c = KernelChoice(256, 8, 2, 1, 64, 2, "direct", "wgmma")
    with pytest.raises(ValueError, match=r"bt256_wn8_tm2_wk1_ak64_s2_direct_wgmma needs \d+ bytes.*may take \d+"):
        choose_direct_splits(c, 4096, 4096, 256, arch_info("sm_90a", 132), 1, 128)


def test_direct_cluster_choice():
    """The direct kernel's cluster launch (_c<S>): short names round-trip, only the direct pipeline and 2 / 4 / 8 blocks,
    exactly S splits of whole units per K-warp (the last ones may be short or empty), no more than atoms_k atoms each,
    and shared memory for the fp32 partial tile the cluster reduces."""
    c = KernelChoice.parse("bt8_wn4_tm2_wk2_ak256_s4_c8_direct")
    assert (c.cluster, c.pipeline, c.warps_k) == (8, "direct", 2) and c.short() == "bt8_wn4_tm2_wk2_ak256_s4_c8_direct"
    w = KernelChoice.parse("bt16_wn8_tm1_wk1_ak256_s4_c4_direct_wgmma")
    assert w.cluster == 4 and w.wgmma and KernelChoice.parse(w.short()) == w
    for bad in ("bt8_wn4_tm2_wk2_ak2_s4_c8", "bt8_wn4_tm2_wk2_ak256_s4_c3_direct", "bt8_wn4_tm2_wk2_ak256_s4_c16_direct"):
        with pytest.raises(ValueError, match="cluster"):
            KernelChoice.parse(bad)
    info = arch_info("sm_90a", 132)
    # g128: 2-atom units x 2 K-warps = 4-atom quantum; K = 4096 -> 64 atoms = 8 x 8
    assert c.cluster_range(4096, 128) == 8
    assert choose_direct_splits(c, 6144, 4096, 1, info, 2, 128) == (8, 8)
    # 14336 -> 224 atoms = 8 x 28; 4288 -> 67 atoms: 12 per split (6 splits hold atoms, 2 are empty)
    assert c.cluster_range(14336, 128) == 28 and c.cluster_range(4288, 128) == 12
    # HUMMING_DEBUG_SPLITS does not move a cluster launch
    os.environ["HUMMING_DEBUG_SPLITS"] = "3"
    try:
        assert choose_direct_splits(c, 6144, 4096, 1, info, 2, 128) == (8, 8)
    finally:
        del os.environ["HUMMING_DEBUG_SPLITS"]
    # more than atoms_k atoms per split: the choice does not run the shape, the planner says why
    small = KernelChoice.parse("bt8_wn4_tm2_wk2_ak8_s4_c2_direct")
    assert not small.runs_shape(4096, 128) and small.runs_shape(1024, 128)
    with pytest.raises(ValueError, match="cannot cover K=4096"):
        choose_direct_splits(small, 6144, 4096, 1, info, 2, 128)
    # the partial tile (bt x (block_n + 4) fp32) fits whatever the range's own footprint is
    tiny = KernelChoice.parse("bt16_wn2_tm1_wk1_ak64_s3_c2_direct")
    assert tiny.direct_smem_bytes(2, 1, 128, False) == 16 * (32 + 4) * 4
    assert KernelChoice.parse("bt16_wn2_tm1_wk1_ak64_s3_direct").direct_smem_bytes(2, 1, 128, False) < 16 * 36 * 4
    assert "clusters" in c.unsupported_reason("sm_80", 4096, 128)


def test_cluster_rules(monkeypatch):
    """Sessions 11-12 (HUMMING_CLUSTER, default on): wide int3 / int4 layers at 9-16 tokens run the direct wgmma
    kernel with two K splits reduced by a 2-block cluster (K <= 8192: the 16-row x range in shared memory; not under
    HUMMING_PIPELINE=cp_async); sm_90a only; HUMMING_CLUSTER=0 restores the ticketed choice; the cluster choices are
    in all_choices (CI compiles them).  (Session 12's narrow 33-64-token cluster rule was dropped in session 13; wide
    int4 layers with whole two-atom K stages take the bulk kernel first since session 47 -- off here, see
    test_plan.py::test_wide_decode_bulk_switch.)"""
    monkeypatch.setenv("HUMMING_WIDE_DECODE_BULK", "0")
    c2 = "bt16_wn8_tm2_wk1_ak256_s2_c2_direct_wgmma"
    c64 = "bt64_wn8_tm1_wk1_ak1_s6_c2_wgmma"
    info = arch_info("sm_90a", 132)

    def pick(m, k=4096, n=28672, bits=4, group=128, flt=False, **kw):
        return choose_kernel("sm_90a", m, bits, group, k=k, n=n, float_family=flt, **kw)

    for bits in (3, 4):
        for m in (9, 16):
            c = pick(m, bits=bits)
            assert c.short() == c2 and c in all_choices("sm_90a", bits, 128, False, False)
            assert pick(m, bits=bits, cluster=False).short() != c2
            for k in (4096, 8192):   # every K the rule takes fits shared memory
                splits, per = choose_direct_splits(c, 28672, k, m, info, 1, 128)
                assert splits == 2 and c.direct_smem_bytes(per, m, 128, False) <= info.smem_per_block
    assert pick(16, pipeline="cp_async").short() != c2
    assert pick(16, k=8256).short() != c2 and pick(16, n=6144).short() != c2 and pick(8).short() != c2
    for bits, group, flt in ((8, 0, False), (4, 32, True), (2, 64, False)):   # lost or not measured
        assert pick(16, bits=bits, group=group, flt=flt).short() != c2
    assert not choose_kernel("sm_90", 16, 4, 128, k=4096, n=28672).cluster
    # 33-64 tokens, narrow layers with K <= 4096: session 12's clustered splits lost to the ticketed ones once several
    # blocks share their sums (session 13); the clustered choice stays available as a forced choice
    for bits, group, flt in ((4, 128, False), (3, 128, False), (8, 0, False), (4, 32, True)):
        for m in (33, 64):
            ak = 2 if bits <= 4 else 1   # two atoms per stage: int4 since session 15, int3 / MXFP4 since 16
            assert pick(m, n=6144, bits=bits, group=group, flt=flt).short() == \
                f"bt64_wn8_tm1_wk1_ak{ak}_s{4 if ak == 2 else 6}_tma_wgmma"   # TMA x: s17
            assert pick(m, n=6144, bits=bits, group=group, flt=flt).short() != c64
    os.environ["HUMMING_CLUSTER"] = "0"
    try:
        assert pick(16).short() != c2
    finally:
        del os.environ["HUMMING_CLUSTER"]
    os.environ["HUMMING_CLUSTER"] = "yes"
    try:
        with pytest.raises(ValueError, match="HUMMING_CLUSTER"):
            pick(16)
    finally:
        del os.environ["HUMMING_CLUSTER"]


def test_session12_large_m_rules():
    """Session 12: wide layers at 33-64 tokens take 256-row tiles; 129-256 tokens on narrow layers with K > 4096 the
    three-warpgroup bulk kernel (8-bit integer codes since session 13; the others 256-row cp.async tiles); 257+ tokens 256-row cp.async tiles everywhere, stream-K on wide layers
    (8-bit integer codes: the bulk kernel); session 14's changes at 129-1023 tokens (see below); sm_90a only,
    every pick in all_choices."""
    def pick(m, n, k, bits=4, group=128, flt=False, arch="sm_90a"):
        return choose_kernel(arch, m, bits, group, k=k, n=n, float_family=flt)

    assert M_BUCKETS[-4:] == (256, 384, 512, 1 << 30)
    for bits, group, flt in ((4, 128, False), (3, 128, False), (8, 0, False), (4, 32, True)):
        allc = all_choices("sm_90a", bits, group, False, flt)
        for m in (33, 64):
            c = pick(m, 28672, 4096, bits, group, flt)
            ak = 2 if bits <= 4 else 1   # two atoms per stage: int4 since session 15, int3 / MXFP4 since 16
            # (int4 g128: the same 256-row tile in the whole-tile bulk kernel since session 52)
            want = ("bt64_wn8_tm2_wk1_ak2_s5_tma_bulk_wgmma" if (bits, group, flt) == (4, 128, False)
                    else f"bt64_wn8_tm2_wk1_ak{ak}_s4_tma_wgmma")
            assert c.short() == want and c in allc
            assert pick(m, 4096, 14336, bits, group, flt).tiles_m == 1
        for m in (129, 256):
            c = pick(m, 4096, 14336, bits, group, flt)
            # session 13: 256-row cp.async tiles, but 8-bit integer codes keep the three-warpgroup bulk kernel
            # (session 16: codes of <= 4 bits in stages of two atoms: split-K on narrow layers, stream-K on wide)
            # (session 17: codes of <= 4 bits on narrow layers in 128-row TMA tiles of four two-atom stages)
            # (session 26: 8-bit codes the 128-row x 256-token TMA tile, K > 4096)
            assert c.short() == ("bt256_wn8_tm1_wk1_ak1_s4_tma_wgmma" if bits == 8
                                 else "bt128_wn8_tm1_wk1_ak2_s4_tma_wgmma")
            assert c in allc
            # session 14: narrow K <= 4096 layers stream-K over 256-row tiles for codes of <= 4 bits (session 16:
            # 128-row split-K tiles of two-atom stages); wide layers with 8-bit integer codes the three-warpgroup bulk
            # kernel
            narrow = pick(m, 6144, 4096, bits, group, flt)
            assert narrow in allc
            assert narrow.short() == ("bt128_wn8_tm1_wk1_ak1_s6_bulk_wgmma" if bits == 8
                                      else "bt128_wn8_tm1_wk1_ak2_s4_tma_wgmma")
            assert pick(m, 28672, 4096, bits, group, flt).short() == (
                "bt256_wn8_tm1_wk1_ak1_s4_tma_wgmma" if bits == 8     # (session 26; the bulk kernel before)
                else "bt256_wn8_tm1_wk1_ak2_s3_tma_wgmma" if m > 128   # session 18 (split-K since session 20)
                else "bt128_wn8_tm2_wk1_ak2_s3_sk_wgmma")
        assert pick(128, 4096, 14336, bits, group, flt).short() == (
            "bt128_wn8_tm1_wk1_ak1_s5_wgmma" if bits == 8 else "bt128_wn8_tm1_wk1_ak2_s4_tma_wgmma")
        for m in (257, 384, 385, 512, 513, 1023, 2047):
            for n, k in ((28672, 4096), (6144, 4096), (4096, 14336)):
                c = pick(m, n, k, bits, group, flt)
                assert c in allc
                if bits == 8 and 384 < m <= 512:   # session 26: the 128-row x 256-token TMA tile, every layer
                    assert c.short() == "bt256_wn8_tm1_wk1_ak1_s4_tma_wgmma"
                elif bits == 8:    # 8-bit codes: the bulk kernel (three math warpgroups, session 14) on every layer
                    # (from 513 tokens only where HUMMING_PREFILL_M is raised: expand + cuBLAS since session 26)
                    assert c.short() == "bt128_wn12_tm1_wk1_ak1_s4_bulk_wgmma"
                    assert pick(m, n, k + 32, bits, group, flt).short() != c.short()   # K tail: no bulk
                elif m > 384:   # session 18: 128 rows x 256 tokens, split-K (its stream-K twin on wave
                    # cliffs); from 385 tokens on narrow layers since session 19, on wide ones since session 28
                    assert c.short() == "bt256_wn8_tm1_wk1_ak2_s3_tma_wgmma"
                    assert wave_cliff_twin(c) in allc and wave_cliff_twin(c).stream_k
                    # session 19: and its 192-row sibling where its waves cost less (GemmLayer._plan)
                    assert wide_rows_sibling(c) in allc and wide_rows_sibling(c).block_n == 192
                else:              # five stages since session 14, three of two atoms since session 16
                    # TMA x tiles on narrow layers since session 17
                    assert c.short() == "bt128_wn8_tm2_wk1_ak2_s3_sk" + ("_tma" if n < 16384 else "") + "_wgmma"
        for m in (64, 256, 512):
            assert not pick(m, 28672, 4096, bits, group, flt, arch="sm_90").wgmma


def test_cp_async_wgmma_cluster_choice():
    """The cp.async wgmma kernel's split-K grid as clusters: exactly S splits of ceil(K atoms / S) stages (the last
    may be short or empty); not for mma.sync, stream-K or bulk grids."""
    c = KernelChoice.parse("bt64_wn8_tm1_wk1_ak1_s6_c4_wgmma")
    assert c.cluster == 4 and c.pipeline == "cp_async" and KernelChoice.parse(c.short()) == c
    info = arch_info("sm_90a", 132)
    assert choose_splits(c, 6144, 4096, 64, info, 2) == (4, 16)
    assert choose_splits(c, 6144, 576, 64, info, 2) == (4, 3)        # 9 atoms: 3 + 3 + 3 + an empty split
    assert choose_splits(c, 28672, 4096, 256, info, 2) == (4, 16)    # never capped by the partial-traffic rule
    for bad in ("bt64_wn8_tm1_wk1_ak1_s6_c4", "bt64_wn8_tm1_wk1_ak1_s6_sk_c4_wgmma", "bt64_wn8_tm1_wk1_ak1_s6_c4_bulk_wgmma"):
        with pytest.raises(ValueError, match="cluster"):
            KernelChoice.parse(bad)


def test_splitk_reducers_policy(monkeypatch):
    """Several blocks share a split-K tile's final sum only where they may wait for one another safely: one-wave
    grids, at most half the slots waiting, 16+ token tiles on the ticket path (vllm_humming.ops.gemm)."""
    from vllm_humming.ops.gemm import splitk_reducers
    wg = KernelChoice.parse("bt64_wn8_tm1_wk1_ak1_s6_wgmma")
    assert splitk_reducers(wg, 32, 8, 264) == 4          # 4096x14336 M=64: 256 blocks, 96 waiting of 264 slots
    assert splitk_reducers(wg, 48, 5, 264) == 3          # 6144x4096: 48 x 3 = 144 waiting > 132, so 2 wait each
    assert splitk_reducers(wg, 32, 2, 264) == 2          # never more reducers than splits
    assert splitk_reducers(wg, 32, 1, 264) == 1          # no split-K
    assert splitk_reducers(wg, 64, 8, 264) == 1          # two waves: the last arrival may not be resident
    assert splitk_reducers(wg, 200, 2, 264) == 1         # 200 waiting blocks > half the slots
    assert splitk_reducers(KernelChoice.parse("bt8_wn4_tm2_wk2_ak256_s4_direct"), 32, 8, 264) == 1   # 8-token tiles
    assert splitk_reducers(KernelChoice.parse("bt64_wn8_tm1_wk1_ak1_s6_c2_wgmma"), 32, 2, 264) == 1  # cluster sums
    # persistent grids (the launch plan asks for every choice): their split tiles are joined, not reduced
    assert splitk_reducers(KernelChoice.parse("bt128_wn8_tm2_wk1_ak1_s5_sk_wgmma"), 132, 1, 132) == 1
    assert splitk_reducers(KernelChoice.parse("bt128_wn12_tm1_wk1_ak1_s4_bulk_wgmma"), 132, 1, 132) == 1
    monkeypatch.setenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "50")   # MPS: half the SMs may be ours
    assert splitk_reducers(wg, 32, 8, 264) == 1                        # 256 blocks > 132 slots
    assert splitk_reducers(wg, 16, 4, 264) == 4                        # 64 blocks, 48 waiting <= 66
    monkeypatch.setenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "x")
    assert splitk_reducers(wg, 16, 4, 264) == 1
    monkeypatch.delenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE")
    monkeypatch.setenv("HUMMING_SPLITK_REDUCERS", "1")
    assert splitk_reducers(wg, 32, 8, 264) == 1
    monkeypatch.setenv("HUMMING_SPLITK_REDUCERS", "9")
    with pytest.raises(ValueError, match="HUMMING_SPLITK_REDUCERS"):
        splitk_reducers(wg, 32, 8, 264)


def test_splitk_poll_policy(monkeypatch):
    """Session 54: the polled split-K end (plan.splitk_poll_applies; opt-in, HUMMING_SPLITK_POLL=1) only for wgmma kernels on the ticket path whose
    whole grid is resident at once (its static reducers wait for splits that may not have started), and never for
    the MoE layer's plans (plan_launches(polled_ok=False): they keep the ticket path's workspace)."""
    from vllm_humming.ops.plan import FLAG_SPLITK_POLL, describe, plan_launches, splitk_poll_applies
    wg = KernelChoice.parse("bt16_wn8_tm2_wk1_ak256_s2_direct_wgmma")
    assert not splitk_poll_applies(wg, 24, 11, 264)               # off by default (measured no better: s54/b)
    monkeypatch.setenv("HUMMING_SPLITK_POLL", "1")
    assert splitk_poll_applies(wg, 24, 11, 264)                   # 6144x4096 M=16: 264 blocks, 264 slots
    assert not splitk_poll_applies(wg, 24, 12, 264)               # one block more than the slots
    assert not splitk_poll_applies(wg, 24, 1, 264)                # no split-K
    for c in ("bt16_wn4_tm2_wk1_ak2_s4", "bt8_wn4_tm2_wk2_ak256_s4_direct", "bt64_wn8_tm1_wk1_ak1_s6_c2_wgmma",
              "bt128_wn8_tm2_wk1_ak1_s5_sk_wgmma", "bt16_wn12_tm2_wk1_ak2_s4_tma_bulk_wgmma",
              "bt8_wn8_tm1_wk1_ak256_s4_direct_wgmma", "bt256_wn8_tm1_wk1_ak2_s3_tma_wgmma"):
        # (mma.sync, 8-token, cluster, stream-K, bulk, 8-token wgmma, 256-token: POLL_MAX_BT)
        assert not splitk_poll_applies(KernelChoice.parse(c), 8, 4, 264), c
    monkeypatch.setenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "50")
    assert not splitk_poll_applies(wg, 24, 11, 264) and splitk_poll_applies(wg, 12, 11, 264)
    monkeypatch.delenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE")
    monkeypatch.setenv("HUMMING_SPLITK_POLL", "0")
    assert not splitk_poll_applies(wg, 24, 11, 264)
    monkeypatch.setenv("HUMMING_SPLITK_POLL", "1")
    # through the plan: the flag, the plan line, and none for the MoE caller
    from vllm_humming.ops.plan import KernelFit
    info = arch_info("sm_90a", 132)
    fit = KernelFit(wg, 113 * 1024, 128, 2, 2)
    lp = plan_launches(16, 6144, 4096, 4, 128, 0, info, lambda tag: fit)
    assert lp.launches[0].flags & FLAG_SPLITK_POLL and describe(lp).endswith("polled"), describe(lp)
    lp = plan_launches(16, 6144, 4096, 4, 128, 0, info, lambda tag: fit, polled_ok=False)
    assert not lp.launches[0].flags & FLAG_SPLITK_POLL and "polled" not in describe(lp)


def test_narrow16_polled_rule(monkeypatch):
    """Session 54: narrow int4 layers with K <= 4096 at 9-16 tokens take the 128-row direct wgmma tile with the polled
    split-K end (the flag set by the plan for that choice on those layers alone); longer K, int3 and int8 (whose
    narrow default is the same tile) keep the ticket path, MoE experts (bulk_decode=False) their choice.
    HUMMING_NARROW16_POLLED=0 / 1: never / every narrow int3 / int4 layer."""
    from vllm_humming.ops.plan import FLAG_SPLITK_POLL, KernelFit, plan_launches, splitk_poll_applies
    from vllm_humming.tuning.heuristics import NARROW16_POLLED_CHOICE, _direct_defaults
    tm2 = "bt16_wn8_tm2_wk1_ak256_s2_direct_wgmma"
    pc = NARROW16_POLLED_CHOICE
    assert choose_kernel("sm_90a", 16, 4, 128, k=4096, n=6144, sms=132) == pc
    assert choose_kernel("sm_90a", 16, 4, 128, k=14336, n=4096, sms=132).short() == tm2
    assert choose_kernel("sm_90a", 16, 3, 128, k=4096, n=6144, sms=132).short() == tm2
    assert _direct_defaults("sm_90a", 16, 4, False, 4096, 6144, 128, bulk_decode=False, prefetch=False)[0].short() \
        == tm2   # MoE experts
    assert splitk_poll_applies(pc, 48, 5, 264, 4, 4096)
    assert not splitk_poll_applies(pc, 48, 5, 264, 8, 4096)          # int8's narrow default: the ticket path
    assert not splitk_poll_applies(pc, 32, 8, 264, 4, 14336)         # a forced tile on a long layer
    assert not splitk_poll_applies(KernelChoice.parse(tm2), 24, 11, 264, 4, 4096)
    info = arch_info("sm_90a", 132)
    fit = KernelFit(pc, 113 * 1024, 90, 2, 2)
    lp = plan_launches(16, 6144, 4096, 4, 128, 0, info, lambda tag: fit)
    assert lp.launches[0].flags & FLAG_SPLITK_POLL and lp.launches[0].grid == (1, 48, 5), lp.launches[0]
    lp = plan_launches(16, 6144, 4096, 8, 0, 0, info, lambda tag: fit)
    assert not lp.launches[0].flags & FLAG_SPLITK_POLL
    monkeypatch.setenv("HUMMING_NARROW16_POLLED", "0")
    assert choose_kernel("sm_90a", 16, 4, 128, k=4096, n=6144, sms=132).short() == tm2
    assert not splitk_poll_applies(pc, 48, 5, 264, 4, 4096)
    monkeypatch.setenv("HUMMING_NARROW16_POLLED", "1")
    for bits, k in ((3, 4096), (4, 14336)):
        assert choose_kernel("sm_90a", 16, bits, 128, k=k, n=6144, sms=132) == pc
        assert splitk_poll_applies(pc, 48, 5, 264, bits, k)
    monkeypatch.setenv("HUMMING_SPLITK_POLL", "0")    # the explicit knob still wins
    assert not splitk_poll_applies(pc, 48, 5, 264, 4, 4096)


def test_k_warpgroup_tiles_are_choices_not_defaults():
    """Sessions 55-56 built K-warpgroup tiles (direct and staged wgmma) with opt-in rules; both rules lost their bench
    A/B (session 57, H100) and were removed.  The tiles stay execution choices: the planner gives a forced one its
    grid (fewer K splits than the default, none where its tiles fill the SMs), and no layer takes one by default."""
    from vllm_humming.ops.plan import KernelFit, plan_launches
    info = arch_info("sm_90a", 132)
    d16 = KernelChoice.parse("bt16_wn4_tm1_wk4_ak256_s4_direct_wgmma")
    lp = plan_launches(16, 6144, 4096, 4, 128, 0, info, lambda tag: KernelFit(d16, 137 * 1024, 94, 1, 1))
    assert lp.launches[0].grid == (1, 96, 1) and lp.launches[0].ws_numel == 0, lp.launches[0]
    s64 = KernelChoice.parse("bt64_wn4_tm1_wk2_ak2_s4_tma_wgmma")
    assert s64.threads == 256
    fit = KernelFit(s64, s64.smem_bytes(4, 1, False, 128), 95, 2, 2)                 # (ptxas: 95 registers)
    assert plan_launches(64, 6144, 4096, 4, 128, 0, info, lambda tag: fit).launches[0].grid == (1, 96, 2)
    s128 = KernelChoice.parse("bt64_wn8_tm1_wk2_ak2_s4_tma_wgmma")
    assert s128.threads == 512
    fit = KernelFit(s128, s128.smem_bytes(4, 1, False, 128), 101, 1, 1)
    assert plan_launches(64, 6144, 4096, 4, 128, 0, info, lambda tag: fit).launches[0].grid == (1, 48, 2)
    assert plan_launches(64, 4096, 14336, 4, 128, 0, info, lambda tag: fit).launches[0].grid == (1, 32, 4)
    s4a = KernelChoice.parse("bt64_wn4_tm1_wk2_ak4_s3_tma_wgmma")
    fit = KernelFit(s4a, s4a.smem_bytes(4, 2, False, 128), 120, 2, 1)
    assert plan_launches(64, 6144, 4096, 4, 128, 0, info, lambda tag: fit).launches[0].grid == (1, 96, 1)
    for m, n, k in ((9, 6144, 4096), (16, 6144, 4096), (16, 4096, 14336), (48, 6144, 4096), (64, 4096, 14336)):
        for bits in (3, 4):
            c = choose_kernel("sm_90a", m, bits, 128, k=k, n=n, sms=132)
            assert c.wgmma and c.warps_k == 1, (m, n, k, bits, c.short())


def test_wide_decode_blocks_balance_the_sms():
    """Session 20: at M <= 8 a wide 4-bit integer layer takes 224-row decode blocks where they leave the busiest SM
    fewer rows than 128-row blocks do and still keep >= 90 % of the SMs busy (28672 rows on 132 SMs: 128 blocks of 224
    rows vs 224 of 128, of which 92 SMs would stream two); otherwise the 128-row blocks (16384 rows: 128 blocks of
    128 already spread evenly; 18432 rows: 83 blocks of 224 would idle a third of the SMs), and the narrow layers and
    other formats keep their choices.  CI compiles the 224-row choice (all_choices' N = 28672)."""
    wn14 = "bt8_wn14_tm1_wk2_ak256_s4_direct"
    for n, k, want in ((28672, 4096, wn14), (28600, 1088, wn14), (57344, 8192, wn14),
                       (16384, 4096, "bt8_wn4_tm2_wk2_ak256_s4_direct"), (18432, 7168, "bt8_wn4_tm2_wk2_ak256_s4_direct"),
                       (4096, 14336, "bt8_wn4_tm2_wk2_ak256_s4_direct"),
                       (6144, 4096, "bt8_wn8_tm1_wk1_ak256_s4_direct_wgmma")):
        assert choose_kernel("sm_90a", 1, 4, 128, k=k, n=n, sms=132).short() == want, (n, k)
    # 114 SMs (H100 PCIe): 28672 rows = 128 blocks of 224 -> two rounds on 14 SMs, 448 rows > 2 x 128
    assert choose_kernel("sm_90a", 1, 4, 128, k=4096, n=28672, sms=114).short() == "bt8_wn4_tm2_wk2_ak256_s4_direct"
    assert choose_kernel("sm_90a", 1, 3, 128, k=4096, n=28672, sms=132).block_n != 224       # int3: unmeasured
    assert choose_kernel("sm_90a", 1, 4, 32, k=4096, n=28672, sms=132, float_family=True).block_n != 224   # MXFP4
    assert choose_kernel("sm_80", 1, 4, 128, k=4096, n=28672, sms=108).block_n != 224        # sm_90a only
    assert KernelChoice.parse(wn14) in all_choices("sm_90a", 4, 128)


def test_dp_tail_split_of_a_grid_with_a_thin_last_wave(monkeypatch):
    """Session 30: a one-split grid of W >= 2 waves whose last wave is at most half full runs as the first row tiles in
    whole waves plus the other row tiles split along K into one wave of blocks (GemmLayer._plan).  28672x4096 at
    385-512 tokens (2 token tiles x 224 row tiles on 132 SMs, 3.39 waves) -> 198 row tiles (396 blocks, 3 waves) +
    26 row tiles x 2 splits (104 blocks); 768 tokens (672 blocks, 5.09 waves) -> 220 + 4 row tiles x 4 splits."""
    from vllm_humming.tuning.heuristics import DP_TAIL_MAX_SPLITS, dp_tail_applies, dp_tail_split, splits_of

    assert dp_tail_split(2, 224, 132, 64, 2) == (198, 2)
    assert dp_tail_split(3, 224, 132, 64, 2) == (220, 4)
    assert dp_tail_split(2, 160, 132, 16, 2) == (132, 2)        # 320 blocks: 2 waves + 56 tiles
    assert dp_tail_split(2, 224, 132, 2, 2) is None             # one stage of K: nothing to split
    assert dp_tail_split(1, 100, 132, 64, 2) is None            # one wave
    assert dp_tail_split(2, 132, 132, 64, 2) is None            # whole waves
    assert dp_tail_split(4, 224, 132, 64, 2) is None            # 896 blocks: the tail fills 79 % of a wave
    assert dp_tail_split(2, 144, 132, 64, 2) is None            # 288 blocks: a wave cliff (the stream-K twin's)
    for m_tiles in range(1, 9):
        for n_tiles in range(1, 700, 7):
            for slots in (114, 132, 264):
                got = dp_tail_split(m_tiles, n_tiles, slots, 64, 2)
                if got is None:
                    continue
                head, splits = got
                blocks = m_tiles * n_tiles
                assert head * m_tiles <= blocks // slots * slots           # the head: whole waves at most
                assert 2 <= splits <= DP_TAIL_MAX_SPLITS
                assert (n_tiles - head) * m_tiles * splits <= slots       # the tail: one wave
    assert splits_of(64, 2, 2) == (2, 32) and splits_of(64, 2, 3) == (3, 22) and splits_of(7, 2, 4) == (2, 4)
    tile = KernelChoice.parse("bt256_wn8_tm1_wk1_ak2_s3_tma_wgmma")
    assert dp_tail_applies(tile) and dp_tail_applies(KernelChoice.parse("bt256_wn12_tm1_wk1_ak1_s5_tma_wgmma"))
    assert not dp_tail_applies(KernelChoice.parse("bt256_wn8_tm1_wk1_ak2_s3_sk_tma_wgmma"))
    assert not dp_tail_applies(KernelChoice.parse("bt128_wn8_tm1_wk1_ak2_s4_tma_wgmma"))
    monkeypatch.setenv("HUMMING_DP_TAIL", "0")
    assert not dp_tail_applies(tile)
    monkeypatch.setenv("HUMMING_DP_TAIL", "yes")
    with pytest.raises(ValueError, match="HUMMING_DP_TAIL must be 0 .* or 1 .*got 'yes'"):
        dp_tail_applies(tile)


def test_sibling_head_split_of_the_wide_layer_at_129_to_256_tokens():
    """Session 30: where dp_tail_split finds nothing, whole waves of the 192-row sibling's tiles before the split tail
    -- 28672 rows at 129-256 tokens on 132 SMs: 132 sibling tiles (25344 rows, one wave) + 26 base tiles x 4 splits
    instead of 224 base tiles in 1.7 waves.  The head ends on a base-tile boundary; layers whose base grid fits one
    wave, or whose sibling grid does not fill one, keep one grid."""
    from vllm_humming.tuning.heuristics import sibling_head_split

    assert sibling_head_split(1, 28672, 128, 192, 132, 132, 64, 2) == (132, 4)
    assert sibling_head_split(1, 28608, 128, 192, 132, 132, 16, 2) == (132, 4)     # odd N (28600), a K tail
    assert sibling_head_split(1, 28672, 128, 192, 132, 132, 4, 2) is None          # two splits: 1.5 + 0.6 >= 2 waves
    assert sibling_head_split(1, 16400, 128, 192, 132, 132, 64, 2) is None         # 129 base tiles: one wave
    assert sibling_head_split(1, 20480, 128, 192, 132, 132, 64, 2) is None         # 107 sibling tiles: no wave
    assert sibling_head_split(1, 28672, 128, 192, 132, 132, 2, 2) is None          # one stage of K
    for n16 in range(16, 80000, 304):
        for m_tiles in (1, 2, 3):
            got = sibling_head_split(m_tiles, n16, 128, 192, 132, 132, 64, 2)
            if got is None:
                continue
            head, splits = got
            assert head * 192 % 128 == 0 and 0 < head * 192 < n16
            assert m_tiles * head <= (m_tiles * -(-n16 // 192)) // 132 * 132
            assert m_tiles * -(-(n16 - head * 192) // 128) * splits <= 132


def test_smem_ring_smaller_than_one_unit_is_refused_with_the_numbers():
    """A "_pfr<KB>" ring that cannot hold one position (or scale unit) per warp is refused on the host, naming the
    choice, the budget and the smallest that works -- not by the kernel's static_assert inside NVRTC."""
    sync = KernelChoice.parse("bt8_wn3_tm1_wk4_ak64_s4_pfr1_direct")   # g128: 2-atom units of 12 warps x 512 B
    with pytest.raises(ValueError, match=r"_pfr1_direct.*2-atom unit.*_pfr12"):
        sync.direct_prefetch_atoms(64, 4, 128)
    assert KernelChoice.parse("bt8_wn3_tm1_wk4_ak64_s4_pfr12_direct").direct_prefetch_atoms(64, 4, 128) == 2
    # (the wgmma kernel's ring is gone since session 41: refused at parse time)
    with pytest.raises(ValueError, match="removed in session 41"):
        KernelChoice.parse("bt16_wn8_tm2_wk1_ak256_s2_pfr4_direct_wgmma")
