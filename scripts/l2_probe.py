"""How fast the H200's L2 feeds the SMs: every program re-reads its own slice of a buffer (L2-resident when the buffer
is small, DRAM when it is large) -- a calibration for the L2 -> SM traffic of the GEMM tiles (NOTES.md, session 19).
Prints GB/s of bytes loaded by the SMs per buffer size."""
import torch, triton, triton.language as tl


@triton.jit
def _reread(p, out, n_per_prog, reps, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    base = p + pid.to(tl.int64) * n_per_prog
    for r in range(reps):
        for i in range(0, n_per_prog, BLOCK):
            acc += tl.load(base + i + tl.arange(0, BLOCK), cache_modifier=".cg")
    tl.store(out + pid * BLOCK + tl.arange(0, BLOCK), acc)


def run(mb, reps, progs=132 * 4, block=1024):
    n = mb * 2**20 // 4 // (progs * block) * (progs * block)
    buf = torch.rand(n, device="cuda")
    out = torch.empty(progs * block, device="cuda")
    per = n // progs
    f = lambda: _reread[(progs,)](buf, out, per, reps, BLOCK=block, num_warps=8, num_stages=4)
    f(); torch.cuda.synchronize()
    ts = []
    for _ in range(5):
        a, b = torch.cuda.Event(True), torch.cuda.Event(True)
        a.record(); f(); b.record(); b.synchronize(); ts.append(a.elapsed_time(b) * 1e-3)
    t = sorted(ts)[2]
    print(f"buffer {mb:5d} MB x {reps:3d} reads: {n * 4 * reps / t / 1e9:8.0f} GB/s ({t * 1e6:.0f} us)")


if __name__ == "__main__":
    for mb, reps in ((8, 200), (16, 100), (24, 80), (40, 50), (2048, 2)):
        run(mb, reps)
