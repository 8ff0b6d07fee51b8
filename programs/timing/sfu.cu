// Microbenchmarks of the special-function unit: ex2.approx and rsqrt.approx, as one dependent chain (latency) and as 8 independent chains (throughput), each timed by clock64() around its loop.
//
// The conventions (clocks, two rounds, sink) are those of fma.cu. The
// instructions are written as inline PTX with `.ftz`, so that each is one
// MUFU instruction in SASS, without the scaling that the non-`.ftz` forms
// add around it for subnormal inputs.

// Writes a warp's start and end clocks, from its lane 0.
__device__ __forceinline__ void recordClocks(unsigned long long* clocks, long long start, long long stop) {
  unsigned warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  if ((threadIdx.x & 31) == 0) {
    clocks[2 * warp] = start;
    clocks[2 * warp + 1] = stop;
  }
}

// 2 to the power x, one MUFU.EX2.
__device__ __forceinline__ float ex2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// 1 / sqrt(x), one MUFU.RSQ.
__device__ __forceinline__ float rsqrt(float x) {
  float y;
  asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// One chain of 16 ex2 per iteration, each on the result of the one before.
// The values grow to infinity and stay there, which does not change the time.
extern "C" __global__ void ex2Dependent(unsigned long long* clocks, float* sink, int iterations) {
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
        a = ex2(a);
      }
    }
    stop = clock64();
  }
  sink[blockIdx.x * blockDim.x + threadIdx.x] = a;
  recordClocks(clocks, start, stop);
}

// Eight independent ex2 chains, 4 steps each per iteration (32 MUFU.EX2).
extern "C" __global__ void ex2Independent(unsigned long long* clocks, float* sink, int iterations) {
  float a0 = threadIdx.x * -0.001f;
  float a1 = a0 - 1.0f;
  float a2 = a0 - 2.0f;
  float a3 = a0 - 3.0f;
  float a4 = a0 - 4.0f;
  float a5 = a0 - 5.0f;
  float a6 = a0 - 6.0f;
  float a7 = a0 - 7.0f;
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
        a0 = ex2(a0);
        a1 = ex2(a1);
        a2 = ex2(a2);
        a3 = ex2(a3);
        a4 = ex2(a4);
        a5 = ex2(a5);
        a6 = ex2(a6);
        a7 = ex2(a7);
      }
    }
    stop = clock64();
  }
  sink[blockIdx.x * blockDim.x + threadIdx.x] = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
  recordClocks(clocks, start, stop);
}

// One chain of 16 rsqrt per iteration; the values converge to 1.
extern "C" __global__ void rsqrtDependent(unsigned long long* clocks, float* sink, int iterations) {
  float a = 2.0f + threadIdx.x;
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
        a = rsqrt(a);
      }
    }
    stop = clock64();
  }
  sink[blockIdx.x * blockDim.x + threadIdx.x] = a;
  recordClocks(clocks, start, stop);
}

// Eight independent rsqrt chains, 4 steps each per iteration (32 MUFU.RSQ).
extern "C" __global__ void rsqrtIndependent(unsigned long long* clocks, float* sink, int iterations) {
  float a0 = 2.0f + threadIdx.x;
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
        a0 = rsqrt(a0);
        a1 = rsqrt(a1);
        a2 = rsqrt(a2);
        a3 = rsqrt(a3);
        a4 = rsqrt(a4);
        a5 = rsqrt(a5);
        a6 = rsqrt(a6);
        a7 = rsqrt(a7);
      }
    }
    stop = clock64();
  }
  sink[blockIdx.x * blockDim.x + threadIdx.x] = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
  recordClocks(clocks, start, stop);
}
