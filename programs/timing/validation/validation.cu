// Kernels written for the hardware validation launches of this directory
// (README.md): the plainest memory-bound and compute-bound shapes, whose
// cycles are set by one mechanism each. The PTX beside this file is NVRTC's
// (`python3 .ci/nvrtc-ptx.py`, see README.md).

// A copy of n4 float4 values, one per thread: DRAM bandwidth, with every
// access a full 128-byte line per quarter warp.
extern "C" __global__ void copy_float4(const float4* __restrict__ in, float4* __restrict__ out,
                                       unsigned int n4) {
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n4) out[i] = in[i];
}

// A copy of n floats by a grid that strides over them, as a persistent
// kernel does: a few blocks per SM, many iterations each.
extern "C" __global__ void copy_grid_stride(const float* in, float* out, unsigned int n) {
  for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    out[i] = in[i];
  }
}

// A transpose of an n x n matrix straight through global memory: reads are
// coalesced, writes are a column each (32 sectors per warp request).
extern "C" __global__ void transpose_naive(const float* in, float* out, int n) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < n && y < n) out[x * n + y] = in[y * n + x];
}

// programs/bench/fmaLoop.kir in CUDA: one chain of `iters` dependent fused
// multiply-adds per thread, so the FMA latency sets the time.
extern "C" __global__ void fma_loop(float* out, int iters) {
  unsigned int gid = blockIdx.x * blockDim.x + threadIdx.x;
  float a = gid * 0.001f, b = 1.0001f, c = 0.5f;
  for (int i = 0; i < iters; i++) a = fmaf(a, b, c);
  out[gid] = a;
}

// Four independent chains per thread: the FMA pipe's issue rate, not its
// latency, sets the time once enough warps are resident.
extern "C" __global__ void fma_loop_ilp4(float* out, int iters) {
  unsigned int gid = blockIdx.x * blockDim.x + threadIdx.x;
  float a0 = gid * 0.001f, a1 = a0 + 1.0f, a2 = a0 + 2.0f, a3 = a0 + 3.0f;
  const float b = 1.0001f, c = 0.5f;
  for (int i = 0; i < iters; i++) {
    a0 = fmaf(a0, b, c);
    a1 = fmaf(a1, b, c);
    a2 = fmaf(a2, b, c);
    a3 = fmaf(a3, b, c);
  }
  out[gid] = a0 + a1 + a2 + a3;
}
