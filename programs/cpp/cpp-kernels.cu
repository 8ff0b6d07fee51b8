// Kernels as C++ programmers write them: templates, C++ linkage, CUDA's
// own headers and one of the user's, printf and assert through <cstdio>
// and <cassert>. Launched by their CUDA names (tests/cuda_sources.rs).
#include <cstdio>
#include <cassert>
#include <cuda_fp16.h>
#include <cooperative_groups.h>
#include "helpers.cuh"

namespace cg = cooperative_groups;

// Each thread scales one element; `shift` may be negative.
template <typename T>
__global__ void scaleShift(T* data, int shift, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = twice(data[i]) + (T)shift;
}
template __global__ void scaleShift<float>(float*, int, unsigned);
template __global__ void scaleShift<int>(int*, int, unsigned);

// A C++ kernel (mangled in PTX): a tile reduction through cooperative
// groups and half precision from cuda_fp16.h.
__global__ void tileSumHalf(const __half* in, float* out) {
  cg::thread_block_tile<32> tile = cg::tiled_partition<32>(cg::this_thread_block());
  float value = __half2float(in[blockIdx.x * blockDim.x + threadIdx.x]);
  for (int offset = 16; offset > 0; offset /= 2) {
    value += tile.shfl_down(value, offset);
  }
  if (tile.thread_rank() == 0) {
    out[(blockIdx.x * blockDim.x + threadIdx.x) / 32] = value;
    assert(value >= 0.0f);
  }
}

// A kernel inside a namespace: `--kernel fx::axpy`, or `--kernel axpy`
// while no other kernel has that name.
namespace fx {
__global__ void axpy(float a, const float* x, float* y) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  y[i] += a * x[i];
}
}  // namespace fx
