// Microbenchmark of shared-memory load latency: one warp chases pointers in shared memory, with each load an N-way bank conflict (N = 1, 2, 4, ..., 32), timed by clock64() around its loop.
//
// The conventions (clocks, two rounds, sink) are those of fma.cu. Lane l
// owns the word at index l * ways, which holds its own shared address, so
// every load returns the address of the next load: the chain is one LDS per
// step, no arithmetic between them. With ways = N, lanes l and l + 32 / N
// fall in the same bank at different addresses, so each request needs N
// wavefronts.

// Writes a warp's start and end clocks, from its lane 0.
__device__ __forceinline__ void recordClocks(unsigned long long* clocks, long long start, long long stop) {
  unsigned warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  if ((threadIdx.x & 31) == 0) {
    clocks[2 * warp] = start;
    clocks[2 * warp + 1] = stop;
  }
}

// One dependent chain of 8 shared loads per iteration per lane, for a block of one warp.
extern "C" __global__ void sharedChase(unsigned long long* clocks, unsigned* sink, int iterations, unsigned ways) {
  __shared__ unsigned words[32 * 32];
  unsigned lane = threadIdx.x & 31;
  unsigned* mine = &words[(lane * ways) & 1023];
  unsigned address = (unsigned)__cvta_generic_to_shared(mine);
  *mine = address;
  __syncwarp();
  unsigned p = address;
  long long start = 0;
  long long stop = 0;
#pragma unroll 1
  for (int round = 0; round < 2; ++round) {
    __syncthreads();
    start = clock64();
#pragma unroll 1
    for (int i = 0; i < iterations; ++i) {
#pragma unroll
      for (int k = 0; k < 8; ++k) {
        asm volatile("ld.volatile.shared.u32 %0, [%0];" : "+r"(p));
      }
    }
    stop = clock64();
  }
  sink[blockIdx.x * blockDim.x + threadIdx.x] = p;
  recordClocks(clocks, start, stop);
}
