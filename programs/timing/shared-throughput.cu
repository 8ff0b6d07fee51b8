// Microbenchmark of shared-memory load throughput: every warp of a block issues 8 independent loads per iteration, each an N-way bank conflict, and folds them into one value, timed by clock64() around its loop.
//
// The conventions (clocks, two rounds, sink) are those of fma.cu. The 32 KiB
// of shared memory are 8 planes of 1,024 words; load k of an iteration reads
// plane k at word lane * ways, so the 8 loads of a warp are independent and
// each needs `ways` wavefronts. ptxas cannot merge them into wider loads (the
// planes are 4 KiB apart). One warp shows the issue and latency cost of a
// single warp; 32 warps saturate the shared-memory pipe, where the time per
// iteration is the wavefronts the block needs per iteration divided by the
// wavefronts the SM serves per cycle.

// Writes a warp's start and end clocks, from its lane 0.
__device__ __forceinline__ void recordClocks(unsigned long long* clocks, long long start, long long stop) {
  unsigned warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  if ((threadIdx.x & 31) == 0) {
    clocks[2 * warp] = start;
    clocks[2 * warp + 1] = stop;
  }
}

// A volatile shared load, which ptxas keeps and does not merge with others.
__device__ __forceinline__ unsigned loadShared(unsigned address) {
  unsigned value;
  asm volatile("ld.volatile.shared.u32 %0, [%1];" : "=r"(value) : "r"(address));
  return value;
}

// 8 independent loads per iteration per warp, folded into one value after all 8 are issued.
extern "C" __global__ void sharedLoads(unsigned long long* clocks, unsigned* sink, int iterations, unsigned ways) {
  __shared__ unsigned words[8 * 1024];
  for (unsigned i = threadIdx.x; i < 8 * 1024; i += blockDim.x) {
    words[i] = i;
  }
  __syncthreads();
  unsigned lane = threadIdx.x & 31;
  unsigned base = (unsigned)__cvta_generic_to_shared(&words[(lane * ways) & 1023]);
  unsigned acc = 0;
  long long start = 0;
  long long stop = 0;
#pragma unroll 1
  for (int round = 0; round < 2; ++round) {
    __syncthreads();
    start = clock64();
#pragma unroll 1
    for (int i = 0; i < iterations; ++i) {
      unsigned v0 = loadShared(base);
      unsigned v1 = loadShared(base + 4096);
      unsigned v2 = loadShared(base + 2 * 4096);
      unsigned v3 = loadShared(base + 3 * 4096);
      unsigned v4 = loadShared(base + 4 * 4096);
      unsigned v5 = loadShared(base + 5 * 4096);
      unsigned v6 = loadShared(base + 6 * 4096);
      unsigned v7 = loadShared(base + 7 * 4096);
      acc ^= v0 ^ v1 ^ v2 ^ v3 ^ v4 ^ v5 ^ v6 ^ v7;
    }
    stop = clock64();
  }
  sink[blockIdx.x * blockDim.x + threadIdx.x] = acc;
  recordClocks(clocks, start, stop);
}
