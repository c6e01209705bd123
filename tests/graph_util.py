"""CUDA-graph capture for the GPU tests: one warm-up call on a side stream (allocations and lazy compiles happen
outside the capture), then ``fn()`` captured.  Returns (graph, the captured call's output)."""

import torch


def capture_cuda_graph(fn):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = fn()
    return g, out
