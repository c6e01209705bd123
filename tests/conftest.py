"""Shared pytest configuration.

* Hypothesis runs with a modest example budget (the core suite must stay fast on 2 CPU cores) and no deadline
  (a cold torch op can take longer than hypothesis' default 200 ms).  HYPOTHESIS_PROFILE=thorough raises it.
* ``emulated``: the JIT's compile / load / launch routed through the CPU emulation of the CUDA thread model
  (tests/host/emu_launch.py), so the kernel path runs on "cpu" tensors; skips without g++.
* Tests marked ``gpu`` skip where torch sees no CUDA device; tests marked ``vllm`` / ``vllm_cpu`` skip where the
  ``vllm`` package is not importable.  scripts/test.sh deselects those markers in the core stage anyway.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys

import pytest

try:
    from hypothesis import HealthCheck, settings

    settings.register_profile("core", max_examples=40, deadline=None,
                              suppress_health_check=[HealthCheck.too_slow])
    settings.register_profile("thorough", max_examples=500, deadline=None,
                              suppress_health_check=[HealthCheck.too_slow])
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "core"))
except ImportError:  # hypothesis is a test requirement; the property tests import it themselves
    pass


def _cuda_available() -> bool:
    try:
        import torch

        return torch.cuda.is_available()
    except Exception:
        return False


def pytest_collection_modifyitems(config, items):
    has_cuda = None
    has_vllm = None
    for item in items:
        if item.get_closest_marker("gpu") is not None:
            if has_cuda is None:
                has_cuda = _cuda_available()
            if not has_cuda:
                item.add_marker(pytest.mark.skip(reason="needs an NVIDIA GPU (torch.cuda.is_available() is False)"))
        if item.get_closest_marker("vllm") is not None or item.get_closest_marker("vllm_cpu") is not None:
            if has_vllm is None:
                has_vllm = importlib.util.find_spec("vllm") is not None
            if not has_vllm:
                item.add_marker(pytest.mark.skip(reason="needs the vllm package"))


# tests/host: the CPU emulation's helpers (emu_launch.py) import as top-level modules
_HOST = os.path.join(os.path.dirname(__file__), "host")
if _HOST not in sys.path:
    sys.path.insert(0, _HOST)


@pytest.fixture
def emulated(monkeypatch, tmp_path_factory):
    """The kernel path on the CPU emulation (tests/host/emu_launch.py: an sm_80-like "cpu" device with one SM);
    returns the dict of emulated kernels built so far.  The shared libraries are kept per session."""
    if shutil.which("g++") is None:
        pytest.skip("no g++ on this machine")
    import emu_launch

    work = tmp_path_factory.getbasetemp() / "emu"
    os.makedirs(work, exist_ok=True)
    return emu_launch.emulate_jit(monkeypatch, work)


@pytest.fixture(autouse=True)
def _release_cuda_cache_between_gpu_tests(request):
    """Under pytest-xdist several worker processes share the one GPU, and each keeps the blocks its caching allocator
    has freed: a worker that just ran a 28672-row layer holds gigabytes that another worker's big layer then cannot
    get (session 51: 16 out-of-memory failures among 8 workers, all 105 of them passing serially).  After each GPU
    test, hand the cached blocks back to the driver (only where the test initialized CUDA)."""
    yield
    if request.node.get_closest_marker("gpu") is None or "torch" not in sys.modules:
        return
    import torch

    if torch.cuda.is_initialized():
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
