// Microbenchmark of __syncthreads(): a loop of nothing but barriers, 8 per iteration, for blocks of 32 to 1,024 threads, timed by clock64() around its loop.
//
// The conventions (clocks, two rounds, sink) are those of fma.cu. The block
// size comes from the launch; the time per barrier is the block's cycles
// (max end - max start over its warps) divided by 8 * iterations.

// Writes a warp's start and end clocks, from its lane 0.
__device__ __forceinline__ void recordClocks(unsigned long long* clocks, long long start, long long stop) {
  unsigned warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  if ((threadIdx.x & 31) == 0) {
    clocks[2 * warp] = start;
    clocks[2 * warp + 1] = stop;
  }
}

// 8 block barriers per iteration.
extern "C" __global__ void syncthreadsLoop(unsigned long long* clocks, unsigned* sink, int iterations) {
  long long start = 0;
  long long stop = 0;
  int done = 0;
#pragma unroll 1
  for (int round = 0; round < 2; ++round) {
    __syncthreads();
    start = clock64();
#pragma unroll 1
    for (int i = 0; i < iterations; ++i) {
#pragma unroll
      for (int k = 0; k < 8; ++k) {
        __syncthreads();
      }
      ++done;
    }
    stop = clock64();
  }
  sink[blockIdx.x * blockDim.x + threadIdx.x] = done;
  recordClocks(clocks, start, stop);
}
