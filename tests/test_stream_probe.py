"""tuning.stream_probe: the weight-stream skeletons (stream_probe.cuh) compile, their cases are checked, and on a GPU
they stream every byte (timed on the H200 by the probe's command; NOTES session 49)."""

import pytest
import torch

from vllm_humming.jit import compile_kernel
from vllm_humming.tuning import stream_probe as sp


def test_every_default_case_compiles_for_sm_90a(tmp_path):
    names = set()
    for case in sp.default_cases():
        spec = sp.probe_spec(case, "sm_90a")
        if spec.name not in names:
            names.add(spec.name)
            assert compile_kernel(spec, cache_dir=str(tmp_path)).cubin[:4] == b"\x7fELF"
    assert {"humming_probe_bulk", "humming_probe_ring"} <= names
    assert any(n.startswith("humming_probe_ldg") for n in names)


def test_register_probe_compiles_before_sm_90(tmp_path):
    # probe_ldg is plain loads: any arch; probe_bulk / probe_ring compile everywhere too (a trap below sm_90, never
    # launched there)
    for case in (sp.LdgCase(256, 8, 2), sp.BulkCase(), sp.RingCase()):
        assert compile_kernel(sp.probe_spec(case, "sm_80"), cache_dir=str(tmp_path)).cubin[:4] == b"\x7fELF"


def test_case_names_and_sizes():
    c = sp.BulkCase(16384, 8, 4, 8, 1, 800, 1)
    assert c.name == "bulk_s16k_x8_p4_w8_t1_h800_b1"
    assert c.in_flight_per_sm() == 128 * 1024
    assert sp.bulk_smem_bytes(c) == 8 * 16384 + 8 * 20
    d = sp.BulkCase(16384, 8, 1, 8, 1, 800, 1, 2)
    assert d.name == "bulk_s16k_x8_p1_w8_t1_h800_b1_d2"
    assert any(isinstance(c, sp.BulkCase) and c.dyn for c in sp.default_cases())
    assert sp.LdgCase(256, 8, 2).in_flight_per_sm() == 64 * 1024
    # 24 KB slots do not divide the wide layer: the probe streams whole slots only, and says so in its TB/s
    assert sp.streamed_bytes(sp.BulkCase(24576, 4, 2, 12), sp.SIZES["wide"]) == 2389 * 24576
    assert sp.streamed_bytes(sp.LdgCase(), sp.SIZES["wide"]) == sp.SIZES["wide"]
    r = sp.RingCase(16384, 12, 8, 8, 1, 0, 1)
    assert r.name == "ring_s16k_x12_l8_w8_t1_h0_b1" and r.in_flight_per_sm() == 192 * 1024
    assert sp.bulk_smem_bytes(r) == 12 * 16384 + 12 * 20
    assert any(isinstance(c, sp.RingCase) for c in sp.default_cases())
    # every default case fits an sm_90 SM's 227 KB of shared memory per block, and its blocks per SM together
    for case in sp.default_cases():
        if isinstance(case, (sp.BulkCase, sp.RingCase)):
            assert sp.bulk_smem_bytes(case) * case.blocks_per_sm <= 227 * 1024, case


@pytest.mark.parametrize("case", [sp.BulkCase(16384, 8, 3), sp.BulkCase(100, 2), sp.BulkCase(16384, 8, 1, 0),
                                  sp.BulkCase(16384, 8, 1, 32), sp.LdgCase(100, 8, 1), sp.LdgCase(256, 0, 1),
                                  sp.RingCase(100), sp.RingCase(16384, 8, 0), sp.RingCase(16384, 8, 16, 17),
                                  sp.RingCase(16384, 0), sp.BulkCase(16384, 8, 1, 8, 1, 0, 1, -1),
                                  sp.BulkCase(16384, 8, 1, 8, 3)])
def test_bad_cases_are_refused(case):
    with pytest.raises(ValueError, match="stream_probe"):
        sp.probe_spec(case, "sm_90a")


def test_unknown_size_is_refused(capsys):
    with pytest.raises(SystemExit):
        sp.main(["--sizes", "huge"])
    assert "unknown size" in capsys.readouterr().err


@pytest.mark.parametrize("kw", [dict(sizes=["huge"]), dict(sizes=["wide"], reserve_sms=-1),
                                dict(sizes=["wide"], reserve_sms=True)])
def test_run_refuses_bad_arguments(kw):
    with pytest.raises(ValueError, match="stream_probe"):
        sp.run(sp.default_cases()[:1], **kw)


def test_negative_reservation_is_refused(capsys):
    with pytest.raises(SystemExit):
        sp.main(["--reserve-sms", "-1"])
    assert "--reserve-sms must be >= 0" in capsys.readouterr().err


@pytest.mark.gpu
@pytest.mark.parametrize("case", [sp.LdgCase(256, 8, 2), sp.LdgCase(128, 16, 4), sp.BulkCase(4096, 4, 2, 4, 1, 0, 1),
                                  sp.BulkCase(16384, 8, 1, 8, 1, 300, 2), sp.BulkCase(8192, 3, 4, 12, 1, 0, 1),
                                  sp.RingCase(4096, 4, 2, 4, 1, 0, 1), sp.RingCase(16384, 8, 8, 8, 1, 300, 2),
                                  sp.RingCase(32768, 3, 16, 12, 1, 0, 1), sp.BulkCase(4096, 4, 1, 4, 1, 0, 1, 1),
                                  sp.BulkCase(16384, 8, 1, 8, 1, 300, 2, 2), sp.BulkCase(8192, 3, 2, 12, 1, 0, 1, 5),
                                  sp.BulkCase(16384, 8, 1, 8, 2, 300, 1), sp.RingCase(8192, 4, 4, 8, 2, 300, 1)])
def test_probes_stream_every_byte_once(case):
    """sink[0] = the XOR of every 32-bit word the probe read: equal to the XOR of the whole buffer (random words, a
    fresh buffer per case) exactly when every word was read once.  Two launches (the ring's parities carry across a
    block's slots, not across launches; the dynamic cases' counters must be back at zero after the first)."""
    from vllm_humming.jit import current_arch, load_kernel

    if torch.cuda.get_device_capability()[0] < 9:
        pytest.skip("probe_bulk / probe_ring need sm_90 (bulk copies, mbarrier waits)")
    dev = torch.cuda.current_device()
    nbytes = 3 << 20   # 3 MB: 96 slots of 32 KB, 768 of 4 KB: several per block on 132 SMs
    buf = torch.randint(-2**31, 2**31 - 1, (nbytes // 4,), dtype=torch.int32, device=dev)
    want = 0
    for w in buf.cpu().tolist():
        want ^= w & 0xFFFFFFFF
    fn = load_kernel(compile_kernel(sp.probe_spec(case, current_arch(dev))), dev)
    sms = torch.cuda.get_device_properties(dev).multi_processor_count
    sched = torch.zeros(2, dtype=torch.int64, device=dev)
    for _ in range(2):
        sink = torch.zeros(8, dtype=torch.int32, device=dev)
        sp._launcher(case, fn, buf.view(torch.uint8), sink, sms, sched)()
        torch.cuda.synchronize()
        assert int(sink[0]) & 0xFFFFFFFF == want, case.name
        assert sched.tolist() == [0, 0], case.name
        ghz = sp.sm_clock_ghz(case, sink)   # block 0's SM cycles per ns: a real clock rate, or None (register probe)
        assert (ghz is None) == isinstance(case, sp.LdgCase) and (ghz is None or 0.2 < ghz < 3.5), (case.name, ghz)
