// Microbenchmarks of the FP32 pipe: a dependent fmaf chain (latency) and 4 or 8 independent chains (throughput), each timed by clock64() around its loop.
//
// The kernels of programs/timing/, all but the global chase and the copy,
// follow one convention. Lane 0 of every warp writes the clock64() value
// before and after its timed loop to clocks[2 * w] and clocks[2 * w + 1], w
// being the warp's index in the grid. The timed loop runs twice and the
// second run is the one recorded, so that instruction-cache misses stay out
// of it; a __syncthreads() before each run starts the warps of a block
// together (without it, warps that finished the first run early would start
// the second early too). The result of the arithmetic goes to sink[thread],
// so that the compiler must compute it.
//
// The host (or warpsim) takes max(end) - max(start) over the warps of a
// block as the block's cycles: on an H100 the clock read after
// __syncthreads() does not wait for the barrier to open, so only the last
// warp to arrive reads the time at which the run really starts
// (hardware/micro.py says more).

// Writes a warp's start and end clocks, from its lane 0.
__device__ __forceinline__ void recordClocks(unsigned long long* clocks, long long start, long long stop) {
  unsigned warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  if ((threadIdx.x & 31) == 0) {
    clocks[2 * warp] = start;
    clocks[2 * warp + 1] = stop;
  }
}

// One chain: every fmaf needs the result of the one before it, 16 per
// iteration, so the loop runs at the FMA's latency.
extern "C" __global__ void fmaDependent(unsigned long long* clocks, float* sink, int iterations, float b, float c) {
  float a = threadIdx.x * 0.001f;
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
        a = fmaf(a, b, c);
      }
    }
    stop = clock64();
  }
  sink[blockIdx.x * blockDim.x + threadIdx.x] = a;
  recordClocks(clocks, start, stop);
}

// Four independent chains, 8 steps each per iteration (32 FMAs): with a
// latency of 4 cycles, four chains are just enough to issue one FMA per
// cycle from one warp.
extern "C" __global__ void fmaIndependent4(unsigned long long* clocks, float* sink, int iterations, float b, float c) {
  float a0 = threadIdx.x * 0.001f;
  float a1 = a0 + 1.0f;
  float a2 = a0 + 2.0f;
  float a3 = a0 + 3.0f;
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
        a0 = fmaf(a0, b, c);
        a1 = fmaf(a1, b, c);
        a2 = fmaf(a2, b, c);
        a3 = fmaf(a3, b, c);
      }
    }
    stop = clock64();
  }
  sink[blockIdx.x * blockDim.x + threadIdx.x] = a0 + a1 + a2 + a3;
  recordClocks(clocks, start, stop);
}

// Eight independent chains, 4 steps each per iteration (32 FMAs): twice the
// parallelism the latency needs, so the issue rate alone sets the time.
extern "C" __global__ void fmaIndependent8(unsigned long long* clocks, float* sink, int iterations, float b, float c) {
  float a0 = threadIdx.x * 0.001f;
  float a1 = a0 + 1.0f;
  float a2 = a0 + 2.0f;
  float a3 = a0 + 3.0f;
  float a4 = a0 + 4.0f;
  float a5 = a0 + 5.0f;
  float a6 = a0 + 6.0f;
  float a7 = a0 + 7.0f;
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
        a0 = fmaf(a0, b, c);
        a1 = fmaf(a1, b, c);
        a2 = fmaf(a2, b, c);
        a3 = fmaf(a3, b, c);
        a4 = fmaf(a4, b, c);
        a5 = fmaf(a5, b, c);
        a6 = fmaf(a6, b, c);
        a7 = fmaf(a7, b, c);
      }
    }
    stop = clock64();
  }
  sink[blockIdx.x * blockDim.x + threadIdx.x] = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
  recordClocks(clocks, start, stop);
}
