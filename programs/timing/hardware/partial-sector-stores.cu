// Partial-sector stores, prepared for the next measurement and not run yet
// (docs/timing.md, "Out of sample: an H200": funnel_lop3, wide_arithmetic and
// transpose_naive_2048 store 4 bytes a lane at 32-48-byte strides, and warpsim
// runs them 40-52% fast). 32 stores of 4 bytes a thread at a stride of 4 to 128
// bytes, on 1, 132 and 1,056 blocks: block 0's clock64 cycles and the launch's
// wall time; under ncu, sm__cycles_active.max and the L2's write sectors.
// nvcc -arch=sm_90 -O3 -o partial partial-sector-stores.cu && ./partial
// warpsim (programs/h200.toml, 2026-12-03), block 0's clock64 cycles for the
// strides 4, 8, 16, 32, 64, 128: on 1 block 592, 865, 1,357, 2,357, 2,357,
// 2,357; on 132 blocks 1,860, 3,653, 7,241, 14,424, 14,424, 14,424 (a whole
// sector's cost per sector touched, however few of its bytes are written).
// Stores of 4 bytes a lane at a stride of S bytes: 32 stores a thread.
extern "C" __global__ void strided_stores(unsigned* out, long long* cycles, int stride_words) {
  unsigned* base = out + (size_t)(blockIdx.x * blockDim.x + threadIdx.x) * stride_words;
  size_t step = (size_t)gridDim.x * blockDim.x * stride_words;
  __syncthreads();
  long long start = clock64();
#pragma unroll 4
  for (int k = 0; k < 32; k++) base[k * step] = k;
  __threadfence();
  __syncthreads();
  long long end = clock64();
  if (threadIdx.x == 0) cycles[blockIdx.x] = end - start;
}
#include <cstdio>
#include <algorithm>
int main() {
  int strides[] = {1, 2, 4, 8, 16, 32};
  int grids[] = {1, 132, 1056};
  for (int g : grids) for (int s : strides) {
    size_t words = (size_t)g * 256 * s * 32;
    unsigned* out; long long* cycles;
    cudaMalloc(&out, words * 4); cudaMalloc(&cycles, g * 8);
    cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
    float best = 1e9; long long c0 = 0;
    for (int r = 0; r < 5; r++) {
      cudaEventRecord(a);
      strided_stores<<<g, 256>>>(out, cycles, s);
      cudaEventRecord(b); cudaEventSynchronize(b);
      float ms; cudaEventElapsedTime(&ms, a, b); best = std::min(best, ms);
      cudaMemcpy(&c0, cycles, 8, cudaMemcpyDeviceToHost);
    }
    printf("grid %d stride_bytes %d block0_cycles %lld best_us %.2f\n", g, 4 * s, c0, best * 1000);
    cudaFree(out); cudaFree(cycles);
  }
}
