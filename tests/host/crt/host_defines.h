// tests/host/crt/host_defines.h -- stand-in for the CUDA toolkit header of the same name, which the
// nvidia-cuda-runtime wheel does not ship.  It lets g++ compile <cuda_bf16.h> / <cuda_fp16.h> as host code (their
// conversions have host implementations) for the CPU emulation in cuda_emu.h.  Execution-space keywords become
// nothing, __shared__ becomes `static` (one block runs at a time, so function-local statics are the block's shared
// memory).
#pragma once
#define __host__
#define __device__
#define __global__
#define __shared__ static
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__
#define __align__(n) __attribute__((aligned(n)))
#define __builtin_align__(n) __attribute__((aligned(n)))
#define __device_builtin__
#define __cudart_builtin__
#define CUDARTAPI
#define __inline_hint__
#define __DEVICE_FUNCTIONS_DECL__
#define __launch_bounds__(...)
