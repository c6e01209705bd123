"""Background compilation (vllm_humming/jit/background.py), on the CPU: NVRTC needs no GPU."""

from __future__ import annotations

import os

import pytest

import vllm_humming.jit as jit
from vllm_humming.jit import background


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    """Own cache root, neutral JIT env, and a fresh background state per test (the module keeps one per process)."""
    monkeypatch.setenv("HUMMING_CACHE_DIR", str(tmp_path / "jitcache"))
    for v in ("HUMMING_JIT_STRICT", "HUMMING_JIT_VERBOSE", "HUMMING_JIT_BACKGROUND", "HUMMING_JIT_BACKGROUND_JOBS",
              "HUMMING_KERNELS_DIR", "HUMMING_JIT_FAST_COMPILE"):
        monkeypatch.delenv(v, raising=False)
    monkeypatch.setenv("HUMMING_JIT_BACKGROUND", "1")   # (opt-in: default off)
    background.wait_background()
    background._reset_after_fork()
    yield
    background.wait_background()
    background._reset_after_fork()


def _spec(name, body="x[threadIdx.x] *= 2.f;"):
    return jit.KernelSpec(name=name, source=f'extern "C" __global__ void {name}(float* x) {{ {body} }}\n', arch="sm_80")


def test_compiles_into_the_cache_once():
    specs = [_spec("humming_bg_a"), _spec("humming_bg_b")]
    fut = background.compile_in_background(specs + specs[:1])   # (a duplicate in the batch: compiled once)
    assert fut is not None
    arts = fut.result(timeout=120)
    assert [a.spec.name for a in arts] == ["humming_bg_a", "humming_bg_b"]
    assert all(len(a.cubin) > 100 for a in arts)
    # the foreground now finds them on disk: strict mode (a miss would raise) and no NVRTC run
    jit.clear_memory_cache()
    jit.reset_stats()
    for s in specs:
        assert jit.compile_kernel(s, strict=True).cached
    assert jit.stats()["nvrtc_compiles"] == 0
    # submitted once per process: nothing new, no second job
    assert background.compile_in_background(specs) is None
    # a batch with one new spec compiles only that one
    fut = background.compile_in_background(specs + [_spec("humming_bg_c")])
    assert [a.spec.name for a in fut.result(timeout=120)] == ["humming_bg_c"]


def test_off_switch_and_strict_mode(monkeypatch):
    monkeypatch.delenv("HUMMING_JIT_BACKGROUND")   # the default: off
    assert not background.background_enabled()
    assert background.compile_in_background([_spec("humming_bg_default")]) is None
    monkeypatch.setenv("HUMMING_JIT_BACKGROUND", "0")
    assert not background.background_enabled()
    assert background.compile_in_background([_spec("humming_bg_off")]) is None
    monkeypatch.setenv("HUMMING_JIT_BACKGROUND", "1")
    monkeypatch.setenv("HUMMING_JIT_STRICT", "1")   # production: every kernel must already be cached
    assert background.compile_in_background([_spec("humming_bg_strict")]) is None
    monkeypatch.delenv("HUMMING_JIT_STRICT")
    monkeypatch.setenv("HUMMING_JIT_BACKGROUND", "yes")
    with pytest.raises(ValueError, match="HUMMING_JIT_BACKGROUND must be 0 or 1"):
        background.compile_in_background([_spec("humming_bg_bad")])
    monkeypatch.setenv("HUMMING_JIT_BACKGROUND", "1")
    monkeypatch.setenv("HUMMING_JIT_BACKGROUND_JOBS", "x")
    with pytest.raises(ValueError, match="HUMMING_JIT_BACKGROUND_JOBS"):
        background.background_jobs()
    monkeypatch.setenv("HUMMING_JIT_BACKGROUND_JOBS", "3")
    assert background.background_jobs() == 3


def test_a_failure_is_left_to_the_foreground():
    """A kernel that does not compile: the background job ends quietly (result None); the foreground call that needs
    it compiles it again and raises the full error."""
    bad = _spec("humming_bg_broken", body="this is not CUDA;")
    fut = background.compile_in_background([bad, _spec("humming_bg_fine")])
    assert fut.result(timeout=120) is None
    with pytest.raises(jit.CompileError, match="humming_bg_broken"):
        jit.compile_kernel(bad)
    # (the good kernel of the batch was still compiled and cached: compile_many finishes the others)
    jit.clear_memory_cache()
    assert jit.compile_kernel(_spec("humming_bg_fine"), strict=True).cached


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_forked_child_starts_with_no_pool():
    fut = background.compile_in_background([_spec("humming_bg_fork")])
    assert fut is not None and background._pool is not None
    pid = os.fork()
    if pid == 0:   # child: no pool, nothing submitted, so it submits (and compiles) on its own
        ok = background._pool is None and not background._submitted and not background._futures
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    fut.result(timeout=120)


def test_bad_input_is_refused_where_it_is_given():
    """Wrong argument types raise in the caller's thread (the worker thread could only log them), naming what was
    given; a single spec is accepted as a one-spec batch."""
    with pytest.raises(TypeError, match="takes KernelSpecs, got str"):
        background.compile_in_background(["humming_bg_not_a_spec"])
    fut = background.compile_in_background(_spec("humming_bg_single"))
    assert [a.spec.name for a in fut.result(timeout=120)] == ["humming_bg_single"]
    from vllm_humming.ops import compile_in_background

    with pytest.raises(TypeError, match="takes the PreparedLinear that prepare_linear returned, got dict"):
        compile_in_background({})
    # a layer on the plain-torch path (weights on the CPU) has no kernels to compile
    import torch

    from vllm_humming.desc import WeightDesc
    from vllm_humming.ops import prepare_linear
    from vllm_humming.reference import quantize_weight

    pl = prepare_linear(quantize_weight(torch.randn(64, 128), WeightDesc.parse("w:uint4b8,s:g128:bfloat16")))
    assert pl.backend != "kernel" and compile_in_background(pl) is None
