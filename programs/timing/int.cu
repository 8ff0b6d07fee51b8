// Microbenchmarks of the integer pipes: dependent chains of IMAD, of shifts, of logic (LOP3) and of a mix of the three with IADD3, and the mix as 8 independent chains, each timed by clock64() around its loop.
//
// The conventions (clocks, two rounds, sink) are those of fma.cu. Every
// operation is one inline PTX instruction on run-time operands, so that
// neither NVVM nor ptxas can fold two steps of a chain into one.

// Writes a warp's start and end clocks, from its lane 0.
__device__ __forceinline__ void recordClocks(unsigned long long* clocks, long long start, long long stop) {
  unsigned warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  if ((threadIdx.x & 31) == 0) {
    clocks[2 * warp] = start;
    clocks[2 * warp + 1] = stop;
  }
}

// x * m + a, one IMAD.
__device__ __forceinline__ unsigned imad(unsigned x, unsigned m, unsigned a) {
  unsigned y;
  asm volatile("mad.lo.u32 %0, %1, %2, %3;" : "=r"(y) : "r"(x), "r"(m), "r"(a));
  return y;
}

// A funnel shift of x by s (a rotate), one SHF.
__device__ __forceinline__ unsigned rotate(unsigned x, unsigned s) {
  unsigned y;
  asm volatile("shf.l.wrap.b32 %0, %1, %1, %2;" : "=r"(y) : "r"(x), "r"(s));
  return y;
}

// (x ^ a) & b, one LOP3.
__device__ __forceinline__ unsigned logic(unsigned x, unsigned a, unsigned b) {
  unsigned y;
  asm volatile("lop3.b32 %0, %1, %2, %3, 0x28;" : "=r"(y) : "r"(x), "r"(a), "r"(b));
  return y;
}

// x + a, one IADD3.
__device__ __forceinline__ unsigned add(unsigned x, unsigned a) {
  unsigned y;
  asm volatile("add.u32 %0, %1, %2;" : "=r"(y) : "r"(x), "r"(a));
  return y;
}

// One chain of 16 IMAD per iteration.
extern "C" __global__ void imadDependent(unsigned long long* clocks, unsigned* sink, int iterations, unsigned m, unsigned a) {
  unsigned x = threadIdx.x;
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
        x = imad(x, m, a);
      }
    }
    stop = clock64();
  }
  sink[blockIdx.x * blockDim.x + threadIdx.x] = x;
  recordClocks(clocks, start, stop);
}

// One chain of 16 funnel shifts per iteration.
extern "C" __global__ void shiftDependent(unsigned long long* clocks, unsigned* sink, int iterations, unsigned s) {
  unsigned x = threadIdx.x * 0x9e3779b9u;
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
        x = rotate(x, s);
      }
    }
    stop = clock64();
  }
  sink[blockIdx.x * blockDim.x + threadIdx.x] = x;
  recordClocks(clocks, start, stop);
}

// One chain of 16 LOP3 per iteration.
extern "C" __global__ void logicDependent(unsigned long long* clocks, unsigned* sink, int iterations, unsigned a, unsigned b) {
  unsigned x = threadIdx.x * 0x9e3779b9u;
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
        x = logic(x, a, b);
      }
    }
    stop = clock64();
  }
  sink[blockIdx.x * blockDim.x + threadIdx.x] = x;
  recordClocks(clocks, start, stop);
}

// One chain of 4 rounds of IMAD, SHF, LOP3, IADD3 per iteration (16 operations).
extern "C" __global__ void mixDependent(unsigned long long* clocks, unsigned* sink, int iterations, unsigned m, unsigned a, unsigned s) {
  unsigned x = threadIdx.x;
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
        x = imad(x, m, a);
        x = rotate(x, s);
        x = logic(x, a, m);
        x = add(x, a);
      }
    }
    stop = clock64();
  }
  sink[blockIdx.x * blockDim.x + threadIdx.x] = x;
  recordClocks(clocks, start, stop);
}

// Eight independent chains of IMAD, SHF, LOP3, IADD3 (32 operations per iteration).
extern "C" __global__ void mixIndependent(unsigned long long* clocks, unsigned* sink, int iterations, unsigned m, unsigned a, unsigned s) {
  unsigned x[8];
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    x[j] = threadIdx.x + j;
  }
  long long start = 0;
  long long stop = 0;
#pragma unroll 1
  for (int round = 0; round < 2; ++round) {
    __syncthreads();
    start = clock64();
#pragma unroll 1
    for (int i = 0; i < iterations; ++i) {
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        x[j] = imad(x[j], m, a);
      }
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        x[j] = rotate(x[j], s);
      }
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        x[j] = logic(x[j], a, m);
      }
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        x[j] = add(x[j], a);
      }
    }
    stop = clock64();
  }
  unsigned sum = 0;
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    sum += x[j];
  }
  sink[blockIdx.x * blockDim.x + threadIdx.x] = sum;
  recordClocks(clocks, start, stop);
}
