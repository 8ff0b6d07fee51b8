// Microbenchmarks of the FP64 pipe: a dependent fma chain on doubles (latency) and 8 independent chains (throughput), each timed by clock64() around its loop.
//
// The conventions (clocks, two rounds, sink) are those of fma.cu.

// Writes a warp's start and end clocks, from its lane 0.
__device__ __forceinline__ void recordClocks(unsigned long long* clocks, long long start, long long stop) {
  unsigned warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  if ((threadIdx.x & 31) == 0) {
    clocks[2 * warp] = start;
    clocks[2 * warp + 1] = stop;
  }
}

// One chain of 16 DFMA per iteration, each on the result of the one before.
extern "C" __global__ void dfmaDependent(unsigned long long* clocks, double* sink, int iterations, double b, double c) {
  double a = threadIdx.x * 0.001;
  long long start = 0;
  long long stop = 0;
#pragma unroll 1
  for (int round = 0; round < 2; ++round) {
    __syncthreads();
    start = clock64();
#pragma unroll 1
    for (int i = 0; i < iterations; ++i) {
#pragma unroll
      for (int k = 0; k < 16; ++k) {
        a = fma(a, b, c);
      }
    }
    stop = clock64();
  }
  sink[blockIdx.x * blockDim.x + threadIdx.x] = a;
  recordClocks(clocks, start, stop);
}

// Eight independent DFMA chains, 4 steps each per iteration (32 DFMA).
extern "C" __global__ void dfmaIndependent(unsigned long long* clocks, double* sink, int iterations, double b, double c) {
  double a0 = threadIdx.x * 0.001;
  double a1 = a0 + 1.0;
  double a2 = a0 + 2.0;
  double a3 = a0 + 3.0;
  double a4 = a0 + 4.0;
  double a5 = a0 + 5.0;
  double a6 = a0 + 6.0;
  double a7 = a0 + 7.0;
  long long start = 0;
  long long stop = 0;
#pragma unroll 1
  for (int round = 0; round < 2; ++round) {
    __syncthreads();
    start = clock64();
#pragma unroll 1
    for (int i = 0; i < iterations; ++i) {
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        a0 = fma(a0, b, c);
        a1 = fma(a1, b, c);
        a2 = fma(a2, b, c);
        a3 = fma(a3, b, c);
        a4 = fma(a4, b, c);
        a5 = fma(a5, b, c);
        a6 = fma(a6, b, c);
        a7 = fma(a7, b, c);
      }
    }
    stop = clock64();
  }
  sink[blockIdx.x * blockDim.x + threadIdx.x] = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
  recordClocks(clocks, start, stop);
}
